# Randomized correctness sweep of the applications over configurations (not timed).
#
# usage: scripts/bench configs     (settings in the environment)
# The applications under configurations the test suite does not enumerate, every run checked
# against the sequential result (--check). Each run draws an application (Jacobi, Jacobi by
# rows, matmul, Shallow; hand or pass-compiled), a problem size and iteration count, 1-4
# ranks, a balancing policy, and at random a small DSM_GC_BOUND, the tcp provider, --bind,
# and a balancer made to move work at nearly every execution (warm-up 1, threshold 1 %, no
# evidence wait). With LOAD=1 an on/off load (dsm-load, 0.2 s period) runs on CPU 1
# meanwhile, so that ranges move for real.
# Prints every failing command (rerun it as printed) with the end of its output; exits 1 if
# any run failed.
#   SWEEP_SECONDS=600 SWEEP_SEED=7 LOAD=1 BUILD_DIR=build scripts/bench configs
# shellcheck shell=bash disable=SC2154  # bin, cores, mode, size, run_time...: set by lib.sh
(($# == 0)) || die_setup "usage: scripts/bench configs (no arguments; settings in the environment)"
seconds=${SWEEP_SECONDS:-600}
seed=${SWEEP_SEED:-1}
[[ $seconds =~ ^[0-9]+$ ]] || die_setup "SWEEP_SECONDS must be a number of seconds, not '$seconds'"
[[ $seed =~ ^[0-9]+$ ]] || die_setup "SWEEP_SEED must be a non-negative integer, not '$seed'"
apps=(jacobi_pass jacobi_hand jacobi_rows_pass matmul_pass matmul_hand shallow_pass shallow_hand)
need dsmrun dsm-load "${apps[@]}"
policies=(static shift multi locality fgdls auto)

[ "${LOAD:-0}" != 1 ] || load_start 1 --period 0.2 --duty 0.5

RANDOM=$seed
runs=0 failed=0
end=$((SECONDS + seconds))
echo "bench configs: ${seconds} s, seed $seed, load ${LOAD:-0}"
while ((SECONDS < end)); do
  app=${apps[RANDOM % ${#apps[@]}]}
  case $app in
    jacobi*) app_size=(--n $((RANDOM % 700 + 3)) --iters $((RANDOM % 40 + 1))) ;;
    matmul*) app_size=(--n $((RANDOM % 200 + 3)) --iters $((RANDOM % 5 + 1))) ;;
    shallow*) app_size=(--n $((RANDOM % 300 + 10)) --iters $((RANDOM % 20 + 1))) ;;
  esac
  opts=(-n $((RANDOM % 4 + 1)) --timeout 120 --lb "${policies[RANDOM % ${#policies[@]}]}")
  ((RANDOM % 3 == 0)) && opts+=(--env DSM_GC_BOUND=$((RANDOM % 512 + 16))K)
  ((RANDOM % 4 == 0)) && opts+=(--provider tcp)
  ((RANDOM % 2 == 0)) && opts+=(--bind)
  ((RANDOM % 2 == 0)) && opts+=(--env DSM_LB_WARMUP=1 --env DSM_LB_EVIDENCE=0 --env DSM_LB_THRESHOLD=0.01)
  cmd=("$bin/dsmrun" "${opts[@]}" -- "$bin/$app" "${app_size[@]}" --check)
  runs=$((runs + 1))
  if ! out=$("${cmd[@]}" 2>&1); then
    failed=$((failed + 1))
    echo "FAILED: ${cmd[*]}"
    tail -n 5 <<<"$out" | sed 's/^/  /'
  fi
done
echo "bench configs: $runs runs, $failed failed"
((failed == 0))
