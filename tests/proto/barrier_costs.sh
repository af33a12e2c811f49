#!/usr/bin/env bash
# barrier_costs.sh DSMRUN DSM_CHECK RANKS [DSMRUN_ARGS...]: what a barrier costs when every
# rank writes one word of its own page between barriers (dsm_check barrier_notices), as one
# line "MESSAGES BYTES SECONDS": the most messages and bytes any rank sends per barrier, and
# rank 0's seconds per barrier. Per barrier is the difference of a run of LONG (default 160)
# and one of 60 barriers, so that start-up and the final reads drop out. Used by the test
# dsm.barrier_scale and by scripts/bench scale.
set -uo pipefail
dsmrun=$1 check=$2 n=$3
shift 3
long=${LONG:-160}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for rounds in 60 "$long"; do
  out=$("$dsmrun" -n "$n" --timeout 300 --stats "$@" "$check" barrier_notices "$rounds" 2>&1) ||
    { echo "$out" >&2; echo "barrier_costs: the job at $n ranks failed" >&2; exit 1; }
  grep -q "barrier_notices ok" <<<"$out" || { echo "$out" >&2; exit 1; }
  awk '$1 == "msgs_sent" || $1 == "bytes_sent" || $1 == "total_seconds" {
         printf "%s", $1; for (i = 2; i <= NF; ++i) printf " %s", $i; print "" }' <<<"$out" >"$tmp/$rounds"
done
awk -v barriers=$((long - 60)) '
  FNR == NR { a[$1] = $0; next }
  { split(a[$1], x); best = 0
    for (i = 2; i <= NF; ++i) if (($i - x[i]) / barriers > best) best = ($i - x[i]) / barriers
    m[$1] = best; first[$1] = ($2 - x[2]) / barriers }
  END { printf "%.1f %.0f %.6f\n", m["msgs_sent"], m["bytes_sent"], first["total_seconds"] }' "$tmp/60" "$tmp/$long"
