#!/usr/bin/env bash
# Fig. 9 of the paper: Shallow without load, hand-optimized / naive compiler split
# (--lb static) / compiler split with locality-conscious balancing (--lb locality), at 1, 2
# and 4 ranks (4 is oversubscribed on two cores: false sharing still shows in the counts).
# Time, and per rank the messages sent and diff bytes created, from the runtime statistics.
# Writes results/shallow.csv (per rank) and results/shallow.png.
source "$(dirname "$0")/exp-lib.sh"
csv=$results/shallow.csv
json=$(mktemp)
trap 'load_stop; rm -f "$json"' EXIT
echo "version,ranks,oversubscribed,seconds,rank,user,protocol,wait,msgs,diff_bytes,whole_pages" >"$csv"
for ranks in 1 2 4; do
  for v in hand static locality; do
    case $v in
      hand) run shallow hand "$ranks" --stats-json "$json" ;;
      *) run shallow "$version" "$ranks" --lb "$v" --stats-json "$json" ;;
    esac
    stats_rows "$json" | sed "s/^/$v,$ranks,$(oversubscribed "$ranks"),$run_time,/" >>"$csv"
  done
done
column -s, -t "$csv"
# The paper's claims, side by side at the largest rank count.
awk -F, '$2 == 4 {t[$1] = $4; m[$1] += $9; d[$1] += $10}
  END {printf "4 ranks: locality/hand time %.3f, messages %.3f; static/hand diff bytes %.2f\n",
       t["locality"] / t["hand"], m["locality"] / (m["hand"] ? m["hand"] : 1), d["static"] / (d["hand"] ? d["hand"] : 1)}' "$csv"
plot shallow
