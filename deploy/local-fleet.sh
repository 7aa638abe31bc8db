#!/usr/bin/env bash
# A fleet on one machine, with the commands a cluster runs: one run
# directory, W self-play workers, one trainer in watch mode (R data-parallel
# ranks through `train --nproc R` when R > 1) and one gatekeeper, plus a
# status line every minute. Ctrl-C (or SIGTERM) stops them all cleanly;
# started again on the same directory, they go on.
#
#   deploy/local-fleet.sh RUN_DIR [CONFIG] [WORKERS] [RANKS]
#
# ULTIMA (default build/ultima) names the program.
set -euo pipefail
run=${1:?usage: local-fleet.sh RUN_DIR [CONFIG] [WORKERS] [RANKS]}
config=${2:-}
workers=${3:-2}
ranks=${4:-1}
ultima=${ULTIMA:-build/ultima}
if [ "$ranks" -gt 1 ] && ! "$ultima" train --help | grep -q -- '--nproc'; then
  echo "local-fleet: $ultima trains in one process only (no train --nproc); use RANKS 1" >&2
  exit 1
fi

if [ -f "$run/config.yaml" ]; then
  [ -z "$config" ] || "$ultima" init --run-dir "$run" --config "$config"   # must agree with the run's
else
  "$ultima" init --run-dir "$run" ${config:+--config "$config"}
fi

pids=()
stop() {
  trap - INT TERM
  kill -TERM "${pids[@]}" 2> /dev/null || true
  wait "${pids[@]}" 2> /dev/null || true
  exit 0
}
trap stop INT TERM

for i in $(seq 1 "$workers"); do
  "$ultima" selfplay --run-dir "$run" --tag "$(hostname -s | tr -c 'A-Za-z0-9_\n' _)_w$i" --watch &
  pids+=($!)
done
if [ "$ranks" -gt 1 ]; then
  "$ultima" train --run-dir "$run" --watch --nproc "$ranks" & pids+=($!)
else
  "$ultima" train --run-dir "$run" --watch & pids+=($!)
fi
"$ultima" gate --run-dir "$run" --watch & pids+=($!)

while sleep 60; do "$ultima" status --run-dir "$run" || true; done
