#!/usr/bin/env bash
# Fig. 4-5 of the paper: matmul and Jacobi without load, with the artificial load on one
# core, and with the load and balancing, at 1 and 2 ranks (and 4, oversubscribed on two
# cores, in full mode). Writes results/load.csv and results/load.png.
# The program is the pass-compiled version: --lb static (the naive compiler split) without
# balancing, --lb $LB (default auto) with it.
source "$(dirname "$0")/exp-lib.sh"
ranks_list=(1 2)
[ "$mode" = full ] && ranks_list+=(4)
csv=$results/load.csv
echo "app,ranks,oversubscribed,condition,seconds" >"$csv"
for app in matmul jacobi; do
  for ranks in "${ranks_list[@]}"; do
    core=$(load_core "$ranks")
    run "$app" "$version" "$ranks" --lb static
    echo "$app,$ranks,$(oversubscribed "$ranks"),none,$run_time" >>"$csv"
    load_start "$core"
    run "$app" "$version" "$ranks" --lb static
    echo "$app,$ranks,$(oversubscribed "$ranks"),load,$run_time" >>"$csv"
    run "$app" "$version" "$ranks" --lb "$lb"
    echo "$app,$ranks,$(oversubscribed "$ranks"),load+lb,$run_time" >>"$csv"
    load_stop
  done
done
column -s, -t "$csv"
plot load
