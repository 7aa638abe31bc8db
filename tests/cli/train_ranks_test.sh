#!/usr/bin/env bash
# Data-parallel training in two processes (ultima train --nproc 2): a run
# whose ranks are killed (SIGKILL, rank 1 once, then rank 0) and started
# again until it finishes exports exactly the model of an uninterrupted
# two-rank run, with one metrics.csv row per logged step; only rank 0
# writes; a launch that cannot work is refused by name.
# Usage: train_ranks_test.sh ULTIMA CONFIGS_DIR
set -euo pipefail
ultima=$1
configs=$2
work=$(mktemp -d)
launcher=""
trap '[ -n "$launcher" ] && pkill -9 -P "$launcher" 2> /dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

until_step=400
"$ultima" init --config "$configs/tiny.yaml" --run-dir "$work/a" > /dev/null
"$ultima" selfplay --run-dir "$work/a" --games 6 --tag w > /dev/null 2>&1
cp -r "$work/a" "$work/b"

echo "== uninterrupted, two ranks"
"$ultima" train --run-dir "$work/a" --nproc 2 --until $until_step > "$work/a.log" 2>&1 ||
  { cat "$work/a.log" >&2; fail "the two-rank run failed"; }
grep -q "rank 1 of 2" "$work/a/logs/train-rank1.log" || fail "rank 1 did not log as rank 1 of 2"
[ -e "$work/a/models/model-000001.unn" ] || fail "no model exported"

# Starts the two-rank run in the background; kills rank $1 (SIGKILL) once
# it has written a checkpoint of its own and is still training, then waits
# for the launcher, which must fail naming the rank.
kill_rank() {
  local rank=$1
  local before
  before=$(ls "$work/b/checkpoints/" 2> /dev/null | tail -1 || true)
  "$ultima" train --run-dir "$work/b" --nproc 2 --until $until_step > "$work/kill$rank.log" 2>&1 &
  launcher=$!
  local ranks=""
  for _ in $(seq 1 600); do
    ranks=$(pgrep -P "$launcher" | sort -n | tr "\n" " " || true)
    local newest
    newest=$(ls "$work/b/checkpoints/" 2> /dev/null | tail -1 || true)
    if [ "$(echo $ranks | wc -w)" = 2 ] && [ -n "$newest" ] && [ "$newest" != "$before" ] &&
      [ "$newest" != "step-$(printf %09d $until_step).ckpt" ]; then
      break
    fi
    sleep 0.05
  done
  local victim
  victim=$(echo $ranks | cut -d' ' -f$((rank + 1)))
  [ -n "$victim" ] || fail "no rank $rank to kill"
  kill -9 "$victim" 2> /dev/null || fail "rank $rank ended before it could be killed"
  local rc=0
  wait "$launcher" || rc=$?
  launcher=""
  [ "$rc" -ne 0 ] || fail "the launcher succeeded though rank $rank was killed"
  grep -q "rank $rank was killed by signal 9" "$work/kill$rank.log" ||
    { cat "$work/kill$rank.log" >&2; fail "the launcher did not name the killed rank $rank"; }
  echo "killed rank $rank at $(ls "$work/b/checkpoints/" | tail -1)"
}

echo "== two ranks, killed and started again"
kill_rank 1
kill_rank 0
"$ultima" train --run-dir "$work/b" --nproc 2 --until $until_step > "$work/b.log" 2>&1 ||
  { cat "$work/b.log" >&2; fail "the resumed run failed"; }
grep -q "resumed from" "$work/b.log" || fail "the last run did not resume from a checkpoint"
cmp -s "$work/a/models/model-000001.unn" "$work/b/models/model-000001.unn" ||
  fail "the model trained with kills differs from the uninterrupted one"
[ ! -e "$work/b/models/model-000002.unn" ] || fail "a second model was exported"
steps_a=$(cut -d, -f2 "$work/a/metrics.csv" | tr '\n' ' ')
steps_b=$(cut -d, -f2 "$work/b/metrics.csv" | tr '\n' ' ')
[ "$steps_a" = "$steps_b" ] || fail "metrics.csv steps differ: [$steps_a] vs [$steps_b]"
echo "model identical; metrics rows: $steps_b"

echo "== launches that cannot work"
out=$("$ultima" train --run-dir "$work/a" --nproc 3 --steps 5 2>&1) && fail "3 ranks of batch 32 were accepted"
echo "$out" | grep -q "batch_size 32 does not split into 3 equal shares" || fail "unclear message: $out"
out=$(WORLD_SIZE=2 "$ultima" train --run-dir "$work/a" --steps 5 2>&1) && fail "WORLD_SIZE without RANK was accepted"
echo "$out" | grep -q "RANK is not set" || fail "unclear message: $out"
out=$(WORLD_SIZE=2 RANK=0 "$ultima" train --run-dir "$work/a" --nproc 2 --steps 5 2>&1) &&
  fail "--nproc inside a launched rank was accepted"
echo "$out" | grep -q "WORLD_SIZE is set" || fail "unclear message: $out"
out=$(WORLD_SIZE=2 RANK=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 ULTIMA_DIST_TIMEOUT=2 \
  "$ultima" train --run-dir "$work/a" --steps 5 2>&1) && fail "a rank without its peers trained"
echo "$out" | grep -q "rendezvous at 127.0.0.1:1" || fail "unclear message: $out"
echo "PASS"
