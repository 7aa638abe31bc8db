#!/usr/bin/env bash
# ultima bots on a fixture run directory: `bots add --from-run` picks the
# models nearest the Elos wanted from generations.csv and writes bot files
# (network bots on the Eigen backend) that list, show, play a match under
# their names, appear in UCI's Bot option and are rated by
# `ladder --catalogue` into a versioned bots.json. Bad input is refused by
# name.
# Usage: bots_test.sh ULTIMA CONFIGS_DIR
set -euo pipefail
ultima=$1
configs=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export ULTIMA_BOTS="$work/bots"

# The fixture: the untrained model as three "generations" with made-up Elos.
"$ultima" init --run-dir "$work/run" --config "$configs/tiny.yaml" > /dev/null
for n in 1 2 3; do cp "$work/run/models/model-000000.unn" "$work/run/models/model-00000$n.unn"; done
cat > "$work/run/generations.csv" <<'CSV'
generation,model,best,elo,elo_low,elo_high
1,1,1,150.0,100.0,200.0
2,2,2,,,
3,3,3,700.4,600.0,800.9
CSV

out=$("$ultima" bots add --from-run "$work/run" --elo 100,650,900 --playouts 4 --prefix tiny) || fail "bots add failed: $out"
[[ -f $work/bots/tiny-m1.yaml && -f $work/bots/tiny-m3.yaml ]] || fail "bot files missing: $(ls "$work/bots")"
[[ ! -f $work/bots/tiny-m2.yaml ]] || fail "model 2 has no Elo and was picked"
grep -q "model 3 again" <<< "$out" || fail "the repeated pick was not reported: $out"
grep -q '^elo: 700$' "$work/bots/tiny-m3.yaml" || fail "Elo not written: $(cat "$work/bots/tiny-m3.yaml")"
grep -q '^elo_low: 600$' "$work/bots/tiny-m3.yaml" || fail "interval not written"
grep -q '^elo_high: 801$' "$work/bots/tiny-m3.yaml" || fail "interval not rounded outwards"
# The mate scan as the run's evaluation games had it (tiny.yaml: off), so
# the bot plays as it was rated.
grep -q 'model-000001.unn,playouts=4,mate_scan=false,mate_scan_root=false,backend=eigen' "$work/bots/tiny-m1.yaml" ||
  fail "spec: $(cat "$work/bots/tiny-m1.yaml")"

list=$("$ultima" bots list)
grep -q '^tiny-m1 .*150 \[100, 200\] .*network' <<< "$list" || fail "list: $list"
grep -q '^novice ' <<< "$list" || fail "levels missing from the list: $list"
# Ordered by Elo among the levels: tiny-m1 (150) before novice, tiny-m3 (700) after it.
[[ $(grep -n '^tiny-m1 ' <<< "$list" | cut -d: -f1) -lt $(grep -n '^novice ' <<< "$list" | cut -d: -f1) ]] ||
  fail "tiny-m1 is not below novice: $list"
[[ $(grep -n '^tiny-m3 ' <<< "$list" | cut -d: -f1) -gt $(grep -n '^novice ' <<< "$list" | cut -d: -f1) ]] ||
  fail "tiny-m3 is not above novice: $list"
# (Outputs are read whole before grep: grep -q stops reading at its match,
# and under pipefail the writer's broken pipe would fail the line.)
shown=$("$ultima" bots show tiny-m3)
grep -q "^spec: .*model-000003.unn" <<< "$shown" || fail "show: $shown"

# A bot is a player spec: it plays under its name.
"$ultima" match --player1 tiny-m1 --player2 bot:novice --games 2 --pgn "$work/g.pgn" > /dev/null || fail "match"
grep -q '"tiny-m1"' "$work/g.pgn" || fail "the record does not name the bot"
options=$(printf 'uci\nquit\n' | "$ultima" uci)
grep -q '^option name Bot type combo .* var tiny-m1' <<< "$options" || fail "UCI Bot option: $options"

# --copy: the networks go beside the bot files and are named relative to
# them, so the folder plays after a move (the run directory gone too).
"$ultima" bots add --from-run "$work/run" --elo 700 --playouts 4 --prefix ship --dir "$work/ship" --copy > /dev/null ||
  fail "bots add --copy"
