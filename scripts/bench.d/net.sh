# The message layer beside libfabric's own fi_pingpong: latency and bandwidth, shm and tcp.
#
# usage: scripts/bench net [BUILD_DIR]     (default: BUILD_DIR from the environment, or build)
# In the same run: one-way latency at 64 B and 4 KiB and bandwidth at 1 MiB, for shm and
# tcp;ofi_rxm, each of the runtime's two reply paths beside fi_pingpong.
# Targets: latency within 2x of fi_pingpong, bandwidth at least 0.7x.
# shellcheck shell=bash disable=SC2154  # bin, cores, mode, size, run_time...: set by lib.sh
(($# <= 1)) || die_setup "usage: scripts/bench net [BUILD_DIR]"
(($# == 0)) || use_build "$1"
need dsmrun net_exerciser
need_command fi_pingpong libfabric-bin
cases=("64 20000" "4096 10000" "1048576 1000")
port=$((47000 + RANDOM % 2000))

# Both sides use shm's same protocol: the runtime turns cross-memory attach off unless told
# otherwise.
export FI_SHM_DISABLE_CMA=${FI_SHM_DISABLE_CMA:-1}
# fi_pp SIZE ITERS PROVIDER -> "usec_per_xfer MB_per_s" (fi_pingpong's last line)
fi_pp() {
  local size=$1 iters=$2 prov=$3 out server
  port=$((port + 1))
  fi_pingpong -p "$prov" -e rdm -I "$iters" -S "$size" -B $port >/dev/null 2>&1 &
  server=$!
  sleep 0.3
  out=$(timeout 120 fi_pingpong -p "$prov" -e rdm -I "$iters" -S "$size" -P $port 127.0.0.1 | tail -1)
  wait $server || true
  awk '{print $7, $6}' <<<"$out"
}

# ours MODE SIZE ITERS PROVIDER -> "usec_per_xfer MB_per_s"
#   pingpong: a handler answers each ping (how DSM requests are served; the reply copies its
#   payload); pingpong-app: the application thread answers, as fi_pingpong's responder does.
ours() {
  "$bin/dsmrun" -n 2 --bind --provider "$4" --timeout 120 "$bin/net_exerciser" "$1" "$2" "$3" |
    awk '/^pingpong/ {print $4, $5}'
}

printf "%-8s %9s %-8s | %10s %10s %7s | %10s %10s %7s\n" provider bytes reply "fi_pp us" "dsm us" ratio \
  "fi_pp MB/s" "dsm MB/s" ratio
for prov in shm tcp; do
  fprov=$prov
  [ $prov = shm ] || fprov="tcp;ofi_rxm"
  for c in "${cases[@]}"; do
    read -r bytes iters <<<"$c"
    read -r fl fb < <(fi_pp "$bytes" "$iters" "$fprov")
    for reply in handler app; do
      mode=pingpong
      [ $reply = handler ] || mode=pingpong-app
      read -r ol ob < <(ours "$mode" "$bytes" "$iters" "$prov")
      printf "%-8s %9s %-8s | %10.2f %10.2f %7.2f | %10.1f %10.1f %7.2f\n" "$prov" "$bytes" "$reply" \
        "$fl" "$ol" "$(ratio "$ol" "$fl")" "$fb" "$ob" "$(ratio "$ob" "$fb")"
    done
  done
done
echo "latency ratio = dsm / fi_pingpong (target <= 2); bandwidth ratio = dsm / fi_pingpong (target >= 0.7)"
echo "reply: handler = answered from a message handler (DSM requests); app = by the application thread (as fi_pingpong)"
