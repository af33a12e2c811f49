#!/usr/bin/env bash
# A program under shifting loads, run after run: each run of the pass-compiled test program
# pass_PROG (tests/pass/run/PROG.cpp) on RANKS ranks has, half of the time, an on/off load
# beside it on a random core (dsm-load, period 2-100 ms, duty 10-90 %), so that the ranks
# interleave, the balancer moves rows and ranks take chunks differently every run. Each
# output is compared with the plain build's (every rank runs every loop: the sequential
# result); a differing output is kept in results/stress/. Rare protocol races show here
# that a test run once does not (docs/reliability.md, "Long runs").
#
#   PROG=replicated RANKS=3 RUNS=300 BUILD_DIR=build scripts/stress-loaded.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
prog=${PROG:-replicated}
ranks=${RANKS:-3}
runs=${RUNS:-300}
need dsmrun dsm-load "pass_${prog}" "pass_${prog}_plain"
make_scratch
out_dir=$top/results/stress
mkdir -p "$out_dir"

"$bin/pass_${prog}_plain" >"$scratch/seq.txt"
failures=0
for run in $(seq 1 "$runs"); do
  if [ $((RANDOM % 2)) = 0 ]; then
    load_start $((RANDOM % cores)) --period "0.$(printf '%03d' $((2 + RANDOM % 99)))" --duty "0.$((1 + RANDOM % 9))"
  fi
  rc=0
  "$bin/dsmrun" -n "$ranks" --timeout 120 -- "$bin/pass_${prog}" >"$scratch/par.txt" 2>&1 || rc=$?
  load_stop
  if [ "$rc" != 0 ] || ! cmp -s "$scratch/seq.txt" "$scratch/par.txt"; then
    failures=$((failures + 1))
    cp "$scratch/par.txt" "$out_dir/${prog}.${ranks}.run${run}.txt"
    echo "run $run: differs from the sequential result (exit $rc): $out_dir/${prog}.${ranks}.run${run}.txt"
  fi
done
cp "$scratch/seq.txt" "$out_dir/${prog}.sequential.txt"
echo "stress-loaded: $prog, $ranks ranks, $runs runs, $failures differed"
[ "$failures" = 0 ]
