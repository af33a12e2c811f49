# Fig. 4-5 of the paper: matmul and Jacobi without load, with the artificial load on one
# core, and with the load and balancing, at 1 and 2 ranks (and 4, oversubscribed on two
# cores, in full mode). Writes load.csv.
# The program is the pass-compiled version: --lb static (the naive compiler split) without
# balancing, --lb $LB (default auto) with it.
# shellcheck shell=bash disable=SC2154  # results, mode, lb, version, run_time...: set by run.sh and lib.sh
ranks_list=(1 2)
[ "$mode" = full ] && ranks_list+=(4)
csv=$results/load.csv
csv_new "$csv" app ranks oversubscribed condition seconds
for app in matmul jacobi; do
  for ranks in "${ranks_list[@]}"; do
    over=$(oversubscribed "$ranks")
    run "$app" "$version" "$ranks" --lb static
    csv_row "$csv" "$app" "$ranks" "$over" none "$run_time"
    load_start "$(load_core "$ranks")"
    run "$app" "$version" "$ranks" --lb static
    csv_row "$csv" "$app" "$ranks" "$over" load "$run_time"
    run "$app" "$version" "$ranks" --lb "$lb"
    csv_row "$csv" "$app" "$ranks" "$over" load+lb "$run_time"
    load_stop
  done
done
