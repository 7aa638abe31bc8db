#!/usr/bin/env bash
# Continuous training (ultima train --watch) on a run that self-play feeds:
# it never trains more than train_ratio samples per sample played, exports
# candidates every N steps with consecutive versions, promotes them when the
# config promotes every candidate, refuses a second trainer, goes on when new
# samples arrive, and stops cleanly on SIGTERM.
# Usage: train_watch_test.sh ULTIMA CONFIGS_DIR
set -euo pipefail
ultima=$1
configs=$2
work=$(mktemp -d)
trainer=""
trap '[ -n "$trainer" ] && kill -9 "$trainer" 2> /dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$work/train.log" ] && tail -20 "$work/train.log" >&2; exit 1; }

# tiny, promoting every candidate: batch 32, train_ratio 2.
sed -e 's/^  promotion: .*/  promotion: continuous/' "$configs/tiny.yaml" > "$work/config.yaml"
run="$work/run"
"$ultima" init --run-dir "$run" --config "$work/config.yaml" > /dev/null
"$ultima" selfplay --run-dir "$run" --games 4 --tag a > /dev/null 2>&1

"$ultima" train --run-dir "$run" --watch --export-every 5 --poll-seconds 0.2 > "$work/train.log" 2>&1 &
trainer=$!

samples() { "$ultima" status --run-dir "$run" | sed -n 's/^samples: \([0-9]*\) .*/\1/p'; }
last_step() { tail -n +2 "$run/metrics.csv" 2> /dev/null | tail -1 | cut -d, -f2; }
allowed() { echo $(( 2 * $(samples) / 32 )); }
# Waits until the trainer waits for data at the allowed step.
wait_for_allowed() {
  local want; want=$(allowed)
  for _ in $(seq 600); do
    grep -q "state=waiting for samples" <("$ultima" status --run-dir "$run") &&
      [ "$(grep -o 'step=[0-9]*' <("$ultima" status --run-dir "$run") | head -1)" = "step=$want" ] && return 0
    kill -0 "$trainer" 2> /dev/null || fail "the trainer died"
    sleep 0.1
  done
  fail "the trainer did not reach step $want"
}
wait_for_allowed
first=$(allowed)
[ "$first" -ge 5 ] || fail "too few samples for a candidate ($first steps allowed)"

expect_error_line=$("$ultima" train --run-dir "$run" --steps 1 2>&1 >/dev/null) && fail "a second trainer was accepted"
case "$expect_error_line" in *"the role trainer"*"is held by pid $trainer"*) ;; *) fail "no clear refusal: [$expect_error_line]";; esac

# More samples: training goes on to the new allowance.
"$ultima" selfplay --run-dir "$run" --games 8 --tag b > /dev/null 2>&1
wait_for_allowed
second=$(allowed)
[ "$second" -gt "$first" ] || fail "new samples allowed no more steps ($first, then $second)"

kill -TERM "$trainer"
wait "$trainer" || fail "the trainer did not exit cleanly on SIGTERM"
trainer=""
grep -q "train: stopped at step $second" "$work/train.log" || fail "no clean stop at step $second"

# Candidates every 5 steps, versions consecutive, each promoted.
expected=$(( second / 5 ))
versions=$(ls "$run/models" | grep -c '^model-.*\.unn$')
[ "$versions" = $(( expected + 1 )) ] || fail "$versions model files, expected model 0 and $expected candidates"
for v in $(seq 1 "$expected"); do
  f=$(printf '%s/models/model-%06d.unn' "$run" "$v")
  [ -e "$f" ] || fail "no candidate $v"
  grep -aq "^training_step $(( v * 5 ))\$" "$f" || fail "candidate $v does not hold step $(( v * 5 ))"
done
[ "$(cat "$run/models/best")" = "$expected" ] || fail "the best model is $(cat "$run/models/best"), not $expected"
[ "$(last_step)" -le "$second" ] || fail "trained past the allowance"
echo "PASS: $second steps on $(samples) samples, $expected candidates"
