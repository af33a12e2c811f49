# The applications at 1 and 2 ranks: sequential, hand-parallelized, pass-compiled.
#
# usage: scripts/bench programs [--short|--full]     (default --short)
# Jacobi, matmul and Shallow: the sequential version, and the hand-parallelized (_hand) and
# pass-compiled (_pass, balancing policy LB) versions at 1 and 2 ranks bound to cores
# (dsmrun --bind), no load. Every run's checksum must equal the sequential one, or it stops
# with an error. Prints each time, its ratio to the sequential time, and each version's
# speed-up from 1 to 2 ranks.
# Environment: BUILD_DIR (default build), LB (default auto).
# shellcheck shell=bash disable=SC2154  # bin, cores, mode, size, run_time...: set by lib.sh
parse_mode "$@"
apps=(jacobi matmul shallow)
need dsmrun
for app in "${apps[@]}"; do need "${app}_seq" "${app}_hand" "${app}_pass"; done

line() { printf '%-8s %-8s %11s %7s %12s %7s %9s\n' "$@"; }
table=()
for app in "${apps[@]}"; do
  run "$app" seq 1
  seq_t=$run_time
  table+=("$(line "$app" seq "$seq_t" 1.000 - - -)")
  for v in hand pass; do
    opts=()
    [ "$v" = hand ] || opts=(--lb "$lb")
    run "$app" "$v" 1 "${opts[@]}"
    t1=$run_time
    run "$app" "$v" 2 "${opts[@]}"
    table+=("$(line "$app" "$v" "$t1" "$(ratio "$t1" "$seq_t")" "$run_time" "$(ratio "$run_time" "$seq_t")" \
      "$(ratio "$t1" "$run_time")")")
  done
done
echo "== programs (--$mode), every checksum equal to the sequential one; pass: --lb $lb"
line app version "1 rank (s)" "x seq" "2 ranks (s)" "x seq" speed-up
printf '%s\n' "${table[@]}"
