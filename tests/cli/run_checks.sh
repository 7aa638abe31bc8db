# shellcheck shell=bash
# Checks of a run directory after a fleet ran on it (sourced by
# fleet_test.sh and slurm_test.sh, which define fail): every
# shard whole and no two alike, no more training than train_ratio allows
# (tiny: batch 32, ratio 2), model versions 0..N consecutive with growing
# training steps and at least one candidate, and every promoted model one
# that passed the gate.
# check_run ULTIMA RUN sets shards, samples, step, last (version) and best.
check_run() {
  local ultima=$1 run=$2 status dups f v s previous_step dup version score promoted
  status=$("$ultima" status --run-dir "$run") || fail "ultima status failed"
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
    while IFS=, read -r version _ score _ _ promoted _; do
      if [ "$promoted" = 1 ]; then
        awk -v s="$score" 'BEGIN { exit !(s >= 0.55) }' || fail "model $version promoted at $score"
        best=$version
      fi
    done < <(tail -n +2 "$run/gate.csv")
  fi
  [ "$(cat "$run/models/best")" = "$best" ] || fail "best is $(cat "$run/models/best"), the gate promoted $best"
}
