#!/usr/bin/env bash
# Load-balancing benchmark (paper Fig. 4-6 and 8), measured side by side in one run:
# 2 ranks bound to cores 0 and 1 (dsmrun --bind), the paper's artificial load (dsm-load: a
# tight loop writing 10240 longs) on core 1. For matmul and Jacobi (pass-compiled) it prints
# the time with no load, with load and no balancing (--lb static), with load and balancing
# (--lb POLICY, default auto), the ideal (no-load time x 2 / 1.5), balanced/ideal (paper:
# 1.09 matmul, 1.20 Jacobi), and the balancer's overhead without load (POLICY vs static;
# paper: under 6 %). REPS rounds (default 3) each run all four conditions; the times printed
# are medians over the rounds, the two ratios the medians of each round's ratio.
# Usage: scripts/bench-balance.sh [BUILD_DIR]   env: REPS, POLICY, APPS ("matmul jacobi"),
#        MATMUL_ARGS, JACOBI_ARGS (problem sizes); DSM_LB_* options pass through to the ranks.
set -euo pipefail
shopt -s inherit_errexit  # a run that fails inside $(...) stops the script, not a column
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

# Prints the time of one run of: dsmrun -n 2 --bind --lb $1 $2 [args]
run_time() {
  local lb=$1 prog=$2 t
  shift 2
  t=$("$dsmrun" -n 2 --bind --timeout 600 --lb "$lb" "$prog" "$@" | awk '$1 == "time" {print $2}') ||
    { echo "bench-balance: $prog --lb $lb failed" >&2; exit 1; }
  [ -n "$t" ] || { echo "bench-balance: $prog printed no time" >&2; exit 1; }
  echo "$t"
}

# Runs `run_time` for the two policies $1 and $2 in an order that alternates with round $3 (so
# neither always runs first) and prints both times, $1's first; the rest goes to run_time.
run_pair() {
  local a=$1 b=$2 round=$3 ta tb
  shift 3
  if ((round % 2)); then tb=$(run_time "$b" "$@"); ta=$(run_time "$a" "$@")
  else ta=$(run_time "$a" "$@"); tb=$(run_time "$b" "$@"); fi
  echo "$ta $tb"
}

median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
# Over the rounds in `rows` ("noload static0 static_l bal_l" each): the median of column $1,
# and the median of each round's value of the awk expression $1.
rows=()
col() { printf '%s\n' "${rows[@]}" | awk -v c="$1" '{print $c}' | median; }
per_round() { printf '%s\n' "${rows[@]}" | awk "{print $1}" | median; }

printf '%-7s %9s %9s %9s %9s %9s %14s %9s\n' app noload static+L "$policy+L" ideal static0 balanced/ideal overhead
for app in $apps; do
  prog=$build/bin/${app}_pass
  [ -x "$prog" ] || { echo "bench-balance: $prog not found (configure with -DDSM_BUILD_PASS=ON)" >&2; exit 2; }
  # shellcheck disable=SC2086
  "$dsmrun" -n 2 --bind --lb "$policy" "$prog" ${args[$app]} --check >/dev/null ||
    { echo "bench-balance: $app result differs from the sequential one" >&2; exit 1; }
  # Rounds, each measuring all four conditions within seconds of each other: this VM's speed
  # drifts over minutes, and a ratio of two medians taken minutes apart carries that drift.
  rows=()
  for ((r = 0; r < reps; r++)); do
    # shellcheck disable=SC2086
    pair=$(run_pair "$policy" static "$r" "$prog" ${args[$app]})
    read -r noload static0 <<<"$pair"
    "$load" --core 1 & load_pid=$!
    sleep 0.5
    # shellcheck disable=SC2086
    pair=$(run_pair "$policy" static "$r" "$prog" ${args[$app]})
    read -r bal_l static_l <<<"$pair"
    stop_load
    rows+=("$noload $static0 $static_l $bal_l")
  done
  # shellcheck disable=SC2016
  awk -v app="$app" -v n="$(col 1)" -v s0="$(col 2)" -v sl="$(col 3)" -v bl="$(col 4)" \
    -v bi="$(per_round '$4 / ($1 * 2 / 1.5)')" -v ov="$(per_round '($1 / $2 - 1) * 100')" 'BEGIN {
    printf "%-7s %9.3f %9.3f %9.3f %9.3f %9.3f %14.3f %8.1f%%\n", app, n, sl, bl, n * 2 / 1.5, s0, bi, ov
  }'
done
