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
  start_daemon munged munged --force --socket="$state/munge/munge.socket" --key-file="$state/munge/munge.key" \
    --pid-file="$state/munged.pid" --seed-file="$state/munge/munged.seed" --log-file="$state/log/munged.log"
  start_daemon slurmctld slurmctld -f "$SLURM_CONF"
  start_daemon slurmd slurmd -f "$SLURM_CONF"
  # The node is idle once slurmd has registered with the controller. A
  # daemon that dies meanwhile (a port taken, no cgroup filesystem) ends
  # the wait at once, with its error.
  local deadline=$((SECONDS + 60))
  while [ $SECONDS -lt $deadline ]; do
    for daemon in slurmctld slurmd; do
      if ! alive "$state/$daemon.pid"; then
        echo "local-slurm: $daemon stopped while the node was coming up" >&2
        log_tail "$daemon"
        exit 1
      fi
    done
    if [ "$(timeout 5 sinfo -h -n "$host" -o %T 2> /dev/null)" = idle ]; then
      echo "local-slurm: up, node $host idle with $cpus CPUs; export SLURM_CONF=$SLURM_CONF"
      return
    fi
    sleep 1
  done
  echo "local-slurm: the node did not come up within 60 s" >&2
  timeout 5 sinfo >&2 || true
  for daemon in slurmctld slurmd; do log_tail "$daemon"; done
  exit 1
}

# The last lines of a daemon's log, on standard error.
log_tail() {
  local log="$state/log/$1.log"
  [ -s "$log" ] || return 0
  echo "local-slurm: the end of $log:" >&2
  tail -n 8 "$log" | sed 's/^/  /' >&2
}

# Starts a daemon (it forks and writes its pid file) unless it runs
# already. One that fails to start, or dies right after, is named with its
# own error and its log's last lines, and `up` ends with status 1.
start_daemon() {
  local name=$1
  shift
  alive "$state/$name.pid" && return 0
  # Its own output goes to a file: a daemon's child may keep a pipe open.
  local out status=0
  "$@" > "$state/log/$name.start" 2>&1 < /dev/null || status=$?
  out=$(head -c 2000 "$state/log/$name.start")
  if [ "$status" -ne 0 ]; then
    echo "local-slurm: $name did not start (exit status $status)${out:+: $out}" >&2
    log_tail "$name"
    exit 1
  fi
  for _ in $(seq 1 40); do
    alive "$state/$name.pid" && return 0
    sleep 0.25
  done
  echo "local-slurm: $name exited right after starting${out:+: $out}" >&2
  log_tail "$name"
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
