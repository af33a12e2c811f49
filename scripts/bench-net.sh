#!/usr/bin/env bash
# Benchmark of the message layer beside libfabric's own fi_pingpong, in the same run:
# one-way latency at 64 B and 4 KiB and bandwidth at 1 MiB, for shm and tcp;ofi_rxm.
# Targets: latency within 2x of fi_pingpong, bandwidth at least 0.7x.
# Usage: scripts/bench-net.sh [BUILD_DIR]   (default build/; run scripts/setup.sh first)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${BUILD_DIR:-$top/build}}
dsmrun=$build/bin/dsmrun
exerciser=$build/bin/net_exerciser
[ -x "$dsmrun" ] && [ -x "$exerciser" ] || { echo "bench-net: build first (scripts/setup.sh)" >&2; exit 1; }
command -v fi_pingpong >/dev/null || { echo "bench-net: fi_pingpong missing (libfabric-bin)" >&2; exit 1; }
cases=("64 20000" "4096 10000" "1048576 1000")
port=$((47000 + RANDOM % 2000))

# fi_pingpong SIZE ITERS PROVIDER -> "usec_per_xfer MB_per_s" (its last line)
# Both sides use shm's same protocol: the runtime turns cross-memory attach off unless told
# otherwise (README, Runtime settings).
export FI_SHM_DISABLE_CMA=${FI_SHM_DISABLE_CMA:-1}
fi_pp() {
  local size=$1 iters=$2 prov=$3 out
  port=$((port + 1))
  fi_pingpong -p "$prov" -e rdm -I "$iters" -S "$size" -B $port >/dev/null 2>&1 &
  local server=$!
  sleep 0.3
  out=$(timeout 120 fi_pingpong -p "$prov" -e rdm -I "$iters" -S "$size" -P $port 127.0.0.1 | tail -1)
  wait $server || true
  awk '{print $7, $6}' <<<"$out"
}

# ours MODE SIZE ITERS PROVIDER -> "usec_per_xfer MB_per_s"
#   pingpong: a handler answers each ping (how DSM requests are served; the reply copies its
#   payload); pingpong-app: the application thread answers, as fi_pingpong's responder does.
ours() {
  "$dsmrun" -n 2 --bind --provider "$4" --timeout 120 "$exerciser" "$1" "$2" "$3" |
    awk '/^pingpong/ {print $4, $5}'
}

printf "%-8s %9s %-8s | %10s %10s %7s | %10s %10s %7s\n" provider bytes reply "fi_pp us" "dsm us" ratio \
  "fi_pp MB/s" "dsm MB/s" ratio
for prov in shm tcp; do
  fprov=$prov
  [ $prov = tcp ] && fprov="tcp;ofi_rxm"
  for c in "${cases[@]}"; do
    set -- $c
    read -r fl fb < <(fi_pp "$1" "$2" "$fprov")
    for mode in pingpong pingpong-app; do
      read -r ol ob < <(ours "$mode" "$1" "$2" "$prov")
      reply=handler
      [ $mode = pingpong-app ] && reply=app
      printf "%-8s %9s %-8s | %10.2f %10.2f %7.2f | %10.1f %10.1f %7.2f\n" "$prov" "$1" "$reply" "$fl" "$ol" \
        "$(awk -v a="$ol" -v b="$fl" 'BEGIN {print a / b}')" "$fb" "$ob" \
        "$(awk -v a="$ob" -v b="$fb" 'BEGIN {print a / b}')"
    done
  done
done
echo "latency ratio = dsm / fi_pingpong (target <= 2); bandwidth ratio = dsm / fi_pingpong (target >= 0.7)"
echo "reply: handler = answered from a message handler (DSM requests); app = by the application thread (as fi_pingpong)"
