#!/usr/bin/env bash
# A one-node Slurm cluster on loopback, for tests and for trying the sweep's
# job array (scripts/sweep_slurm.sbatch) on one machine:
#
#   scripts/slurm_local.sh start DIR     # munged + slurmctld + slurmd, then
#                                        # prints `export SLURM_CONF=DIR/slurm.conf`
#   SLURM_CONF=DIR/slurm.conf sbatch --wait --array=0-2 scripts/sweep_slurm.sbatch ...
#   scripts/slurm_local.sh status DIR    # sinfo; exit 0 when the node is up
#   scripts/slurm_local.sh stop DIR      # stops the daemons, keeps DIR
#
# Needs Debian's slurm-wlm (22.05) and munge (apt-get install -y slurm-wlm
# munge) and root (slurmd starts jobs as their user). Everything lives in
# DIR: its own munge key and socket, slurm.conf, state, spool, logs; the
# ports are free ports on 127.0.0.1 (fresh ones again when another process
# took one before a daemon bound it); nothing in /etc is changed, so it can
# run beside a real Slurm or another copy of itself.
#
# Container-safe: no cgroup plugin anywhere (proctrack/linuxproc, task/none,
# no accounting, no job-accounting gather), and the node's CPUs and memory
# are declared (SlurmdParameters=config_overrides) instead of probed.
#
# A watchdog stops the cluster when the process that started it exits
# (SLURM_LOCAL_OWNER, default the caller's parent: the test or the shell),
# when DIR disappears, or after SLURM_LOCAL_TTL seconds (default 1800), so a
# killed test never leaves daemons behind.
#
# Environment: SLURM_LOCAL_CPUS (default 12: three tasks of the sbatch
# file's 4 CPUs at once), SLURM_LOCAL_OWNER, SLURM_LOCAL_TTL.
set -euo pipefail

