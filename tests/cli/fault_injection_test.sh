#!/usr/bin/env bash
# Faults of the run directory during self-play and training: a full disk
# (a file size limit, so a write fails with EFBIG as it would with ENOSPC)
# and a read-only folder (a read-only bind mount in a private mount
# namespace; root ignores file modes). Each ends with a clear error naming
# the file, no temporary or half-written file, and a run that goes on
# normally once the fault is gone.
# Usage: fault_injection_test.sh ULTIMA CONFIGS_DIR
set -euo pipefail
ultima=$1
configs=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
run="$work/run"
"$ultima" init --run-dir "$run" --config "$configs/tiny.yaml" > /dev/null

# expect_fault "message part" LIMIT_KB|readonly:FOLDER command...
expect_fault() {
  local part=$1 fault=$2; shift 2
  local rc=0
  if [ "${fault%%:*}" = readonly ]; then
    local folder=${fault#readonly:}
    unshare --mount bash -c 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && shift && exec "$@"' \
      _ "$folder" "$@" > /dev/null 2> "$work/err" || rc=$?
  else
    (trap '' XFSZ; ulimit -f "$fault"; exec "$@") > /dev/null 2> "$work/err" || rc=$?
  fi
  [ "$rc" -ne 0 ] || fail "'$*' did not fail under $fault"
  [ "$rc" -lt 128 ] || fail "'$*' crashed under $fault (exit $rc)"
  grep -q "$part" "$work/err" || { cat "$work/err" >&2; fail "'$*' under $fault: no error naming [$part]"; }
  local left; left=$(find "$run" -name '*.tmp-*')
  [ -z "$left" ] || fail "temporary files left under $fault: $left"
}

# A full disk while self-play writes its first shard.
expect_fault "shard $run/selfplay/sp-m0-000000.shard: cannot write .*File too large" 8 \
  "$ultima" selfplay --run-dir "$run" --games 4
[ -z "$(ls "$run/selfplay")" ] || fail "a shard is visible after a failed write: $(ls "$run/selfplay")"

readonly_works=1
unshare --mount true 2> /dev/null || readonly_works=0
if [ $readonly_works = 1 ]; then
  expect_fault "selfplay/sp-m0-000000.shard: Read-only file system" "readonly:$run/selfplay" \
    "$ultima" selfplay --run-dir "$run" --games 4
  [ -z "$(ls "$run/selfplay")" ] || fail "a shard is visible after a refused write"
else
  echo "skipped: no private mount namespace here, so no read-only folder test"
fi

# The fault gone, self-play writes its shard.
"$ultima" selfplay --run-dir "$run" --games 4 > /dev/null 2>&1 || fail "self-play after the faults failed"
[ -e "$run/selfplay/sp-m0-000000.shard" ] || fail "no shard after the faults"

# A full disk while the trainer writes its first checkpoint (tiny: every 15 steps).
expect_fault "cannot write $run/checkpoints/step-000000015.ckpt: File too large" 100 \
  "$ultima" train --run-dir "$run" --steps 20
[ -z "$(ls "$run/checkpoints")" ] || fail "a checkpoint is visible after a failed write"
if [ $readonly_works = 1 ]; then
  expect_fault "checkpoints/step-000000015.ckpt: Read-only file system" "readonly:$run/checkpoints" \
    "$ultima" train --run-dir "$run" --steps 20
  expect_fault "model-000001.unn: .*Read-only file system" "readonly:$run/models" \
    "$ultima" train --run-dir "$run" --steps 20
  [ ! -e "$run/models/model-000001.unn" ] || fail "a model is visible after a refused write"
fi

# The fault gone, training goes on and exports the next model.
"$ultima" train --run-dir "$run" --steps 20 > /dev/null 2>&1 || fail "training after the faults failed"
[ -e "$run/models/model-000001.unn" ] || fail "no model after the faults"

# A loop that made its run directory and then fails in a generation (a full
# disk at the first checkpoint, after the generation's self-play) keeps the
# directory and what it wrote; once the fault is gone it resumes there.
fresh="$work/fresh"
rc=0
(trap '' XFSZ; ulimit -f 300; exec "$ultima" loop --config "$configs/tiny.yaml" --run-dir "$fresh" --generations 1) \
  > /dev/null 2> "$work/err" || rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || fail "the loop under a full disk exited $rc"
grep -q "checkpoints/step-[0-9]*.ckpt: File too large" "$work/err" || { cat "$work/err" >&2; fail "no error naming the checkpoint"; }
[ -e "$fresh/config.yaml" ] || fail "the failed loop removed its run directory"
shards=$(find "$fresh/selfplay" -name '*.shard' | wc -l)
[ "$shards" -gt 0 ] || fail "the failed loop kept no self-play shard"
[ -z "$(find "$fresh" -name '*.tmp-*')" ] || fail "temporary files left by the failed loop"
"$ultima" loop --run-dir "$fresh" --generations 1 > /dev/null 2> "$work/err" || { cat "$work/err" >&2; fail "the loop did not resume"; }
[ -e "$fresh/models/model-000001.unn" ] || fail "the resumed loop made no model 1"
[ "$(find "$fresh/selfplay" -name 'gen0001-*.shard' | wc -l)" -eq "$shards" ] || fail "the resumed loop played generation 1 again"
echo "PASS"
