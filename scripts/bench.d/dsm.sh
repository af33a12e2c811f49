# Memory-layer and protocol costs beside their floors; Jacobi's parallel efficiency.
#
# usage: scripts/bench dsm [--short|--full]     (default --short)
# One run, side by side:
#  1. memory-layer costs beside their references (dsm-bench-mem);
#  2. protocol costs beside the floors the tool measures itself (dsm-bench-protocol,
#     2 and 4 ranks: remote read fault, remote lock acquire, barrier);
#  3. Jacobi 2050x2050 at 2 ranks (--bind, shm) against the sequential version: parallel
#     efficiency of the hand-parallelized and the pass-compiled (--lb static) versions, with
#     OpenMP as the hardware shared-memory reference; and the pass-compiled Jacobi whose row
#     updates are functions the loops call (jacobi_rows.cpp) against the one with the loops
#     written out (the pass reads the callees' bodies for the sections). The pass-compiled
#     versions are left out when the build has none.
# Environment: BUILD_DIR (default build).
# shellcheck shell=bash disable=SC2154  # bin, cores, mode, size, run_time...: set by lib.sh
parse_mode "$@"
need dsmrun dsm-bench-mem dsm-bench-protocol jacobi_seq jacobi_omp jacobi_hand
echo "== memory layer"
"$bin/dsm-bench-mem"
for n in 2 4; do
  echo "== protocol, $n ranks$( ((n > cores)) && echo ' (oversubscribed)')"
  "$bin/dsmrun" -n "$n" --bind --timeout 300 "$bin/dsm-bench-protocol"
done
if [ "$mode" = full ]; then size[jacobi]="--n 2050 --iters 1000"; else size[jacobi]="--n 2050 --iters 200"; fi
echo "== jacobi ${size[jacobi]}, 2 ranks"
run jacobi seq 1; seq_t=$run_time
run jacobi omp 2; omp_t=$run_time
run jacobi hand 2; hand_t=$run_time
pass_t=
[ -x "$bin/jacobi_pass" ] && { run jacobi pass 2 --lb static; pass_t=$run_time; }
rows_t=
[ -x "$bin/jacobi_rows_pass" ] && { run jacobi rows_pass 2 --lb static; rows_t=$run_time; }
eff() { awk -v s="$seq_t" -v t="$1" 'BEGIN { printf "%.3f", s / (2 * t) }'; }
line() { printf '%-28s %10s %12s\n' "$@"; }
line version "time (s)" efficiency
line sequential "$seq_t" 1
line "OpenMP, 2 threads" "$omp_t" "$(eff "$omp_t")"
line "DSM hand, 2 ranks" "$hand_t" "$(eff "$hand_t")"
[ -z "$pass_t" ] || line "DSM pass --lb static" "$pass_t" "$(eff "$pass_t")"
[ -z "$rows_t" ] || line "  the same, rows in calls" "$rows_t" "$(eff "$rows_t")"
echo "DSM hand / OpenMP: $(ratio "$hand_t" "$omp_t")"
if [ -n "$pass_t" ] && [ -n "$rows_t" ]; then
  echo "DSM pass, rows in calls / loops written out: $(ratio "$rows_t" "$pass_t")"
fi
