#!/usr/bin/env bash
# A one-node Slurm on this machine, for trying the batch scripts of this
# folder unchanged: munged, slurmctld and slurmd as root, everything they
# write (config, munge key and socket, state, spool, logs, pid files) in
# STATE_DIR, nothing in /etc.
#
#   deploy/slurm/local-slurm.sh up STATE_DIR       # install if missing, start, wait for the node
#   deploy/slurm/local-slurm.sh status STATE_DIR   # daemons, sinfo, squeue
#   deploy/slurm/local-slurm.sh down STATE_DIR     # cancel every job, stop the daemons
#
# Slurm's commands find this cluster through SLURM_CONF:
#   export SLURM_CONF=STATE_DIR/slurm.conf
#
# Environment:
#   LOCAL_SLURM_CPUS   CPUs the node announces (default 8, more than a small
#                      machine has, so a trainer, workers and a gatekeeper
#                      fit at once; no task is bound to a core)
#   LOCAL_SLURM_PORT   slurmctld's port; slurmd takes the next (default 6817)
#
# Needs root and Debian's slurm-wlm and munge (installed with apt-get when
# missing). Daemons are stopped by the process ids in their pid files.
set -euo pipefail
usage() { echo "usage: local-slurm.sh up|down|status STATE_DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
action=$1
state=$(realpath -m "$2")
cpus=${LOCAL_SLURM_CPUS:-8}
port=${LOCAL_SLURM_PORT:-6817}
host=$(hostname -s)
export SLURM_CONF="$state/slurm.conf"

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2> /dev/null; }

install_if_missing() {
  if command -v slurmctld > /dev/null && command -v slurmd > /dev/null && command -v munged > /dev/null; then
    return
  fi
  echo "local-slurm: installing slurm-wlm and munge" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge > /dev/null
}

write_config() {
  mkdir -p "$state"/{munge,ctld,spool,log}
  chmod 700 "$state" "$state/munge"
  if [ ! -f "$state/munge/munge.key" ]; then
    head -c 1024 /dev/urandom > "$state/munge/munge.key"
    chmod 400 "$state/munge/munge.key"
  fi
  cat > "$SLURM_CONF" << EOF
# one-node cluster written by deploy/slurm/local-slurm.sh
ClusterName=ultima-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$state/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
KillWait=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

up() {
  [ "$(id -u)" -eq 0 ] || { echo "local-slurm: needs root" >&2; exit 1; }
  install_if_missing
  write_config
  if ! alive "$state/munged.pid"; then
    munged --force --socket="$state/munge/munge.socket" --key-file="$state/munge/munge.key" \
      --pid-file="$state/munged.pid" --seed-file="$state/munge/munged.seed" \
      --log-file="$state/log/munged.log"
  fi
  alive "$state/slurmctld.pid" || slurmctld -f "$SLURM_CONF"
  alive "$state/slurmd.pid" || slurmd -f "$SLURM_CONF"
  # The node is idle once slurmd has registered with the controller.
  for _ in $(seq 1 60); do
    if [ "$(sinfo -h -n "$host" -o %T 2> /dev/null)" = idle ]; then
      echo "local-slurm: up, node $host idle with $cpus CPUs; export SLURM_CONF=$SLURM_CONF"
      return
    fi
    sleep 1
  done
  echo "local-slurm: the node did not come up; logs in $state/log" >&2
  sinfo >&2 || true
  exit 1
}

down() {
  if alive "$state/slurmctld.pid"; then
    scancel --full --partition=local 2> /dev/null || true
    # KillWait (30 s) after SIGTERM each job is killed; wait a little longer.
    for _ in $(seq 1 45); do
      [ -z "$(squeue -h 2> /dev/null)" ] && break
      sleep 1
    done
  fi
  for daemon in slurmd slurmctld munged; do
    if alive "$state/$daemon.pid"; then
      pid=$(cat "$state/$daemon.pid")
      kill -TERM "$pid"
      for _ in $(seq 1 20); do kill -0 "$pid" 2> /dev/null || break; sleep 0.5; done
      kill -0 "$pid" 2> /dev/null && kill -KILL "$pid"
    fi
  done
  echo "local-slurm: down"
}

status() {
  for daemon in munged slurmctld slurmd; do
    if alive "$state/$daemon.pid"; then echo "$daemon: running, pid $(cat "$state/$daemon.pid")"
    else echo "$daemon: not running"; fi
  done
  if alive "$state/slurmctld.pid"; then sinfo; squeue; fi
}

case "$action" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) usage ;;
esac
