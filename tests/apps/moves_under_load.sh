#!/usr/bin/env bash
# moves_under_load.sh DSMRUN DSM_LOAD SEQUENTIAL|--check PROGRAM ARGS...
# Runs the pass-compiled PROGRAM on 2 bound ranks with the paper's load on core 1, balancing
# from the third execution on and without weighing what a move costs (DSM_LB_WARMUP=2,
# DSM_LB_EVIDENCE=0, DSM_LB_COST_BENEFIT=0), and passes when the
# balancer moved iterations at least once and the checksum still equals SEQUENTIAL's (with
# --check instead, when PROGRAM run with --check says "check ok": a result whose sums the
# ranks add in another order).
set -uo pipefail
dsmrun=$1 load=$2 seq=$3 prog=$4
shift 4
if [ "$seq" = --check ]; then
  set -- "$@" --check
else
  want=$("$seq" "$@" | awk '$1 == "checksum" {print $2}')
fi
"$load" --core 1 --seconds 120 &
load_pid=$!
trap 'kill "$load_pid" 2>/dev/null || true' EXIT
out=$("$dsmrun" -n 2 --bind --timeout 100 --stats --env DSM_LB_WARMUP=2 --env DSM_LB_EVIDENCE=0 \
  --env DSM_LB_COST_BENEFIT=0 "$prog" "$@") ||
  { echo "$out"; echo "moves_under_load: the run failed"; exit 1; }
grep '^loop ' <<<"$out"
if [ "$seq" = --check ]; then
  grep '^check' <<<"$out"
  grep -q '^check ok' <<<"$out" || { echo "moves_under_load: the result is not the sequential one"; exit 1; }
else
  got=$(awk '$1 == "checksum" {print $2}' <<<"$out")
  echo "sequential checksum $want, under load with balancing $got"
  [ -n "$want" ] && [ "$want" = "$got" ] || { echo "moves_under_load: checksums differ"; exit 1; }
fi
grep -Eq '^loop .* [1-9][0-9]* redistributions' <<<"$out" || { echo "moves_under_load: no loop was redistributed"; exit 1; }
