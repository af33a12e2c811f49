#!/usr/bin/env bash
# Load-balancing benchmark (paper Fig. 4-6 and 8), measured side by side in one run:
# 2 ranks bound to cores 0 and 1 (dsmrun --bind), the paper's artificial load (dsm-load: a
# tight loop writing 10240 longs) on core 1. For matmul and Jacobi (pass-compiled) it prints
# the time with no load, with load and no balancing (--lb static), with load and balancing
# (--lb POLICY, default auto), the ideal (no-load time x 2 / 1.5), balanced/ideal (paper:
# 1.09 matmul, 1.20 Jacobi), and the balancer's overhead without load (POLICY vs static;
# paper: under 6 %). Each figure is the median of REPS runs (default 3).
# Usage: scripts/bench-balance.sh [BUILD_DIR]   env: REPS, POLICY, APPS ("matmul jacobi"),
#        MATMUL_ARGS, JACOBI_ARGS (problem sizes); DSM_LB_* options pass through to the ranks.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
reps=${REPS:-3}
policy=${POLICY:-auto}
apps=${APPS:-matmul jacobi}
# Long enough that the balancer's warm-up (10 executions of each loop) is a small part.
declare -A args=([matmul]=${MATMUL_ARGS:---n 256 --iters 300} [jacobi]=${JACOBI_ARGS:---n 2050 --iters 500})
dsmrun=$build/bin/dsmrun
load=$build/bin/dsm-load
for tool in "$dsmrun" "$load"; do
  [ -x "$tool" ] || { echo "bench-balance: $tool not found (build first; the _pass apps need DSM_BUILD_PASS=ON)" >&2; exit 2; }
done
[ "$(nproc)" -ge 2 ] || { echo "bench-balance: needs 2 cores" >&2; exit 2; }

load_pid=
stop_load() { [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null && wait "$load_pid" 2>/dev/null; load_pid=; return 0; }
trap stop_load EXIT

# Prints the median run time of: dsmrun -n 2 --bind --lb $1 $2 [args]
median_time() {
  local lb=$1 prog=$2 times=() t
  shift 2
  for ((r = 0; r < reps; r++)); do
    t=$("$dsmrun" -n 2 --bind --timeout 600 --lb "$lb" "$prog" "$@" | awk '$1 == "time" {print $2}')
    [ -n "$t" ] || { echo "bench-balance: $prog printed no time" >&2; exit 1; }
    times+=("$t")
  done
  printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'
}

printf '%-7s %9s %9s %9s %9s %9s %14s %9s\n' app noload static+L "$policy+L" ideal static0 balanced/ideal overhead
for app in $apps; do
  prog=$build/bin/${app}_pass
  [ -x "$prog" ] || { echo "bench-balance: $prog not found (configure with -DDSM_BUILD_PASS=ON)" >&2; exit 2; }
  # shellcheck disable=SC2086
  "$dsmrun" -n 2 --bind --lb "$policy" "$prog" ${args[$app]} --check >/dev/null ||
    { echo "bench-balance: $app result differs from the sequential one" >&2; exit 1; }
  noload=$(median_time "$policy" "$prog" ${args[$app]})
  static0=$(median_time static "$prog" ${args[$app]})
  "$load" --core 1 & load_pid=$!
  sleep 0.5
  static_l=$(median_time static "$prog" ${args[$app]})
  bal_l=$(median_time "$policy" "$prog" ${args[$app]})
  stop_load
  awk -v app="$app" -v n="$noload" -v s0="$static0" -v sl="$static_l" -v bl="$bal_l" 'BEGIN {
    ideal = n * 2 / 1.5
    printf "%-7s %9.3f %9.3f %9.3f %9.3f %9.3f %14.3f %8.1f%%\n", app, n, sl, bl, ideal, s0, bl / ideal, (n / s0 - 1) * 100
  }'
done
