#!/usr/bin/env bash
# take_chunks.sh DSMRUN TAKE_CHUNKS N PROVIDER: with DSM_LB_TAKE=always, the ranks that run on
# take chunks of the loop from the last rank while it is stopped or slow (take_chunks.cpp),
# every row stays exact, and the statistics count the takes of the other ranks.
set -euo pipefail
dsmrun=$1 prog=$2 n=$3 provider=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "take_chunks: $*" >&2; exit 1; }
# The split changes only by what was taken (no warm-up end, no loop alone on one rank).
DSM_LB_TAKE=always DSM_LB_WARMUP=1000000 DSM_LB_SOLO=0 \
  "$dsmrun" -n "$n" --provider "$provider" --timeout 100 --stats-json "$dir/stats.json" "$prog" >"$dir/out" ||
  fail "the job failed: $(cat "$dir/out")"
[ "$(grep -c ': 0 wrong$' "$dir/out")" = "$n" ] || fail "wrong rows: $(cat "$dir/out")"
# Per rank, its line of the statistics: the takes of the ranks but the last.
takes=$(grep -o '"rank": [0-9]*, "counters"\|"takes": [0-9]*' "$dir/stats.json" |
  awk -v last=$((n - 1)) '/counters/ { r = $2 + 0 } /takes/ && r != last { t += $2 } END { print t + 0 }')
[ "$takes" -gt 0 ] || fail "no rank took a chunk from the stopped rank: $(cat "$dir/out")"
echo "take ok: $takes chunks taken"
