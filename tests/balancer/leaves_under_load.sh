#!/usr/bin/env bash
# leaves_under_load.sh DSMRUN DSM_LOAD LB_ROWS: lb_rows on 2 bound ranks with the artificial
# load on core 1 for its first seconds, and any rank slowed by another program on its core
# leaving (DSM_LB_LEAVE=0.99, DSM_LB_LEAVE_SHARE=1: beside one busy loop it keeps half its
# core, which the default counts as a share worth keeping). Passes when the trace shows rank 1 with no rows at some
# execution while the load ran, and with rows again at the end, after it stopped, and the
# product is exact (lb_rows checks it).
set -uo pipefail
dsmrun=$1 load=$2 prog=$3
"$(dirname "$0")/skip_if_busy.sh" || exit $?
dir=$(mktemp -d)
"$load" --core 1 --seconds 2 &
load_pid=$!
trap 'kill "$load_pid" 2>/dev/null; rm -rf "$dir"' EXIT
"$dsmrun" -n 2 --bind --timeout 100 --lb-trace "$dir/trace.csv" --env DSM_LB_WARMUP=2 --env DSM_LB_EVIDENCE=0 \
  --env DSM_LB_LEAVE=0.99 --env DSM_LB_LEAVE_SHARE=1 "$prog" --reps 300 || { echo "leaves_under_load: the run failed"; exit 1; }
awk -F, 'NR > 1 && $4 == 1 { if ($5 == 0) out++; last = $5; if ($9) changes++ }
  END { printf "rank 1: no rows in %d executions, %d rows in the last, %d changes\n", out, last, changes
        exit !(out > 0 && last > 0) }' "$dir/trace.csv" ||
  { echo "leaves_under_load: rank 1 did not leave under the load and come back after it"; exit 1; }
echo "left and came back"
