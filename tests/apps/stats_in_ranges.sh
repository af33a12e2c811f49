#!/usr/bin/env bash
# stats_in_ranges.sh DSMRUN PROGRAM [ARGS...]: Jacobi's sweep and its copy (a follower) under
# --stats at 2 ranks and at 1. Passes when every rank of both loops reports a time in its
# ranges above zero, and its time per execution is that time over the loop's executions.
set -uo pipefail
dsmrun=$1
shift
fail() { echo "stats_in_ranges: $*"; exit 1; }
for n in 2 1; do
  out=$("$dsmrun" -n "$n" --stats -- "$@" 2>&1) || { echo "$out"; fail "the run at $n ranks failed"; }
  # Per loop line, its executions; per rank line under it, seconds and ms an execution.
  checked=$(awk -v n="$n" '
    /^loop / { loop = $2; executions = $5; next }
    /^  rank [0-9]+: / && loop != "" {
      if (!match($0, /[0-9.e+-]+ s in (them|its ranges) \([0-9.e+-]+ ms an execution\)/)) next
      text = substr($0, RSTART, RLENGTH)
      seconds = substr(text, 1, index(text, " ") - 1) + 0
      per = substr(text, index(text, "(") + 1) + 0
      if (seconds <= 0) { print "zero " loop; exit }
      if (executions <= 0 || (per - seconds / executions * 1e3) ^ 2 > (0.001 * per) ^ 2) { print "per-execution " loop; exit }
      count[loop]++
    }
    END { for (l in count) if (count[l] == n) ok++; print ok + 0 }' <<<"$out")
  [ "$checked" = 2 ] || { echo "$out"; fail "at $n ranks: $checked loops with every rank's time (want 2)"; }
done
echo "stats in ranges ok"
