# Pipelined nests: Gauss-Seidel at 1 and 2 ranks beside OpenMP's doacross, and the grain.
#
# usage: scripts/bench pipeline
# The 9-point Gauss-Seidel (apps/gauss_seidel), N x N, SWEEPS sweeps: sequential, OpenMP
# doacross at 2 threads, gauss_seidel_hand at 1 and 2 ranks bound to cores with the grain
# the pipeline chooses (and the pass-compiled source at 2 ranks, where built), and at 2
# ranks with each fixed grain of GRAINS (DSM_PIPE_GRAIN).
# ROUNDS rounds, every version once per round (interleaved); medians. Every checksum must
# equal the sequential one. Prints the times, the speed-up of 2 ranks over 1 rank, the ratio
# to OpenMP, the grain chosen (rank 0's last sweep) and its time against the best fixed
# grain's. Targets: 2 ranks >= 1.5x 1 rank, faster than OpenMP; chosen within 1.10 of the
# best fixed.
# With LOAD=1, then the same rounds under the artificial load (dsm-load on core 1, rank 1's),
# LOAD_SWEEPS sweeps: 2 ranks balanced (the default) and unbalanced (--lb static), and 1
# rank on core 0.
# Environment: BUILD_DIR (default build), N (2000), SWEEPS (10), ROUNDS (3),
# GRAINS ("50 100 200 400 800 1600"), LOAD (0), LOAD_SWEEPS (40).
# shellcheck shell=bash disable=SC2154  # bin, run_time, run_out...: set by lib.sh
(($# == 0)) || die_setup "usage: scripts/bench pipeline (settings in the environment)"
n=${N:-2000}
sweeps=${SWEEPS:-10}
rounds=${ROUNDS:-3}
read -r -a grains <<<"${GRAINS:-50 100 200 400 800 1600}"
[[ $n =~ ^[1-9][0-9]*$ && $sweeps =~ ^[1-9][0-9]*$ && $rounds =~ ^[1-9][0-9]*$ ]] ||
  die_setup "N, SWEEPS and ROUNDS must be positive integers"
for g in "${grains[@]}"; do [[ $g =~ ^[1-9][0-9]*$ ]] || die_setup "GRAINS must be positive integers"; done
need gauss_seidel_seq gauss_seidel_omp gauss_seidel_hand dsmrun
with_pass=0
[ -x "$bin/gauss_seidel_pass" ] && with_pass=1
size=([gauss_seidel]="--n $n --iters $sweeps --trace")

declare -A times
chosen=()
for ((r = 0; r < rounds; r++)); do
  run gauss_seidel seq 1; times[seq]+=" $run_time"
  run gauss_seidel omp 2; times[omp]+=" $run_time"
  run gauss_seidel hand 1; times[hand1]+=" $run_time"
  run gauss_seidel hand 2; times[hand2]+=" $run_time"
  chosen+=("$(field grain <<<"$run_out")")
  if ((with_pass)); then run gauss_seidel pass 2; times[pass2]+=" $run_time"; fi
  for g in "${grains[@]}"; do
    run gauss_seidel hand 2 --env DSM_PIPE_GRAIN="$g"; times[g$g]+=" $run_time"
  done
done
med() { tr ' ' '\n' <<<"${times[$1]}" | grep . | median; }
seq_t=$(med seq) omp_t=$(med omp) one=$(med hand1) two=$(med hand2)
best_g= best_t=
for g in "${grains[@]}"; do
  t=$(med "g$g")
  if [ -z "$best_t" ] || awk -v a="$t" -v b="$best_t" 'BEGIN { exit !(a < b) }'; then best_t=$t best_g=$g; fi
done
echo "== Gauss-Seidel 9-point ${n}x${n}, $sweeps sweeps, median of $rounds rounds; every checksum equal to the sequential one"
printf '%-28s %10s\n' version "time (s)"
printf '%-28s %10s\n' sequential "$seq_t" "OpenMP doacross, 2 threads" "$omp_t" "DSM pipeline, 1 rank" "$one" \
  "DSM pipeline, 2 ranks" "$two"
((with_pass)) && printf '%-28s %10s\n' "pass-compiled, 2 ranks" "$(med pass2)"
for g in "${grains[@]}"; do printf '%-28s %10s\n' "  2 ranks, grain $g" "$(med "g$g")"; done
echo "speed-up 2 ranks / 1 rank: $(ratio "$one" "$two") (target >= 1.5)"
echo "2 ranks / OpenMP 2 threads: $(ratio "$two" "$omp_t") (target < 1)"
echo "grain chosen (rank 0, each round): ${chosen[*]}; best fixed grain $best_g at $best_t s"
echo "chosen / best fixed: $(ratio "$two" "$best_t") (target <= 1.10)"

[ "${LOAD:-0}" = 1 ] || exit 0
need dsm-load
load_sweeps=${LOAD_SWEEPS:-40}
[[ $load_sweeps =~ ^[1-9][0-9]*$ ]] || die_setup "LOAD_SWEEPS must be a positive integer"
size=([gauss_seidel]="--n $n --iters $load_sweeps --trace")
at_exit load_stop
for ((r = 0; r < rounds; r++)); do
  load_start 1
  run gauss_seidel hand 2; times[load_auto]+=" $run_time"
  run gauss_seidel hand 2 --lb static; times[load_static]+=" $run_time"
  run gauss_seidel hand 1; times[load_one]+=" $run_time"
  load_stop
done
auto_t=$(med load_auto) static_t=$(med load_static) one_t=$(med load_one)
echo "== $load_sweeps sweeps under the artificial load on core 1 (rank 1's), median of $rounds rounds"
printf '%-28s %10s\n' "2 ranks, balanced" "$auto_t" "2 ranks, --lb static" "$static_t" "1 rank (core 0, no load)" "$one_t"
echo "balanced / unbalanced: $(ratio "$auto_t" "$static_t") (target < 1); balanced / 1 rank: $(ratio "$auto_t" "$one_t")"
