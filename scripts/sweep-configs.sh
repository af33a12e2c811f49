#!/usr/bin/env bash
# Randomized correctness sweep: the applications under configurations the test suite does
# not enumerate, every run checked against the sequential result (--check). Each run draws
# an application (Jacobi, Jacobi by rows, matmul, Shallow; hand or pass-compiled), a
# problem size and iteration count, 1-4 ranks, a balancing policy, and at random a small
# DSM_GC_BOUND, the tcp provider, --bind, and a balancer made to move work at nearly every
# execution (warm-up 1, threshold 1 %, no evidence wait). With LOAD=1 an on/off load
# (dsm-load, 0.2 s period) runs on CPU 1 meanwhile, so ranges move for real.
# Prints every failing command (rerun it as printed) with the end of its output; exits 1 if
# any run failed.
#
#   SWEEP_SECONDS=600 SWEEP_SEED=7 LOAD=1 BUILD_DIR=build scripts/sweep-configs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${SWEEP_SECONDS:-600}
seed=${SWEEP_SEED:-1}
bin=${BUILD_DIR:-build}/bin
die() { echo "sweep-configs: $*" >&2; exit 2; }
[[ $seconds =~ ^[0-9]+$ ]] || die "SWEEP_SECONDS must be a number of seconds, not '$seconds'"
[[ $seed =~ ^[0-9]+$ ]] || die "SWEEP_SEED must be a non-negative integer, not '$seed'"
apps=(jacobi_pass jacobi_hand jacobi_rows_pass matmul_pass matmul_hand shallow_pass shallow_hand)
for f in dsmrun dsm-load "${apps[@]}"; do
  [ -x "$bin/$f" ] || die "$bin/$f is missing: build first (scripts/setup.sh; the _pass versions need -DDSM_BUILD_PASS=ON)"
done
policies=(static shift multi locality fgdls auto)

load_pid=
trap '[ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null; true' EXIT
if [ "${LOAD:-0}" = 1 ]; then
  "$bin/dsm-load" --core 1 --period 0.2 --duty 0.5 >/dev/null 2>&1 &
  load_pid=$!
fi

RANDOM=$seed
runs=0 failed=0
end=$((SECONDS + seconds))
echo "sweep-configs: ${seconds} s, seed $seed, load ${LOAD:-0}"
while ((SECONDS < end)); do
  app=${apps[RANDOM % ${#apps[@]}]}
  case $app in
    jacobi*) size=(--n $((RANDOM % 700 + 3)) --iters $((RANDOM % 40 + 1))) ;;
    matmul*) size=(--n $((RANDOM % 200 + 3)) --iters $((RANDOM % 5 + 1))) ;;
    shallow*) size=(--n $((RANDOM % 300 + 10)) --iters $((RANDOM % 20 + 1))) ;;
  esac
  opts=(-n $((RANDOM % 4 + 1)) --timeout 120 --lb "${policies[RANDOM % ${#policies[@]}]}")
  ((RANDOM % 3 == 0)) && opts+=(--env DSM_GC_BOUND=$((RANDOM % 512 + 16))K)
  ((RANDOM % 4 == 0)) && opts+=(--provider tcp)
  ((RANDOM % 2 == 0)) && opts+=(--bind)
  ((RANDOM % 2 == 0)) && opts+=(--env DSM_LB_WARMUP=1 --env DSM_LB_EVIDENCE=0 --env DSM_LB_THRESHOLD=0.01)
  cmd=("$bin/dsmrun" "${opts[@]}" -- "$bin/$app" "${size[@]}" --check)
  runs=$((runs + 1))
  if ! out=$("${cmd[@]}" 2>&1); then
    failed=$((failed + 1))
    echo "FAILED: ${cmd[*]}"
    tail -n 5 <<<"$out" | sed 's/^/  /'
  fi
done
echo "sweep-configs: $runs runs, $failed failed"
((failed == 0))
