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

status=$("$ultima" status --run-dir "$run")
case "$status" in *unreadable*) fail "a shard is not whole: $status";; esac
shards=$(ls "$run/selfplay" | grep -c '\.shard$' || true)
[ "$shards" -gt 0 ] || fail "no shards"
# A writer killed mid-write may leave its temporary file: readers ignore it.
# Two workers never play the same games (their tags seed them apart).
dups=$(cd "$run/selfplay" && md5sum *.shard | cut -d' ' -f1 | sort | uniq -d)
[ -z "$dups" ] || fail "two shards hold the same games"

samples=$(printf '%s\n' "$status" | sed -n 's/^samples: \([0-9]*\) .*/\1/p')
step=$(tail -n +2 "$run/metrics.csv" | tail -1 | cut -d, -f2)
[ $((step * 32)) -le $((2 * samples)) ] || fail "trained $step steps of 32 on $samples samples (ratio 2)"

# Versions 0..N without a gap, training steps growing.
last=-1
previous_step=-1
for f in $(ls "$run/models" | grep '^model-.*\.unn$' | sort); do
  v=$((10#$(echo "$f" | sed 's/model-\([0-9]*\)\.unn/\1/')))
  [ "$v" = $((last + 1)) ] || fail "model versions jump from $last to $v"
  s=$(grep -a -m1 '^training_step ' "$run/models/$f" | cut -d' ' -f2)
  [ "$s" -gt "$previous_step" ] || fail "model $v holds step $s, not above $previous_step"
  last=$v
  previous_step=$s
done
[ "$last" -ge 1 ] || fail "no candidate exported"

# Every promotion passed the gate; the best model is the last one promoted.
best=0
if [ -f "$run/gate.csv" ]; then
  dup=$(tail -n +2 "$run/gate.csv" | cut -d, -f1 | sort | uniq -d)
  [ -z "$dup" ] || fail "candidates judged twice: $dup"
  while IFS=, read -r version _before score _initial _elo promoted _interval; do
    if [ "$promoted" = 1 ]; then
      awk -v s="$score" 'BEGIN { exit !(s >= 0.55) }' || fail "model $version promoted at $score"
      best=$version
    fi
  done < <(tail -n +2 "$run/gate.csv")
fi
[ "$(cat "$run/models/best")" = "$best" ] || fail "best is $(cat "$run/models/best"), the gate promoted $best"
echo "PASS: $kills kills; $shards shards, $samples samples, step $step, models 0..$last, best $best"
