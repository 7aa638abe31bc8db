#!/usr/bin/env bash
# The Slurm batch scripts of deploy/slurm/, submitted unchanged to a one-node
# Slurm brought up on this machine (deploy/slurm/local-slurm.sh, as root):
# submit-all.sh on the tiny config with a 2-task trainer, a 2-worker array
# and the gatekeeper. Once the trainer has exported two candidates (or after
# SECONDS), every job is cancelled (the trainer stops cleanly on its
# SIGTERM), and the run must hold what a fleet on
# one machine leaves (tests/cli/run_checks.sh): whole, distinct shards, the
# data ratio kept, consecutive versions, gate-passed promotions. Each
# trainer task must have been given the rendezvous (MASTER_ADDR, the job's
# first host; MASTER_PORT, 29500 + job id % 1000) and its own rank
# (SLURM_PROCID 0 and 1 of SLURM_NTASKS 2).
# Both tasks train, as ranks 0 and 1 of one data-parallel group.
#
# Usage: slurm_test.sh ULTIMA CONFIGS_DIR [SECONDS]
# Needs root. scripts/install-deps.sh installs slurm-wlm and munge; run by
# hand where they are missing, it installs them (apt-get, through
# local-slurm.sh); with SLURM_TEST_INSTALL=0 (as ctest runs it) it exits
# 77, skipped, instead.
set -euo pipefail
ultima=$(realpath "$1")
configs=$(realpath "$2")
seconds=${3:-300}
here=$(cd "$(dirname "$0")" && pwd)
slurm="$here/../../deploy/slurm"
[ "$(id -u)" -eq 0 ] || { echo "skipped: a local Slurm needs root"; exit 77; }
if [ "${SLURM_TEST_INSTALL:-1}" = 0 ] && ! command -v slurmctld > /dev/null; then
  echo "skipped: Slurm is not installed (deploy/slurm/local-slurm.sh up DIR installs it)"
  exit 77
fi

work=$(mktemp -d)
state="$work/slurm"
run="$work/run"
cleanup() {
  "$slurm/local-slurm.sh" down "$state" > /dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$run"/logs/*.out "$state"/log/slurmctld.log; do
    [ -f "$f" ] && { echo "== $f" >&2; tail -n 15 "$f" >&2; }
  done
  exit 1
}
# shellcheck source=run_checks.sh
source "$here/run_checks.sh"

# The program as the jobs see it: a wrapper that records each trainer
# task's environment, then runs the program.
mkdir -p "$work/bin"
cat > "$work/bin/ultima" << EOF
#!/usr/bin/env bash
if [ "\$1" = train ]; then
  echo "rank \${SLURM_PROCID:-} of \${SLURM_NTASKS:-} local \${SLURM_LOCALID:-} master \${MASTER_ADDR:-}:\${MASTER_PORT:-} world \${WORLD_SIZE:-unset}" >> "$work/ranks.log"
fi
exec "$ultima" "\$@"
EOF
chmod +x "$work/bin/ultima"

# A daemon that cannot start is named with its own error: slurmctld on a
# port another program holds fails, and `up` says so (its log's last lines)
# instead of returning 1 in silence.
busy_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(); time.sleep(120)' "$busy_port" &
holder=$!
sleep 0.5
set +e
LOCAL_SLURM_PORT=$busy_port timeout 150 "$slurm/local-slurm.sh" up "$work/broken" > "$work/broken.out" 2> "$work/broken.err"
status=$?
set -e
"$slurm/local-slurm.sh" down "$work/broken" > /dev/null 2>&1 || true
kill "$holder" 2> /dev/null || true
[ "$status" -ne 124 ] || fail "local-slurm up on a busy port hung: [$(cat "$work/broken.err")]"
[ "$status" -eq 1 ] || fail "local-slurm up on a busy port: status $status, expected 1"
grep -q "local-slurm: slurmctld\|local-slurm: the end of .*slurmctld.log" "$work/broken.err" ||
  fail "local-slurm up on a busy port did not name slurmctld: [$(cat "$work/broken.err")]"
