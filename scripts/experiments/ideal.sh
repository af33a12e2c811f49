# Fig. 6 of the paper: with one core loaded, the balanced run against the ideal. On two cores
# with the load taking half of core 1, the machine offers 1.5 cores: ideal = (no-load time at
# 2 ranks) x 2 / 1.5. Writes ideal.csv.
# shellcheck shell=bash disable=SC2154  # results, mode, lb, version, run_time...: set by run.sh and lib.sh
csv=$results/ideal.csv
csv_new "$csv" app no_load ideal balanced balanced_over_ideal
for app in matmul jacobi; do
  run "$app" "$version" 2 --lb "$lb"
  t0=$run_time
  load_start 1
  run "$app" "$version" 2 --lb "$lb"
  load_stop
  ideal=$(awk -v t="$t0" 'BEGIN { printf "%.6f", t * 2 / 1.5 }')
  csv_row "$csv" "$app" "$t0" "$ideal" "$run_time" "$(ratio "$run_time" "$ideal")"
done
