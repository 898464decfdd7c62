#!/usr/bin/env bash
# A one-node Slurm cluster for the launch tests: munged, slurmctld and slurmd on this machine,
# their configuration, state and logs all under DIR.
#   slurm_cluster.sh start DIR   starts it and waits for the node to take jobs; where the daemons
#                                cannot start, writes the reason to DIR/skipped and exits 77
#   slurm_cluster.sh stop DIR    stops the daemons it started (their pid files) and removes DIR
# Jobs then run with SLURM_CONF=DIR/slurm.conf.
set -u
action=$1
dir=$2

stop() {
  local name pid
  for name in slurmd slurmctld munged; do
    [[ -f $dir/$name.pid ]] || continue
    pid=$(cat "$dir/$name.pid")
    [[ -n $pid ]] && kill "$pid" 2> /dev/null
  done
  for name in slurmd slurmctld munged; do
    [[ -f $dir/$name.pid ]] || continue
    pid=$(cat "$dir/$name.pid")
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2> /dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2> /dev/null
  done
}

skip() {
  echo "SKIP: $*"
  echo "$*" > "$dir/skipped"
  stop
  exit 77
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

if [[ $action == stop ]]; then
  stop
  rm -rf "$dir"
  exit 0
fi

if [[ -d $dir ]]; then
  stop
  rm -rf "$dir"
fi
mkdir -p "$dir/state" "$dir/spool" "$dir/tmp"
chmod 700 "$dir"
for tool in munged slurmctld slurmd srun sinfo; do
  command -v "$tool" > /dev/null || skip "$tool is not installed (Debian: slurm-wlm and munge)"
done
[[ $(id -u) -eq 0 ]] || skip "slurmd must run as root to start job steps; run as root"

# munge: a key of this cluster's own, its socket in DIR.
head -c 1024 /dev/urandom > "$dir/munge.key"
chmod 400 "$dir/munge.key"
munged --force --key-file="$dir/munge.key" --socket="$dir/munge.socket" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" \
  < /dev/null > "$dir/munged.out" 2>&1 || skip "munged did not start: $(tail -n 3 "$dir/munged.out" "$dir/munged.log" 2> /dev/null)"

host=$(hostname -s)
# Four CPUs declared whatever the machine has (config_overrides), so 4-rank steps fit.
cat > "$dir/slurm.conf" << CONF
ClusterName=hooptest
# Job ids, and so the ports of steps without PMIx, differ from another such cluster's on this host.
FirstJobId=$((1000 + RANDOM * 16))
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
TmpFS=$dir/tmp
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
NodeName=$host NodeAddr=127.0.0.1 CPUs=4 RealMemory=1000 State=UNKNOWN
PartitionName=hoop Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -c -f "$SLURM_CONF" < /dev/null > "$dir/slurmctld.out" 2>&1 ||
  skip "slurmctld did not start: $(tail -n 3 "$dir/slurmctld.out" "$dir/slurmctld.log" 2> /dev/null)"
slurmd -f "$SLURM_CONF" < /dev/null > "$dir/slurmd.out" 2>&1 ||
  skip "slurmd did not start: $(tail -n 3 "$dir/slurmd.out" "$dir/slurmd.log" 2> /dev/null)"
for _ in $(seq 1 100); do
  state=$(sinfo -h -N -o %t 2> /dev/null | head -n 1)
  [[ $state == idle ]] && break
  sleep 0.1
done
[[ $state == idle ]] || skip "the node did not become idle (state '$state'): $(tail -n 3 "$dir/slurmctld.log" "$dir/slurmd.log" 2> /dev/null)"
# Whether srun --mpi=pmix is possible here: the tests that need it skip without.
srun --mpi=list 2>&1 | grep -q pmix && touch "$dir/has-pmix"
echo "Slurm $(sinfo -V) is up on $host with $(sinfo -h -N -o %c) CPUs; pmix: $([[ -f $dir/has-pmix ]] && echo yes || echo no)"