grep -qi "address already in use\|bind" "$work/broken.err" ||
  fail "local-slurm up on a busy port did not print the daemon's error: [$(cat "$work/broken.err")]"

"$slurm/local-slurm.sh" up "$state"
export SLURM_CONF="$state/slurm.conf"

start=$SECONDS
ULTIMA="$work/bin/ultima" \
  TRAINER_SBATCH="--ntasks-per-node=2" WORKERS_SBATCH="--array=0-1" \
  ULTIMA_TRAIN_ARGS="--export-every 10 --poll-seconds 0.3" \
  ULTIMA_SELFPLAY_ARGS="--games 4" ULTIMA_GATE_ARGS="--poll-seconds 0.3" \
  "$slurm/submit-all.sh" "$run" "$configs/tiny.yaml"
read -r init trainer workers gate < "$run/logs/jobs"

# Until the trainer exported two candidates; every job must keep running.
seen_running=""
while [ ! -f "$run/models/model-000002.unn" ]; do
  [ $((SECONDS - start)) -lt "$seconds" ] || fail "no model 2 after $seconds s"
  states=$(squeue -h -o '%i %j %T' 2> /dev/null || true)
  for job in "$trainer" "${workers}_0" "${workers}_1" "$gate"; do
    case "$states" in
      *"$job "*RUNNING*) case " $seen_running " in *" $job "*) ;; *) seen_running="$seen_running $job" ;; esac ;;
    esac
  done
  # A shell pattern, not `printf | grep -q`: under pipefail that pipeline
  # can fail on a SIGPIPE and report a running job as ended.
  for job in "$trainer" "$gate"; do
    if [ -f "$run/models/model-000000.unn" ]; then
      case $'\n'"$states" in
        *$'\n'"$job "*) ;;
        *) fail "job $job ended: $states" ;;
      esac
    fi
  done
  sleep 2
done
elapsed=$((SECONDS - start))
status=$("$ultima" status --run-dir "$run")
echo "$status"
for tag in "j${workers}_0" "j${workers}_1"; do
  case "$status" in *"$tag"*) ;; *) fail "worker $tag not in the status" ;; esac
done
for job in "$trainer" "${workers}_0" "${workers}_1" "$gate"; do
  case " $seen_running " in *" $job "*) ;; *) fail "job $job never seen running";; esac
done
# The init job succeeded (the others depend on it) and left its output.
grep -q 'model 0 ready' "$run/logs/ultima-init-$init.out" || fail "init job output"

# Cancel (SIGTERM, then SIGKILL after KillWait) and wait for the jobs to go.
scancel "$trainer" "$workers" "$gate"
for _ in $(seq 1 60); do
  [ -z "$(squeue -h)" ] && break
  sleep 1
done
[ -z "$(squeue -h)" ] || fail "jobs still there after cancel: $(squeue -h)"

check_run "$ultima" "$run"
# scancel's SIGTERM reached the trainer, which stopped after a checkpoint.
grep -q "train: stopped at step" "$run/logs/ultima-train-$trainer.out" || fail "the trainer did not stop cleanly"

# The trainer's tasks: ranks 0 and 1 of 2, one rendezvous on the first host.
port=$((29500 + trainer % 1000))
host=$(hostname -s)
for rank in 0 1; do
  grep -qx "rank $rank of 2 local $rank master $host:$port world unset" "$work/ranks.log" \
    || fail "trainer task $rank: $(cat "$work/ranks.log")"
done
[ "$(wc -l < "$work/ranks.log")" = 2 ] || fail "trainer tasks: $(cat "$work/ranks.log")"

# Both tasks trained, as ranks 0 and 1 of one group that met through Slurm's
# variables.
grep -q "rank 0 of 2 (from Slurm)" "$run/logs/train.log" || fail "rank 0 did not train as rank 0 of 2"
grep -q "rank 1 of 2 (from Slurm)" "$run/logs/train-rank1.log" || fail "rank 1 did not train as rank 1 of 2"
echo "PASS: 2 trainer ranks; model 2 after ${elapsed} s; $shards shards, $samples samples, step $step, models 0..$last, best $best"
