#!/usr/bin/env bash
# pipeline_leaves.sh DSMRUN DSM_LOAD SEQ HAND SECONDS: the pipelined Gauss-Seidel (HAND) on
# 2 bound ranks with the artificial load on core 1 for its first SECONDS (0: all along).
# Passes when --stats shows that a rank left the pipeline, the rows at the end are rank 0's
# alone under a load all along and both ranks' when it stopped (the rank came back), and the
# checksum is the sequential one (SEQ).
set -uo pipefail
dsmrun=$1 load=$2 seq=$3 hand=$4 seconds=$5
"$(dirname "$0")/skip_if_busy.sh" || exit $?
args=(--n 1200 --iters 800)
want=$("$seq" "${args[@]}" | awk '$1 == "checksum" {print $2}')
"$load" --core 1 --seconds "$seconds" &
load_pid=$!
trap 'kill "$load_pid" 2>/dev/null' EXIT
out=$("$dsmrun" -n 2 --bind --timeout 100 --stats "$hand" "${args[@]}") || { echo "$out"; echo "pipeline_leaves: the run failed"; exit 1; }
grep -E '^checksum|rows by rank|left the pipeline' <<<"$out"
got=$(awk '$1 == "checksum" {print $2}' <<<"$out")
if [ -z "$want" ] || [ "$want" != "$got" ]; then echo "pipeline_leaves: checksum $got, sequential $want"; exit 1; fi
grep -q 'a rank left the pipeline [1-9]' <<<"$out" || { echo "pipeline_leaves: no rank left"; exit 1; }
read -r r0 r1 < <(awk '/rows by rank:/ {print $4, $5}' <<<"$out")
if [ "$seconds" = 0 ]; then
  [ "${r1:-x}" = 0 ] || { echo "pipeline_leaves: rank 1 kept $r1 rows under the load"; exit 1; }
else
  ((${r0:-0} > 0 && ${r1:-0} > 0)) || { echo "pipeline_leaves: rank 1 did not come back ($r0 $r1 rows)"; exit 1; }
fi
echo "pipeline leaves ok"
