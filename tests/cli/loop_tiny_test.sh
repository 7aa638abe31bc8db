#!/usr/bin/env bash
# The tiny config's loop end to end: self-play, training, evaluation and the
# generation table, plot and model versions it leaves; then a resumed run
# that adds a generation, and a config the run directory refuses.
# Usage: loop_tiny_test.sh ULTIMA CONFIGS_DIR
set -euo pipefail
ultima=$1
configs=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$ultima" loop --config "$configs/tiny.yaml" --run-dir "$work/run" 2> "$work/log" || { cat "$work/log"; fail "loop failed"; }
grep -q "gen 3 done" "$work/log" || fail "no progress line for generation 3"
grep -q "ETA" "$work/log" || fail "no ETA in the progress lines"
rows=$(($(wc -l < "$work/run/generations.csv") - 1))
[ "$rows" = 3 ] || fail "generations.csv has $rows rows, not 3"
for f in config.yaml elo.svg loss.svg metrics.csv models/best models/model-000000.unn models/model-000001.unn \
         models/model-000003.unn logs/loop.log; do
  [ -s "$work/run/$f" ] || fail "missing $f"
done
ls "$work/run/selfplay"/gen0001-*.shard > /dev/null || fail "no shards of generation 1"
ls "$work/run/games"/gen0002-*.pgn > /dev/null || fail "no game records of generation 2"
ls "$work/run/games"/eval-gen0002-vs-novice.pgn > /dev/null || fail "no evaluation games vs novice"
grep -q "<polyline" "$work/run/elo.svg" || fail "elo.svg has no curve"
elo=$(tail -1 "$work/run/generations.csv" | awk -F, '{ print $NF }')
[ -n "$elo" ] || fail "generation 3 has no Elo"
# Every generation's row names its model, and the metrics reached its last step.
last_step=$(tail -1 "$work/run/generations.csv" | cut -d, -f6)
tail -1 "$work/run/metrics.csv" | cut -d, -f2 | grep -qx "$last_step" || fail "metrics.csv does not end at step $last_step"

# Resumed with one more generation: the first two are not redone.
"$ultima" loop --run-dir "$work/run" --generations 4 2> "$work/log2" || { cat "$work/log2"; fail "resume failed"; }
grep -q "resuming after generation 3" "$work/log2" || fail "the second run did not resume"
grep -q "gen 1 selfplay" "$work/log2" && fail "generation 1 was played again"
rows=$(($(wc -l < "$work/run/generations.csv") - 1))
[ "$rows" = 4 ] || fail "generations.csv has $rows rows after the resume, not 4"

# Another config on the same directory is refused, naming the problem.
sed -e 's/^  channels: 16/  channels: 24/' "$configs/tiny.yaml" > "$work/other.yaml"
if "$ultima" loop --config "$work/other.yaml" --run-dir "$work/run" 2> "$work/log3"; then fail "another config was accepted"; fi
grep -q "another config" "$work/log3" || { cat "$work/log3"; fail "no clear message for another config"; }
grep -q "these keys differ: network.channels;" "$work/log3" || { cat "$work/log3"; fail "the differing key is not named"; }
# --print-config with --run-dir alone prints that run's config.
"$ultima" loop --run-dir "$work/run" --print-config > "$work/printed.yaml" || fail "--print-config --run-dir failed"
grep -q "^name: tiny" "$work/printed.yaml" || { head "$work/printed.yaml"; fail "--print-config --run-dir did not print the run's config"; }
# --print-config with --config alone prints the file, even where the default
# run directory (runs/main, under the working directory) holds another run.
mkdir -p "$work/cwd/runs" && cp -r "$work/run" "$work/cwd/runs/main"
(cd "$work/cwd" && "$ultima" loop --config "$work/other.yaml" --print-config) > "$work/printed2.yaml" \
  || fail "--print-config --config was checked against runs/main"
grep -q "^  channels: 24" "$work/printed2.yaml" || { head "$work/printed2.yaml"; fail "--print-config --config did not print the file"; }
# A bad key is named.
printf 'name: x\nselfplay:\n  games_per_generaton: 3\n' > "$work/bad.yaml"
if "$ultima" loop --config "$work/bad.yaml" --run-dir "$work/bad" 2> "$work/log4"; then fail "a bad key was accepted"; fi
grep -q "selfplay.games_per_generaton" "$work/log4" || { cat "$work/log4"; fail "the bad key is not named"; }
[ -e "$work/bad" ] && fail "a refused config left a run directory behind"
echo PASS
