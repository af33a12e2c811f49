#!/usr/bin/env bash
# The first command to try: builds everything (scripts/setup.sh), then Jacobi at 2 ranks
# bound to the two cores, with the artificial load on core 1, without and with balancing,
# and prints the times and ratios: ROUNDS rounds (default 3) of the three conditions back to
# back, medians, each run a few seconds. Then one run with balancing whose load starts and
# stops while it runs, traced (dsmrun --lb-trace), drawn to a PNG whose path it prints.
# Environment: BUILD_DIR, LB, EXP_VERSION (as for the experiments), ROUNDS, ITERS (Jacobi
# iterations a run, default 900), RESULTS_DIR (default results).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
"$top/scripts/setup.sh"
rounds=${ROUNDS:-3} iters=${ITERS:-900}
[[ $rounds =~ ^[1-9][0-9]*$ && $iters =~ ^[1-9][0-9]*$ ]] || die_setup "ROUNDS and ITERS must be positive integers"
results=${RESULTS_DIR:-$top/results}
mkdir -p "$results"
set_mode short
size[jacobi]="--n 2050 --iters $iters"  # the paper's grid: seconds a run
none=() loaded=() balanced=() speedup=()
for ((r = 1; r <= rounds; r++)); do
  echo "round $r of $rounds" >&2
  run jacobi "$version" 2 --lb static
  none+=("$run_time")
  load_start 1
  run jacobi "$version" 2 --lb static
  loaded+=("$run_time")
  run jacobi "$version" 2 --lb "$lb"
  balanced+=("$run_time")
  load_stop
  speedup+=("$(ratio "${loaded[-1]}" "${balanced[-1]}")")
done
med() { printf '%s\n' "$@" | median; }
none_m=$(med "${none[@]}") loaded_m=$(med "${loaded[@]}") balanced_m=$(med "${balanced[@]}")
ideal=$(awk -v t="$none_m" 'BEGIN { printf "%.6f", t * 2 / 1.5 }')

# The picture: balancing while a load comes and goes, a third of the run each.
trace=$results/balance-trace.csv png=$results/balance-trace.png
need dsmrun "jacobi_$version"
# shellcheck disable=SC2086  # the size's options are split on purpose
"$bin/dsmrun" -n 2 --bind --timeout 600 --lb "$lb" --lb-trace "$trace" -- "$bin/jacobi_$version" \
  --n 2050 --iters $((2 * iters)) >/dev/null &
job=$!
third=$(awk -v t="$none_m" 'BEGIN { printf "%.3f", t * 2 / 3 }')
sleep "$third"
on=$(date +%s.%N)
load_start 1
sleep "$(awk -v t="$third" 'BEGIN { print t * 1.5 }')"
off=$(date +%s.%N)
load_stop
wait "$job" || die "the traced run failed"
"$top/scripts/plot-balance.sh" "$trace" "$png" --mark "$on" "load on" --mark "$off" "load off" >/dev/null

cat <<TABLE

Jacobi ${size[jacobi]}, 2 ranks (--bind), artificial load on core 1, medians of $rounds rounds
  no load                          ${none_m} s
  load, no balancing (static)      ${loaded_m} s   load/no-load     $(ratio "$loaded_m" "$none_m")
  load, balancing (--lb $lb)       ${balanced_m} s   balanced/no-load $(ratio "$balanced_m" "$none_m")
  ideal (no-load x 2 / 1.5)        ${ideal} s   balanced/ideal   $(ratio "$balanced_m" "$ideal")
  speed-up from balancing under load, by round: ${speedup[*]}
  speed-up from balancing under load: $(ratio "$loaded_m" "$balanced_m")
  balancing while the load comes and goes: $png (trace: $trace)
TABLE
