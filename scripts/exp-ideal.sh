#!/usr/bin/env bash
# Fig. 6 of the paper: with one core loaded, the balanced run against the ideal. On two cores
# with the load taking half of core 1, the machine offers 1.5 cores: ideal = (no-load time at
# 2 ranks) x 2 / 1.5. Writes results/ideal.csv and results/ideal.png, prints the ratios.
source "$(dirname "$0")/exp-lib.sh"
csv=$results/ideal.csv
echo "app,no_load,ideal,balanced,balanced_over_ideal" >"$csv"
for app in matmul jacobi; do
  run "$app" "$version" 2 --lb "$lb"
  t0=$run_time
  load_start 1
  run "$app" "$version" 2 --lb "$lb"
  load_stop
  ideal=$(awk -v t="$t0" 'BEGIN { printf "%.6f", t * 2 / 1.5 }')
  echo "$app,$t0,$ideal,$run_time,$(ratio "$run_time" "$ideal")" >>"$csv"
done
column -s, -t "$csv"
plot ideal
