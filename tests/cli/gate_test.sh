#!/usr/bin/env bash
# The gatekeeper outside the loop (ultima gate): candidates a trainer
# exported are judged once each, in order, with the loop's evaluation; a
# candidate is promoted exactly when it passes the gate; a second gatekeeper
# is refused while one works.
# Usage: gate_test.sh ULTIMA CONFIGS_DIR
set -euo pipefail
ultima=$1
configs=$2
work=$(mktemp -d)
gate=""
trap '[ -n "$gate" ] && kill -9 "$gate" 2> /dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

run="$work/run"
"$ultima" init --run-dir "$run" --config "$configs/tiny.yaml" > /dev/null   # gating, gate_score 0.55
"$ultima" selfplay --run-dir "$run" --games 4 > /dev/null 2>&1
"$ultima" train --run-dir "$run" --steps 5 > /dev/null 2>&1
"$ultima" train --run-dir "$run" --steps 5 > /dev/null 2>&1
[ -e "$run/models/model-000002.unn" ] || fail "no second candidate"
[ "$(cat "$run/models/best")" = 0 ] || fail "a candidate was promoted without the gate"

"$ultima" gate --run-dir "$run" 2> "$work/gate.log" || { cat "$work/gate.log"; fail "gate failed"; }
[ "$(tail -n +2 "$run/gate.csv" | cut -d, -f1 | tr '\n' ' ')" = "1 2 " ] || fail "candidates not judged once each, in order"
best=0
while IFS=, read -r version before score _initial _elo promoted _interval; do
  [ "$before" = "$best" ] || fail "candidate $version was judged against $before, not the best $best"
  passed=$(awk -v s="$score" 'BEGIN { print (s >= 0.55) ? 1 : 0 }')
  [ "$promoted" = "$passed" ] || fail "candidate $version scored $score and promoted=$promoted"
  [ "$promoted" = 1 ] && best=$version
done < <(tail -n +2 "$run/gate.csv")
[ "$(cat "$run/models/best")" = "$best" ] || fail "best is $(cat "$run/models/best"), the gate promoted $best"
[ -e "$run/games/eval-gen0001-vs-best.pgn" ] || fail "no game record of the gating match"

"$ultima" gate --run-dir "$run" 2> "$work/again.log" || fail "gate again failed"
grep -q "gate: 0 candidates judged" "$work/again.log" || fail "a candidate was judged twice"

"$ultima" gate --run-dir "$run" --watch --poll-seconds 0.2 > /dev/null 2>&1 &
gate=$!
for _ in $(seq 100); do [ -e "$run/locks/gate.lock" ] && break; sleep 0.1; done
out=$("$ultima" gate --run-dir "$run" 2>&1) && fail "a second gatekeeper was accepted"
case "$out" in *"the role gate"*"is held by pid $gate"*) ;; *) fail "no clear refusal: [$out]";; esac
kill -TERM "$gate"
wait "$gate" || fail "the gatekeeper did not stop cleanly"
gate=""
echo "PASS: best model $best"
