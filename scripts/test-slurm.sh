#!/usr/bin/env bash
# test-slurm.sh: dsmrun inside Slurm allocations on a real one-node Slurm cluster made on this
# machine by scripts/slurm-single-host.sh. The ranks start as srun job steps (dsmrun's default
# inside an allocation).
#
#   scripts/test-slurm.sh [--bin DIR] [--jacobi "--n 258 --iters 10"] [--timeout S]
#
# - scripts/dsm-job.sbatch through `sbatch --wait`: jacobi_hand on 2 ranks, checksum equal to
#   jacobi_seq's, and each rank was a job step of its own;
# - under `salloc -n 2`: dsm_check stencil; a rank killed by SIGSEGV, one exiting with status 3,
#   one hung (stopped) until --timeout: dsmrun names the rank, nothing is left behind
#   (tests/net/expect.sh checks); -n 3 is refused with the allocation's size;
# - a running job cancelled with scancel: dsmrun and its ranks end, nothing left behind.
# Exit 0: all passed; 1: a check failed; 77: Slurm cannot be started here (CTest skip).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
here=$top/scripts
self=$here/$(basename "$0")
jacobi_args="--n 258 --iters 10"
timeout=60

while (($#)); do
  case $1 in
    --bin) bin=${2:?}; shift 2 ;;
    --jacobi) jacobi_args=${2:?}; shift 2 ;;
    --timeout) timeout=${2:?}; shift 2 ;;
    # Internal: runs on the cluster made by slurm-single-host.sh.
    --in-cluster) in_cluster=1; shift ;;
    --cancelled-job) cancelled_job=1; shift ;;
    *) die_setup "unknown option $1 (see the header of $0)" ;;
  esac
done
bin=$(cd "$bin" && pwd)
need dsmrun dsm_check jacobi_hand jacobi_seq fault_program
expect=$top/tests/net/expect.sh
export DSMRUN=$bin/dsmrun

# Submits a job that hangs (a stopped rank, no --timeout), cancels it once both ranks run as
# job steps, waits until it has left the queue and prints its output. Run under expect.sh,
# which then looks for leftovers.
if [[ -n ${cancelled_job:-} ]]; then
  make_scratch
  out=$scratch/job.out
  job=$(sbatch --parsable -n 2 -o "$out" "$here/dsm-job.sbatch" "$bin/fault_program" barrier 1 stop)
  for _ in $(seq 100); do
    steps=$(squeue -h -s -j "$job" -o %i | grep -c "^$job\.[0-9]" || true)
    ((steps == 2)) && break
    sleep 0.1
  done
  squeue -s -j "$job"
  scancel "$job"
  for _ in $(seq 300); do squeue -h -j "$job" 2>/dev/null | grep -q . || break; sleep 0.1; done
  squeue -h -j "$job" 2>/dev/null | grep -q . && { echo "job $job still queued 30 s after scancel"; exit 1; }
  echo "job $job cancelled and gone"
  cat "$out"
  exit 0
fi

if [[ -z ${in_cluster:-} ]]; then
  exec "$here/slurm-single-host.sh" -- "$self" --bin "$bin" --jacobi "$jacobi_args" --timeout "$timeout" --in-cluster
fi

fails=0
check() {  # check NAME CMD...: runs CMD, counts a failure
  echo "== $1"
  shift
  "$@" || { echo "FAIL"; fails=$((fails + 1)); }
}

jacobi_job() {
  local want out job
  # shellcheck disable=SC2086  # the app's options are split on purpose
  want=$("$bin/jacobi_seq" $jacobi_args | field checksum)
  make_scratch
  out=$scratch/jacobi.out
  # shellcheck disable=SC2086
  job=$(sbatch --parsable --wait -o "$out" "$here/dsm-job.sbatch" --timeout "$timeout" "$bin/jacobi_hand" $jacobi_args) ||
    { cat "$out"; echo "sbatch --wait: the job failed"; return 1; }
  cat "$out"
  local got steps
  got=$(field checksum <"$out")
  # slurmd logs every step it launches: a rank each, beside the batch step.
  steps=$(grep -c "launch task StepId=$job\.[0-9]" "$(dirname "$SLURM_CONF")/log/slurmd.log" || true)
  echo "job $job: checksum $got (jacobi_seq: $want), $steps job steps"
  [[ -n $want && $got == "$want" ]] || { echo "jacobi_hand under Slurm differs from jacobi_seq"; return 1; }
  ((steps == 2)) || { echo "expected one job step per rank"; return 1; }
}

in_alloc() { salloc --quiet -n 2 "$@"; }
dsmrun=("$bin/dsmrun" -n 2)
check "sbatch dsm-job.sbatch: jacobi_hand on 2 ranks" jacobi_job
check "salloc: dsm_check stencil" in_alloc "$expect" 0 "$timeout" "stencil ok" "${dsmrun[@]}" "$bin/dsm_check" stencil
check "salloc: a rank killed by SIGSEGV" \
  in_alloc "$expect" fail 15 "rank 1 \\(pid [0-9]+\\) killed by signal SIGSEGV on .* \\(srun\\)" \
  "${dsmrun[@]}" "$bin/fault_program" fetch 1 segv
check "salloc: a rank exits with status 3" \
  in_alloc "$expect" fail 15 "rank 1 \\(pid [0-9]+\\) exited with status 3" "${dsmrun[@]}" "$bin/fault_program" barrier 1 exit
check "salloc: a hung rank, --timeout" \
  in_alloc "$expect" fail 15 "exceeded --timeout" "${dsmrun[@]}" --timeout 3 "$bin/fault_program" barrier 1 stop
check "salloc: more ranks than the allocation" \
  in_alloc "$expect" fail 10 "-n 3 is more ranks than this Slurm allocation allows \\(2 tasks on 1 node\\(s\\)\\)" \
  "$bin/dsmrun" -n 3 "$bin/fault_program" ok
check "scancel of a running job" "$expect" 0 40 "job [0-9]+ cancelled and gone" "$self" --bin "$bin" --cancelled-job

if ((fails > 0)); then echo "test-slurm: $fails FAILED"; exit 1; fi
echo "test-slurm: pass"
