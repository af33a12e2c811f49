#!/usr/bin/env bash
# trace_csv.sh DSMRUN LB_ROWS PLOT: dsmrun --lb-trace writes a line per rank for every
# measured execution of the balanced loop, the ranks' iterations adding up to the loop's (and
# those taken from other ranks a part of them);
# scripts/plot-balance.sh draws it to a PNG, and refuses a file that is not a trace.
set -euo pipefail
dsmrun=$1 prog=$2 plot=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "trace_csv: $*" >&2; exit 1; }
"$dsmrun" -n 3 --timeout 100 --lb-trace "$dir/trace.csv" "$prog" --reps 12 >/dev/null
[ "$(head -n 1 "$dir/trace.csv")" = "time,loop,execution,rank,iterations,seconds,period,power,moved,taken" ] ||
  fail "header: $(head -n 1 "$dir/trace.csv")"
# lb_rows runs 12 executions of 256 rows; the figures of the first 11 arrive with the next.
awk -F, 'NR > 1 {
    if ($2 != "lb_rows.cpp:rows") { print "loop " $2; bad = 1 }
    if ($10 !~ /^[0-9]+$/ || $10 + 0 > $5 + 0) { print "taken " $10 " of " $5 " iterations"; bad = 1 }
    rows[$3] += $5; ranks[$3]++ }
  END { for (e = 0; e < 11; ++e) if (rows[e] != 256 || ranks[e] != 3) { print "execution " e ": " rows[e] " rows, " ranks[e] " ranks"; bad = 1 }
        if (length(rows) != 11) { print length(rows) " executions"; bad = 1 }
        exit bad }' "$dir/trace.csv" || fail "unexpected lines in the trace:
$(cat "$dir/trace.csv")"
"$plot" "$dir/trace.csv" "$dir/trace.png" --mark "$(date +%s)" "now" >/dev/null
[ "$(head -c 4 "$dir/trace.png" | tail -c 3)" = PNG ] || fail "no PNG drawn"
echo "time,loop" >"$dir/other.csv"
if "$plot" "$dir/other.csv" "$dir/other.png" 2>"$dir/err"; then fail "a file that is not a trace was drawn"; fi
grep -q "is not a balancer trace" "$dir/err" || fail "no clear message: $(cat "$dir/err")"
echo "trace ok"
