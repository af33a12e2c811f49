# Fig. 9 of the paper: Shallow without load, hand-optimized / naive compiler split
# (--lb static) / compiler split with locality-conscious balancing (--lb locality), at 1, 2
# and 4 ranks (4 is oversubscribed on two cores: false sharing still shows in the counts).
# Time, and per rank the messages sent and the modified data sent: diff bytes created plus
# whole pages sent (a page written all over travels whole instead of as a diff), from the
# runtime statistics. Writes shallow.csv (per rank).
# shellcheck shell=bash disable=SC2154  # results, mode, lb, version, run_time...: set by run.sh and lib.sh
make_scratch
json=$scratch/stats.json
csv=$results/shallow.csv
csv_new "$csv" version ranks oversubscribed seconds rank user protocol wait msgs diff_bytes whole_pages data_bytes
for ranks in 1 2 4; do
  for v in hand static locality; do
    case $v in
      hand) run shallow hand "$ranks" --stats-json "$json" ;;
      *) run shallow "$version" "$ranks" --lb "$v" --stats-json "$json" ;;
    esac
    stats_rows "$json" | awk -F, -v pre="$v,$ranks,$(oversubscribed "$ranks"),$run_time" \
      '{printf "%s,%s,%d\n", pre, $0, $6 + $7 * 4096}' >>"$csv"
  done
done
# The paper's claims, side by side at the largest rank count.
awk -F, '$2 == 4 {t[$1] = $4; m[$1] += $9; d[$1] += $12}
  END {printf "4 ranks: locality/hand time %.3f, messages %.3f; static/hand data bytes %.2f\n",
       t["locality"] / t["hand"], m["locality"] / (m["hand"] ? m["hand"] : 1), d["static"] / (d["hand"] ? d["hand"] : 1)}' "$csv"
