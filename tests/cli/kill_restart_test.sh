#!/usr/bin/env bash
# A self-play worker and a trainer killed (SIGKILL) at random moments and
# started again until they finish must leave exactly what an uninterrupted
# run leaves: the same shard files byte for byte (every sample once, none
# lost, none twice), the same exported model byte for byte (exact resume),
# and one metrics.csv row per logged step.
# Usage: kill_restart_test.sh ULTIMA CONFIGS_DIR
set -euo pipefail
ultima=$1
configs=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The tiny config, one game at a time and no evaluation cache, so that every
# game is a function of its seed: the network's batches are then the same in
# every run (a cached answer, or another batch size, may differ in the last
# bit and steer a search elsewhere).
sed -e 's/^  parallel_games: .*/  parallel_games: 1/' -e 's/^  cache_entries: .*/  cache_entries: 0/' \
  "$configs/tiny.yaml" > "$work/config.yaml"
games=12
until_step=600

fail() { echo "FAIL: $*" >&2; exit 1; }

# Runs "$@" until it exits 0, killing it with SIGKILL after a random delay
# each time (the delays grow so that it always ends).
run_with_kills() {
  local attempt=0 kills=0
  while :; do
    "$@" > "$work/last.log" 2>&1 &
    local pid=$!
    local delay
    delay=$(awk -v a="$attempt" -v r="$RANDOM" 'BEGIN { printf "%.2f", 1.0 + a * 0.7 + (r % 100) / 100.0 }')
    local waited=0
    while kill -0 "$pid" 2> /dev/null; do
      if awk -v w="$waited" -v d="$delay" 'BEGIN { exit !(w >= d) }'; then
        kill -9 "$pid" 2> /dev/null || true
        kills=$((kills + 1))
        break
      fi
      sleep 0.1
      waited=$(awk -v w="$waited" 'BEGIN { print w + 0.1 }')
    done
    if wait "$pid"; then
      echo "finished after $kills kills"
      return 0
    fi
    attempt=$((attempt + 1))
    [ "$attempt" -lt 40 ] || { cat "$work/last.log" >&2; fail "did not finish in 40 attempts"; }
  done
}

echo "== reference run"
"$ultima" init --config "$work/config.yaml" --run-dir "$work/a" > /dev/null
"$ultima" init --config "$work/config.yaml" --run-dir "$work/b" > /dev/null
"$ultima" selfplay --config "$work/config.yaml" --run-dir "$work/a" --games $games --tag w > /dev/null 2>&1
"$ultima" train --run-dir "$work/a" --until $until_step > /dev/null 2>&1

echo "== self-play with kills"
run_with_kills "$ultima" selfplay --config "$work/config.yaml" --run-dir "$work/b" --games $games --tag w
a_shards=$(cd "$work/a/selfplay" && ls *.shard)
b_shards=$(cd "$work/b/selfplay" && ls *.shard)
[ "$a_shards" = "$b_shards" ] || fail "shard files differ: [$a_shards] vs [$b_shards]"
for s in $a_shards; do
  cmp -s "$work/a/selfplay/$s" "$work/b/selfplay/$s" || fail "shard $s differs from the uninterrupted run's"
done
echo "shards identical: $(echo $a_shards | wc -w)"

echo "== training with kills"
run_with_kills "$ultima" train --run-dir "$work/b" --until $until_step
cmp -s "$work/a/models/model-000001.unn" "$work/b/models/model-000001.unn" ||
  fail "the model trained with kills differs from the uninterrupted one"
[ ! -e "$work/b/models/model-000002.unn" ] || fail "a second model was exported"
steps_a=$(cut -d, -f2 "$work/a/metrics.csv" | tr '\n' ' ')
steps_b=$(cut -d, -f2 "$work/b/metrics.csv" | tr '\n' ' ')
[ "$steps_a" = "$steps_b" ] || fail "metrics.csv steps differ: [$steps_a] vs [$steps_b]"
echo "model identical; metrics rows: $steps_b"

# The tiny config exports a moving average of the weights (ema_halflife),
# kept in the checkpoints: the model above is that average, not the
# trainer's own weights, which a run without it exports.
grep -q '^average_bytes ' "$(ls "$work/a/checkpoints/"*.ckpt | tail -1)" ||
  fail "the checkpoint holds no moving average"
mkdir -p "$work/c"
cp -r "$work/a/selfplay" "$work/a/models" "$work/c/"
rm "$work/c/models/model-000001.unn"
sed 's/^  ema_halflife: .*/  ema_halflife: 0/' "$work/a/config.yaml" > "$work/c/config.yaml"
grep -q '^  ema_halflife: 0$' "$work/c/config.yaml" || fail "the run's config has no ema_halflife key"
"$ultima" train --run-dir "$work/c" --until $until_step > /dev/null 2>&1
[ -e "$work/c/models/model-000001.unn" ] || fail "no model without the moving average"
! cmp -s "$work/a/models/model-000001.unn" "$work/c/models/model-000001.unn" ||
  fail "the moving average exported the trainer's own weights"
echo "the moving average differs from the trainer's weights"

# A damaged newest checkpoint (a size that does not match) is skipped with a
# warning naming it, and training resumes from the one before.
cp -r "$work/a" "$work/d"
newest=$(ls "$work/d/checkpoints/"*.ckpt | tail -1)
sed -i 's/^average_bytes .*/average_bytes 18446744073709551000/' "$newest"
"$ultima" train --run-dir "$work/d" --until $((until_step + 10)) > "$work/d.log" 2>&1 ||
  { cat "$work/d.log" >&2; fail "training did not resume past a damaged checkpoint"; }
grep -q "skipping checkpoint: $newest: truncated checkpoint" "$work/d.log" ||
  { cat "$work/d.log" >&2; fail "no warning named the damaged checkpoint"; }
grep -q "resumed from" "$work/d.log" || fail "training did not resume from the older checkpoint"
echo "a damaged checkpoint is skipped"
echo "PASS"
