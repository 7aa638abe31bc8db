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

now() { date +%s.%N; }

# Runs "$@" until it exits 0, killing it with SIGKILL after a random delay
# each time. The delays are shares of `full`, the seconds the same work took
# uninterrupted on this machine, so kills land mid-work on a fast machine
# and a slow one alike; they grow so that it always ends. A kill counts only
# when the process died of it (status 137), and at least one must have:
# otherwise the test would pass without having killed anything.
run_with_kills() {
  local full=$1; shift
  local attempt=0 kills=0
  while :; do
    "$@" > "$work/last.log" 2>&1 &
    local pid=$!
    local delay
    delay=$(awk -v f="$full" -v a="$attempt" -v r="$RANDOM" \
      'BEGIN { printf "%.2f", f * (0.15 + 0.2 * a + 0.3 * (r % 100) / 100.0) }')
    local start; start=$(now)
    while kill -0 "$pid" 2> /dev/null; do
      if awk -v s="$start" -v t="$(now)" -v d="$delay" 'BEGIN { exit !(t - s >= d) }'; then
        kill -9 "$pid" 2> /dev/null || true
        break
      fi
      sleep 0.05
    done
    local rc=0
    wait "$pid" || rc=$?
    if [ "$rc" -eq 0 ]; then
      [ "$kills" -gt 0 ] || fail "finished without being killed once (delay $delay s of $full s)"
      echo "finished after $kills kills"
      return 0
    fi
    [ "$rc" -eq 137 ] || { cat "$work/last.log" >&2; fail "exit status $rc, not a kill"; }
    kills=$((kills + 1))
    attempt=$((attempt + 1))
    [ "$attempt" -lt 40 ] || { cat "$work/last.log" >&2; fail "did not finish in 40 attempts"; }
  done
}

echo "== reference run"
"$ultima" init --config "$work/config.yaml" --run-dir "$work/a" > /dev/null
"$ultima" init --config "$work/config.yaml" --run-dir "$work/b" > /dev/null
t0=$(now)
"$ultima" selfplay --config "$work/config.yaml" --run-dir "$work/a" --games $games --tag w > /dev/null 2>&1
t1=$(now)
"$ultima" train --run-dir "$work/a" --until $until_step > /dev/null 2>&1
t2=$(now)
selfplay_seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
train_seconds=$(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }')

echo "== self-play with kills"
run_with_kills "$selfplay_seconds" "$ultima" selfplay --config "$work/config.yaml" --run-dir "$work/b" --games $games --tag w
a_shards=$(cd "$work/a/selfplay" && ls *.shard)
b_shards=$(cd "$work/b/selfplay" && ls *.shard)
[ "$a_shards" = "$b_shards" ] || fail "shard files differ: [$a_shards] vs [$b_shards]"
for s in $a_shards; do
  cmp -s "$work/a/selfplay/$s" "$work/b/selfplay/$s" || fail "shard $s differs from the uninterrupted run's"
done
echo "shards identical: $(echo $a_shards | wc -w)"

echo "== training with kills"
run_with_kills "$train_seconds" "$ultima" train --run-dir "$work/b" --until $until_step
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

# A damaged newest checkpoint is skipped with a warning naming it and the
# damage, and training resumes from the one before: a size that does not
# match, a flipped byte in the weights (checksum), another architecture, an
# unknown header field.
flip_byte() {  # flip_byte FILE OFFSET_FROM_END
  local size off old
  size=$(stat -c %s "$1"); off=$((size - $2))
  old=$(od -An -tu1 -j "$off" -N1 "$1" | tr -d ' ')
  # shellcheck disable=SC2059
  printf "$(printf '\\%03o' $((255 - old)))" | dd of="$1" bs=1 seek="$off" conv=notrunc status=none
}
damage_case=0
expect_skipped() {  # expect_skipped "message part" DAMAGE_COMMAND...
  local part=$1; shift
  damage_case=$((damage_case + 1))
  local dir="$work/d$damage_case"
  cp -r "$work/a" "$dir"
  local newest older
  newest=$(ls "$dir/checkpoints/"*.ckpt | tail -1)
  older=$(ls "$dir/checkpoints/"*.ckpt | tail -2 | head -1)
  [ "$newest" != "$older" ] || fail "only one checkpoint to fall back on"
  "$@" "$newest"
  "$ultima" train --run-dir "$dir" --until $((until_step + 10)) > "$dir.log" 2>&1 ||
    { cat "$dir.log" >&2; fail "training did not resume past a checkpoint damaged by: $*"; }
  grep -q "skipping checkpoint: $newest: $part" "$dir.log" ||
    { cat "$dir.log" >&2; fail "no warning named the checkpoint damaged by [$*] and [$part]"; }
  grep -q "resumed from $older" "$dir.log" || { cat "$dir.log" >&2; fail "did not resume from $older"; }
}
expect_skipped "truncated checkpoint" sed -i 's/^average_bytes .*/average_bytes 18446744073709551000/'
flip_weight_byte() { flip_byte "$1" 10; }
expect_skipped "checkpoint checksum mismatch" flip_weight_byte
expect_skipped "the checkpoint is of another architecture" sed -i 's/^architecture [0-9]* /architecture 99 /'
expect_skipped "unknown checkpoint field 'frobnicate'" sed -i 's/^\(step [0-9]*\)$/\1\nfrobnicate 3/'
echo "damaged checkpoints are skipped: size, checksum, architecture, unknown field"
echo "PASS"
