#!/usr/bin/env bash
# SIGTERM during the evaluation stage and SIGINT during self-play stop the
# loop cleanly: it ends at the next move (the evaluation's matches too, not
# only after them), exits 0 saying it stopped, leaves no temporary or
# partial file and no row for the unfinished generation; run again, it
# finishes that generation.
# Usage: loop_signal_test.sh ULTIMA CONFIGS_DIR
set -euo pipefail
ultima=$1
configs=$2
work=$(mktemp -d)
pid=
trap '[ -z "$pid" ] || kill -9 "$pid" 2> /dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# One generation of the tiny config, with an evaluation long enough that the
# signal lands in its first match.
sed -e 's/^  games_vs_best: .*/  games_vs_best: 16/' -e 's/^  generations: .*/  generations: 1/' \
  "$configs/tiny.yaml" > "$work/config.yaml"

# Starts the loop, waits for a log line (no deadline: a loop that never gets
# there fails at ctest's timeout), sends the signal and waits for the exit.
signal_at() {  # signal_at SIGNAL "log line part" RUN_DIR
  local sig=$1 part=$2 dir=$3
  "$ultima" loop --config "$work/config.yaml" --run-dir "$dir" > /dev/null 2> "$dir.log" &
  pid=$!
  until grep -q "$part" "$dir.log" 2> /dev/null; do
    kill -0 "$pid" 2> /dev/null || { cat "$dir.log" >&2; fail "the loop ended before [$part]"; }
    sleep 0.05
  done
  kill "-$sig" "$pid"
  local rc=0
  wait "$pid" || rc=$?
  pid=
  [ "$rc" -eq 0 ] || { cat "$dir.log" >&2; fail "$sig: exit status $rc, not 0"; }
  grep -q "stopped on request" "$dir.log" || { cat "$dir.log" >&2; fail "$sig: no 'stopped on request' line"; }
}

# Whole files only: nothing temporary, every shard and model readable, no
# row for the stopped generation.
check_clean() {  # check_clean RUN_DIR
  local dir=$1
  leftovers=$(find "$dir" -name '*.tmp*' | head -3)
  [ -z "$leftovers" ] || fail "temporary files left: $leftovers"
  if [ -e "$dir/generations.csv" ]; then
    [ "$(wc -l < "$dir/generations.csv")" -le 1 ] || fail "a row for the stopped generation"
  fi
}

echo "== SIGTERM during the evaluation"
signal_at TERM "eval: vs best begins" "$work/a"
grep -q "eval: vs best stopped after" "$work/a.log" || { cat "$work/a.log" >&2; fail "the evaluation match did not stop"; }
grep -q "eval: vs novice" "$work/a.log" && fail "the evaluation went on to the next match"
[ -s "$work/a/models/model-000001.unn" ] || fail "the trained candidate is missing"
check_clean "$work/a"
"$ultima" loop --run-dir "$work/a" 2> "$work/a2.log" || { cat "$work/a2.log" >&2; fail "the stopped run did not go on"; }
[ "$(wc -l < "$work/a/generations.csv")" -eq 2 ] || fail "generation 1 was not finished after the stop"
echo "stopped in the evaluation, then finished"

echo "== SIGINT during self-play"
signal_at INT "gen 1 selfplay begins" "$work/b"
grep -q "gen 1 train" "$work/b.log" && fail "training started after SIGINT"
grep -q "eval: vs" "$work/b.log" && fail "the evaluation started after SIGINT"
check_clean "$work/b"
# The shards it kept are whole: the resumed run trains on them.
"$ultima" loop --run-dir "$work/b" 2> "$work/b2.log" || { cat "$work/b2.log" >&2; fail "the stopped run did not go on"; }
[ "$(wc -l < "$work/b/generations.csv")" -eq 2 ] || fail "generation 1 was not finished after the stop"
echo PASS
