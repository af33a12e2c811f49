# Fig. 7 of the paper: where the time goes (user computation / protocol / communication and
# waiting) at 2 ranks without load, with load, and with load and balancing, from the
# runtime's statistics (dsmrun --stats-json), normalized to the no-load run's mean
# accounted time per rank (user + protocol + wait, which covers the whole job, set-up
# included). Writes breakdown.csv (per rank; the plot shows the mean over ranks).
# shellcheck shell=bash disable=SC2154  # results, mode, lb, version, run_time...: set by run.sh and lib.sh
make_scratch
json=$scratch/stats.json
csv=$results/breakdown.csv
csv_new "$csv" app condition rank user protocol wait msgs diff_bytes whole_pages normalized_to
for app in matmul jacobi; do
  base=
  for condition in none load load+lb; do
    policy=static
    [ "$condition" = load+lb ] && policy=$lb
    [ "$condition" = none ] || load_start 1
    run "$app" "$version" 2 --lb "$policy" --stats-json "$json"
    load_stop
    rows=$(stats_rows "$json")
    [ -n "$base" ] || base=$(awk -F, '{t += $2 + $3 + $4} END {printf "%.6f", t / NR}' <<<"$rows")
    sed "s/^/$app,$condition,/; s/\$/,$base/" <<<"$rows" >>"$csv"
  done
done
