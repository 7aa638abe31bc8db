#!/usr/bin/env bash
# A fleet on one machine: two self-play workers, a two-rank trainer in watch
# mode (train --nproc 2) and a gatekeeper on one run directory, each killed
# (SIGKILL; for the trainer, one of its ranks) and restarted at random
# moments. In the end: every shard whole and no two alike, no more
# training than train_ratio allows, model
# versions consecutive with growing training steps, and every promoted model
# one that passed the gate.
# Usage: fleet_test.sh ULTIMA CONFIGS_DIR [SECONDS]
set -euo pipefail
ultima=$1
configs=$2
seconds=${3:-40}
work=$(mktemp -d)
declare -A pids=()
stop_all() {
  for name in "${!pids[@]}"; do
    pkill -9 -P "${pids[$name]}" 2> /dev/null || true
    kill -9 "${pids[$name]}" 2> /dev/null || true
  done
}
trap 'stop_all; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# shellcheck source=run_checks.sh
source "$(dirname "$0")/run_checks.sh"

run="$work/run"
# tiny with gating; short self-play rounds so shards keep coming.
"$ultima" init --run-dir "$run" --config "$configs/tiny.yaml" > /dev/null

start() {  # start NAME: (re)starts one member of the fleet
  case "$1" in
    w1|w2) "$ultima" selfplay --run-dir "$run" --tag "$1" --games 4 --watch > "$work/$1.log" 2>&1 & ;;
    trainer) "$ultima" train --run-dir "$run" --nproc 2 --watch --export-every 10 --poll-seconds 0.3 \
               >> "$work/trainer.log" 2>&1 & ;;
    gate) "$ultima" gate --run-dir "$run" --watch --poll-seconds 0.3 > "$work/gate.log" 2>&1 & ;;
  esac
  pids[$1]=$!
}
for name in w1 w2 trainer gate; do start "$name"; done

kills=0
end=$((SECONDS + seconds))
while [ $SECONDS -lt $end ]; do
  sleep "$(awk -v r="$RANDOM" 'BEGIN { printf "%.1f", 1 + (r % 30) / 10 }')"
  names=(w1 w2 trainer gate)
  victim=${names[$((RANDOM % 4))]}
  target=${pids[$victim]}
  if [ "$victim" = trainer ]; then
    # One rank, at random; the launcher then stops the other and fails.
    ranks=($(pgrep -P "$target" || true))
    [ ${#ranks[@]} -eq 0 ] || target=${ranks[$((RANDOM % ${#ranks[@]}))]}
  fi
  kill -9 "$target" 2> /dev/null && kills=$((kills + 1))
  wait "${pids[$victim]}" 2> /dev/null || true
  [ "$victim" != trainer ] || pkill -9 -P "${pids[$victim]}" 2> /dev/null || true
  start "$victim"
done
# A quiet end: every member stops on SIGTERM.
sleep 3
for name in w1 w2 trainer gate; do kill -TERM "${pids[$name]}" 2> /dev/null || true; done
for name in w1 w2 trainer gate; do wait "${pids[$name]}" 2> /dev/null || true; done
pids=()
[ "$kills" -ge 5 ] || fail "only $kills kills"

check_run "$ultima" "$run"
echo "PASS: $kills kills; $shards shards, $samples samples, step $step, models 0..$last, best $best"