usage() {
    echo "usage: slurm_local.sh start|stop|status DIR" >&2
    exit 2
}
[[ $# -eq 2 ]] || usage
cmd=$1
dir=$2

sbin() {
    local b
    for b in "$(command -v "$1" 2>/dev/null || true)" "/usr/sbin/$1" "/usr/bin/$1"; do
        [[ -n $b && -x $b ]] && { echo "$b"; return 0; }
    done
    echo "slurm_local.sh: $1 not found (apt-get install -y slurm-wlm munge)" >&2
    exit 3
}

free_port() {
    python3 - <<'EOF' 2>/dev/null || echo $((20000 + RANDOM % 20000))
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
EOF
}

# Kill the pid in FILE (if it is still the process we started) and wait.
stop_pidfile() {
    local f=$1 pid i
    [[ -f $f ]] || return 0
    pid=$(cat "$f" 2>/dev/null || true)
    [[ $pid =~ ^[0-9]+$ ]] || return 0
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for i in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$f"
}

do_stop() {
    # Jobs first (their steps are children of slurmstepd), then the daemons.
    if [[ -f $dir/slurm.conf && -f $dir/slurmctld.pid ]]; then
        SLURM_CONF=$dir/slurm.conf timeout 10 scancel --quiet --user="$(id -un)" 2>/dev/null || true
    fi
    stop_pidfile "$dir/slurmd.pid"
    stop_pidfile "$dir/slurmctld.pid"
    stop_pidfile "$dir/munged.pid"
    # The watchdog last (unless it is the one calling).
    if [[ -f $dir/watchdog.pid && $(cat "$dir/watchdog.pid" 2>/dev/null) != "${SLURM_LOCAL_SELF:-}" ]]; then
        stop_pidfile "$dir/watchdog.pid"
    fi
    rm -f "$dir/watchdog.pid"
}

do_status() {
    [[ -f $dir/slurm.conf ]] || { echo "no cluster in $dir" >&2; return 1; }
    local state
    state=$(SLURM_CONF=$dir/slurm.conf timeout 10 sinfo -h -N -o '%T' 2>/dev/null | head -n 1 || true)
    echo "node: ${state:-unreachable}"
    [[ $state == idle* || $state == mixed* || $state == allocated* || $state == completing* ]]
}

watchdog() {
    local owner=$1 ttl=$2 start
    start=$(date +%s)
    while :; do
        sleep 1
        if ! kill -0 "$owner" 2>/dev/null || [[ ! -d $dir ]] || (($(date +%s) - start > ttl)); then
            SLURM_LOCAL_SELF=$BASHPID do_stop >/dev/null 2>&1 || true
            exit 0
        fi
    done
}

do_start() {
    [[ $(id -u) -eq 0 ]] || { echo "slurm_local.sh: start needs root (slurmd runs jobs as their user)" >&2; exit 3; }
    local munged slurmctld slurmd mungekey
    munged=$(sbin munged)
    slurmctld=$(sbin slurmctld)
    slurmd=$(sbin slurmd)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [[ -f $dir/slurmctld.pid ]] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
        echo "slurm_local.sh: a cluster is already running in $dir (stop it first)" >&2
        exit 1
    fi
    mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
    chmod 700 "$dir/munge"
    # munge: a private key and socket.
    if [[ ! -s $dir/munge/munge.key ]]; then
        head -c 1024 /dev/urandom >"$dir/munge/munge.key"
    fi
    chmod 400 "$dir/munge/munge.key"
    "$munged" --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" \
        --pid-file="$dir/munged.pid" --log-file="$dir/log/munged.log" \
        --seed-file="$dir/munge/munged.seed" 2>>"$dir/log/munged.log"
    for _ in $(seq 1 50); do [[ -S $dir/munge/munge.sock ]] && break; sleep 0.1; done
    [[ -S $dir/munge/munge.sock ]] || { echo "slurm_local.sh: munged did not start (see $dir/log/munged.log)" >&2; do_stop; exit 1; }

    local host cpus user attempt
    host=$(hostname -s)
    cpus=${SLURM_LOCAL_CPUS:-12}
    user=$(id -un)
    export SLURM_CONF=$dir/slurm.conf

    # The watchdog: detached, stops everything when the owner goes.
    local owner ttl
    owner=${SLURM_LOCAL_OWNER:-$PPID}
    ttl=${SLURM_LOCAL_TTL:-1800}
    (
        trap '' HUP
        exec </dev/null >/dev/null 2>&1
        echo "$BASHPID" >"$dir/watchdog.pid"
        watchdog "$owner" "$ttl"
    ) &
    disown || true

    # The daemons must be told their ports: a port free a moment ago may be
    # taken (by another test, another cluster) before the daemon binds it.
    # The daemon then logs "Address already in use" and exits: start both
    # again on fresh ports, a bounded number of times.
    local rc
    for attempt in 1 2 3 4 5 6; do
        rc=0
        start_daemons "$host" "$cpus" "$user" || rc=$?
        if [[ $rc == 0 ]]; then
            echo "export SLURM_CONF=$dir/slurm.conf"
            return 0
        fi
        [[ $rc == 2 ]] || break
        echo "slurm_local.sh: a port was taken before the daemons bound it (attempt $attempt); trying fresh ports" >&2
        stop_pidfile "$dir/slurmd.pid"
        stop_pidfile "$dir/slurmctld.pid"
    done
    echo "slurm_local.sh: the node did not come up; logs in $dir/log:" >&2
    tail -n 20 "$dir"/log/*.log "$dir"/log/*.err >&2 2>/dev/null || true
    do_stop
    exit 1
}

# Write slurm.conf with fresh ports, start slurmctld and slurmd, and wait
# for the node (up to 120 s: a loaded machine): 0 when it is up, 2 when a
# daemon could not bind its port, 1 when it did not come up in time.
start_daemons() {
    local host=$1 cpus=$2 user=$3 ctl_port d_port i
    ctl_port=$(free_port)
    d_port=$(free_port)
    while [[ $d_port == "$ctl_port" ]]; do d_port=$(free_port); done
    # This attempt's logs only (an earlier attempt's "in use" is no news).
    rm -f "$dir/log/slurmctld.log" "$dir/log/slurmd.log" "$dir/log/slurmctld.err" "$dir/log/slurmd.err"
    cat >"$dir/slurm.conf" <<EOF
# Written by scripts/slurm_local.sh: a one-node cluster on 127.0.0.1.
ClusterName=usimlocal
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctl_port
SlurmdPort=$d_port
SlurmUser=$user
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
MessageTimeout=30
SlurmctldTimeout=60
SlurmdTimeout=120
InactiveLimit=0
KillWait=5
MinJobAge=300
MaxArraySize=1001
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=4096 State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
    # -i: ignore the state of an earlier run in DIR.
    "$slurmctld" -i -f "$dir/slurm.conf" 2>>"$dir/log/slurmctld.err"
    "$slurmd" -f "$dir/slurm.conf" -N "$host" 2>>"$dir/log/slurmd.err"
    for i in $(seq 1 240); do
        if do_status >/dev/null 2>&1; then
            return 0
        fi
        if cat "$dir/log/slurmctld.log" "$dir/log/slurmd.log" "$dir/log/slurmctld.err" \
            "$dir/log/slurmd.err" 2>/dev/null | grep -qi "address already in use"; then
            return 2
        fi
        sleep 0.5
    done
    return 1
}

case $cmd in
start) do_start ;;
stop)
    [[ -d $dir ]] || exit 0
    dir=$(cd "$dir" && pwd)
    do_stop
    ;;
status)
    dir=$(cd "$dir" && pwd)
    do_status
    ;;
*) usage ;;
esac