[[ -f $work/ship/nets/ship-m3.unn ]] || fail "the network was not copied: $(ls -R "$work/ship")"
cmp -s "$work/ship/nets/ship-m3.unn" "$work/run/models/model-000003.unn" || fail "the copy differs from the model"
grep -q '^spec: "mcts:weights=nets/ship-m3.unn,playouts=4,mate_scan=false,mate_scan_root=false,backend=eigen"$' "$work/ship/ship-m3.yaml" ||
  fail "spec: $(cat "$work/ship/ship-m3.yaml")"
mv "$work/ship" "$work/moved"
mv "$work/run" "$work/run-gone"
(cd / && ULTIMA_BOTS="$work/moved" "$ultima" match --player1 ship-m3 --player2 random --games 2 > "$work/moved.txt" 2>&1) ||
  fail "a moved bot folder does not play: $(cat "$work/moved.txt")"
mv "$work/run-gone" "$work/run"

# The shipped network bots each play a game from a moved copy of configs/,
# whatever the folder the program runs in.
cp -r "$configs" "$work/configs-copy"
mv "$work/configs-copy" "$work/configs-moved"
for f in $(grep -l '^spec: "mcts:weights=' "$work/configs-moved"/bots/*.yaml); do
  b=$(basename "$f" .yaml)
  (cd / && ULTIMA_BOTS="$work/configs-moved/bots" "$ultima" match --player1 "$b" --player2 random --games 2 \
    --max-plies 60 > "$work/shipped.txt" 2>&1) || fail "shipped bot $b does not play: $(cat "$work/shipped.txt")"
  grep -q "$b" "$work/shipped.txt" || fail "shipped bot $b: no result line: $(cat "$work/shipped.txt")"
  shipped=$((${shipped:-0} + 1))
done
[[ ${shipped:-0} -ge 5 ]] || fail "$shipped shipped network bots in $configs/bots, expected at least 5"

# The catalogue ladder: a versioned bots.json, Elo written back.
"$ultima" ladder --catalogue --only tiny-m1 --games 2 --out "$work/bots.json" --write-elo > "$work/ladder.txt" 2>&1 ||
  fail "ladder: $(cat "$work/ladder.txt")"
python3 - "$work/bots.json" <<'PY' || fail "bots.json: $(cat "$work/bots.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["version"] == 1 and r["anchor"] == "random", r
[b] = r["bots"]
assert b["name"] == "tiny-m1" and b["games"] == 2 and b["vs"] == "random", b
assert b["style_stats"]["games"] == 2, b
PY
grep -q "elo_low:" "$work/bots/tiny-m1.yaml" || fail "--write-elo wrote no interval"

# Refusals, each naming the problem.
expect_error() {
  local want=$1; shift
  local out
  out=$("$ultima" "$@" 2>&1) && fail "accepted: $*"
  grep -qF -- "$want" <<< "$out" || fail "for '$*' expected '$want', got: $out"
}
expect_error "a bot named 'tiny-m1' exists" bots add --from-run "$work/run" --elo 100 --prefix tiny
"$ultima" bots add --from-run "$work/run" --elo 100 --prefix tiny --force > /dev/null || fail "--force did not replace"
expect_error "does not exist" bots add --from-run "$work/nothing" --elo 100
mkdir "$work/empty"
expect_error "has no generations.csv" bots add --from-run "$work/empty" --elo 100
expect_error "--elo: 'abc' is not a number" bots add --from-run "$work/run" --elo 100,abc
expect_error "unknown bot 'nobody'" bots show nobody
expect_error "--star needs --from BOT" ladder --catalogue --only tiny-m1 --star --games 2 --out ""
expect_error "--only: unknown bot 'nobody'" ladder --catalogue --only nobody --games 2
expect_error "--only and --from need --catalogue" ladder --only tiny-m1 --games 2
echo "name: tiny-m1" > "$work/bots/tiny-m1.yaml"
expect_error "tiny-m1.yaml: 'description' is missing" bots list
echo PASS
