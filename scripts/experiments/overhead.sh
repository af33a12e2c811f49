# Fig. 8 of the paper: what the balancing runtime costs when there is nothing to balance.
# The pass-compiled version with balancing against the hand-parallelized one, no load, at 1
# and 2 ranks; both beside the sequential time. Writes overhead.csv.
# shellcheck shell=bash disable=SC2154  # results, mode, lb, version, run_time...: set by run.sh and lib.sh
csv=$results/overhead.csv
csv_new "$csv" app ranks seq hand pass_lb overhead
for app in matmul jacobi; do
  run "$app" seq 1
  seq_t=$run_time
  for ranks in 1 2; do
    run "$app" hand "$ranks"
    hand_t=$run_time
    run "$app" "$version" "$ranks" --lb "$lb"
    csv_row "$csv" "$app" "$ranks" "$seq_t" "$hand_t" "$run_time" "$(ratio "$run_time" "$hand_t")"
  done
done
