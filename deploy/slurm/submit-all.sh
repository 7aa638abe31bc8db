#!/usr/bin/env bash
# Submits a whole run to Slurm: init.sbatch, then, once it succeeded, the
# trainer, the self-play array and the gatekeeper. Prints the job ids and
# keeps them in RUN_DIR/logs/jobs (cancel with `scancel $(cat RUN_DIR/logs/jobs)`).
#
#   deploy/slurm/submit-all.sh RUN_DIR CONFIG
#
# RUN_DIR and CONFIG must be on a filesystem every node sees. Each job's
# output goes to RUN_DIR/logs/. Resources are options of sbatch, per job:
#   INIT_SBATCH      e.g. "--partition=cpu"
#   TRAINER_SBATCH   e.g. "--nodes=2 --ntasks-per-node=4 --gpus-per-node=4 --cpus-per-task=8"
#   WORKERS_SBATCH   e.g. "--array=0-31 --gpus-per-task=1 --cpus-per-task=8"
#   GATE_SBATCH      e.g. "--gpus=1 --cpus-per-task=8"
# and for all of them sbatch's own variables (SBATCH_PARTITION,
# SBATCH_ACCOUNT, SBATCH_TIMELIMIT, ...). The jobs get this shell's
# environment, so ULTIMA, MASTER_PORT, ULTIMA_TAG_PREFIX and
# ULTIMA_{TRAIN,SELFPLAY,GATE}_ARGS reach them (see each script's header).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: submit-all.sh RUN_DIR CONFIG" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
RUN=$(realpath -m "$1")
CONFIG=$(realpath "$2")
export RUN CONFIG
mkdir -p "$RUN/logs"

submit() {  # submit SCRIPT OPTIONS...: prints the job id
  sbatch --parsable "${@:2}" "$here/$1" | cut -d';' -f1
}
# shellcheck disable=SC2086  # the *_SBATCH variables are lists of options
{
  init=$(submit init.sbatch --output="$RUN/logs/%x-%j.out" ${INIT_SBATCH:-})
  after=--dependency=afterok:$init
  trainer=$(submit trainer.sbatch "$after" --output="$RUN/logs/%x-%j.out" ${TRAINER_SBATCH:-})
  workers=$(submit workers.sbatch "$after" --output="$RUN/logs/%x-%A_%a.out" ${WORKERS_SBATCH:-})
  gate=$(submit gate.sbatch "$after" --output="$RUN/logs/%x-%j.out" ${GATE_SBATCH:-})
}
echo "$init $trainer $workers $gate" > "$RUN/logs/jobs"
echo "run $RUN: init $init, trainer $trainer, workers $workers, gate $gate"
