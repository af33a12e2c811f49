#!/usr/bin/env bash
# barrier_scale.sh DSMRUN DSM_CHECK SMALL LARGE MAX_MSGS MAX_GROWTH: passes when, with every
# rank writing one word of its own page between barriers (barrier_costs.sh), no rank sends
# more than MAX_MSGS messages per barrier at LARGE ranks, and the busiest rank's bytes per
# barrier grow by at most MAX_GROWTH from SMALL to LARGE ranks. Counts of what the protocol
# sends, not times: the same on a busy machine.
set -uo pipefail
dsmrun=$1 check=$2 small=$3 large=$4 max_msgs=$5 max_growth=$6
costs=$(dirname "$0")/barrier_costs.sh
read -r small_msgs small_bytes _ < <("$costs" "$dsmrun" "$check" "$small") || exit 1
read -r large_msgs large_bytes _ < <("$costs" "$dsmrun" "$check" "$large") || exit 1
if [ -z "${large_bytes:-}" ] || [ -z "${small_bytes:-}" ]; then echo "barrier_scale: a job failed"; exit 1; fi
echo "barrier_scale: $small ranks: $small_msgs messages, $small_bytes bytes per barrier from the busiest rank"
echo "barrier_scale: $large ranks: $large_msgs messages, $large_bytes bytes per barrier from the busiest rank"
awk -v sm="$small_bytes" -v lm="$large_bytes" -v msgs="$large_msgs" -v mm="$max_msgs" -v mg="$max_growth" 'BEGIN {
  if (sm <= 0 || lm <= 0) { print "barrier_scale: no traffic counted"; exit 1 }
  printf "barrier_scale: bytes grew %.1fx\n", lm / sm
  if (msgs > mm) { printf "barrier_scale: more than %d messages per barrier\n", mm; exit 1 }
  if (lm / sm > mg) { printf "barrier_scale: bytes grew more than %gx\n", mg; exit 1 }
  print "barrier_scale ok"
}'
