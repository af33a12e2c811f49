# Dynamic load: the artificial load on core 1 switches on and off (half of each period on),
# with periods of 2, 6 and 20 s (short mode: 2 s); Jacobi at 2 ranks under each balancing
# policy, every iteration's duration traced, so that the plot shows how fast each policy
# follows a change. Writes dynamic.csv (total time per period and policy, and its ratio to
# static) and dynamic-trace.csv (per iteration).
# shellcheck shell=bash disable=SC2154  # results, mode, lb, version, run_time...: set by run.sh and lib.sh
if [ "$mode" = full ]; then
  periods=(2 6 20) policies=(static shift multi fgdls auto) cycles=4
else
  periods=(2) policies=(static auto) cycles=2
fi
n=$(awk '{print $2}' <<<"${size[jacobi]}")
csv=$results/dynamic.csv
trace=$results/dynamic-trace.csv
csv_new "$csv" period policy seconds over_static
csv_new "$trace" period policy iter t dt

# Iterations for `cycles` load periods: from the no-load iteration time, and 1.33 times
# slower on average under the load.
size[jacobi]="--n $n --iters 20"
run jacobi "$version" 2 --lb static
per_iter=$(awk -v t="$run_time" 'BEGIN { print t / 20 * 1.33 }')

for period in "${periods[@]}"; do
  iters=$(awk -v p="$period" -v c="$cycles" -v t="$per_iter" 'BEGIN { i = int(p * c / t) + 1; print (i < 20 ? 20 : i) }')
  size[jacobi]="--n $n --iters $iters --trace"
  static_t=
  for policy in "${policies[@]}"; do
    load_start 1 --period "$period" --duty 0.5
    run jacobi "$version" 2 --lb "$policy"
    load_stop
    [ -n "$static_t" ] || static_t=$run_time
    csv_row "$csv" "$period" "$policy" "$run_time" "$(ratio "$run_time" "$static_t")"
    awk -v p="$period" -v pol="$policy" '$1 == "iter" {print p "," pol "," $2 "," $3 "," $4}' <<<"$run_out" >>"$trace"
  done
done
