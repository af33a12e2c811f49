#!/usr/bin/env bash
# slurm-single-host.sh: runs a command on a real one-node Slurm cluster made on this machine
# for the time of the command: munged, slurmctld and slurmd of Debian's slurm-wlm, with every
# file (key, slurm.conf, state, spool, logs, sockets) in a temporary directory that is removed
# afterwards. Nothing under /etc is changed; the daemons are stopped when the command ends.
#
#   scripts/slurm-single-host.sh [--keep] -- CMD ARGS...
#
# CMD runs with SLURM_CONF pointing at the cluster's slurm.conf, so salloc, sbatch, srun,
# sinfo work as on a cluster; the node is this host (hostname -s) with its nproc CPUs, in
# partition "debug". Installs slurm-wlm and munge (apt-get) when missing.
# Exit: CMD's status; 77 (CTest skip) with "SKIP: why" when Slurm cannot be started here
# (not root, packages not installable, a daemon refuses to start).
# --keep: leave the temporary directory (logs) in place.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
keep=0
while (($#)); do
  case $1 in
    --keep) keep=1; shift ;;
    --) shift; break ;;
    *) die_setup "unknown option $1 (usage: $0 [--keep] -- CMD ARGS...)" ;;
  esac
done
(($#)) || die_setup "no command given (usage: $0 [--keep] -- CMD ARGS...)"

skip() { echo "$script_name: SKIP: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "needs root to run the Slurm daemons"

missing=()
for cmd in munged slurmctld slurmd srun; do command -v "$cmd" >/dev/null || missing=(munge slurm-wlm); done
if ((${#missing[@]})); then
  echo "$script_name: installing ${missing[*]}"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >&2 ||
    skip "cannot install ${missing[*]} with apt-get"
fi

dir=$(mktemp -d /tmp/slurm-single-host.XXXXXX)
pids=()
# shellcheck disable=SC2317  # called on exit
cleanup() {
  # Jobs the command left behind first (slurmstepd and the tasks outlive slurmd), then the
  # daemons: slurmd, the controller, munged.
  if [[ -n ${SLURM_CONF:-} ]] && squeue -h -o %i 2>/dev/null | grep -q .; then
    squeue -h -o %i | xargs -r scancel 2>/dev/null || true
    for _ in $(seq 150); do squeue -h -o %i 2>/dev/null | grep -q . || break; sleep 0.1; done
  fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  if ((keep)); then warn "files kept in $dir"; else rm -rf "$dir"; fi
}
at_exit cleanup

# A daemon that did not come up: show the end of its log and output, then skip.
fail_start() {
  local what=$1 daemon=$2 f
  for f in "$dir/log/$daemon".*; do
    [[ -s $f ]] && { echo "--- last lines of $f:"; tail -n 15 "$f"; } >&2
  done
  skip "$what did not start (its messages are above)"
}
# Two free TCP ports in 20000-59999, so a Slurm already running here (or another test's) is untouched.
free_port() {
  local p
  for _ in $(seq 100); do
    p=$((20000 + RANDOM % 40000))
    ss -Htln "sport = :$p" | grep -q . || { echo "$p"; return; }
  done
  skip "found no free TCP port"
}

mkdir -p "$dir"/{state,spool,log}
chmod 700 "$dir"
mungekey --create --keyfile "$dir/munge.key" >/dev/null 2>&1 ||
  dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
chmod 600 "$dir/munge.key"
munged --foreground --force --key-file "$dir/munge.key" --socket "$dir/munge.socket" \
  --pid-file "$dir/munged.pid" --seed-file "$dir/munge.seed" --log-file "$dir/log/munged.log" 2>>"$dir/log/munged.out" &
pids+=($!)
for _ in $(seq 50); do [[ -S $dir/munge.socket ]] && break; sleep 0.1; done
[[ -S $dir/munge.socket ]] || fail_start munged munged

node=$(hostname -s)
ctld_port=$(free_port)
slurmd_port=$(free_port)
while ((slurmd_port == ctld_port)); do slurmd_port=$(free_port); done
cat >"$dir/slurm.conf" <<EOF
ClusterName=dsmtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
KillWait=5
InactiveLimit=0
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=512 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$dir/slurm.conf

slurmctld -D -i -f "$SLURM_CONF" >>"$dir/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N "$node" -f "$SLURM_CONF" >>"$dir/log/slurmd.out" 2>&1 &
pids+=($!)
state=
for _ in $(seq 60); do
  kill -0 "${pids[1]}" 2>/dev/null || fail_start slurmctld slurmctld
  kill -0 "${pids[2]}" 2>/dev/null || fail_start slurmd slurmd
  state=$(sinfo -h -N -n "$node" -o %t 2>/dev/null || true)
  [[ $state == idle ]] && break
  sleep 0.5
done
[[ $state == idle ]] || fail_start "the node $node (state '${state:-none}' after 30 s)" slurmd
echo "$script_name: node $node idle (slurmctld port $ctld_port, slurmd port $slurmd_port, files in $dir)"

set +e
"$@"
rc=$?
set -e
exit $rc
