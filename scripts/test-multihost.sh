#!/usr/bin/env bash
# test-multihost.sh: the DSM checks and Jacobi across "hosts" that are network namespaces
# (scripts/netns-hosts.sh), ranks started by dsmrun through `ip netns exec`, tcp;ofi_rxm.
#
#   scripts/test-multihost.sh [--bin DIR] [--hosts "2 4"] [--per-host K] [--modes "random stencil migratory"]
#                             [--jacobi "--n 514 --iters 20"]
#                             [--rate 100mbit [--bench "--n 2050 --iters 100"]]
#   scripts/test-multihost.sh [--bin DIR] --liveness
#
# For each host count H: the dsm_check modes (random, stencil, migratory) at H x K ranks (K
# per host, default 1), and jacobi_hand at as many ranks, whose checksum must equal
# jacobi_seq's. Jobs of 64 ranks over 8 hosts: --hosts 8 --per-host 8 --modes "random stencil"
# (migratory's 2000 lock turns per rank take minutes at 64 ranks on two cores). With --rate, Jacobi is then
# timed once on free links and once on links limited by tbf to that rate, side by side.
# With --liveness instead, on 2 hosts: the link of host 2 cut for good 3 s into a job must end
# it within 30 s, non-zero, naming host 2's rank as silent; cut for 2 s and restored, the job
# must finish with its checked result (soak_program checks every round); dsmrun killed with
# SIGKILL mid-job must leave no rank running on either host.
# Exit 0: all passed; 1: a check failed; 77: namespaces cannot be made here (CTest skip).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
here=$top/scripts
self=$here/$(basename "$0")
host_counts="2 4"
per_host=1
modes="random stencil migratory"
jacobi_args="--n 514 --iters 20"
rate=
bench_args="--n 2050 --iters 100"
timeout=120

while (($#)); do
  case $1 in
    --bin) bin=${2:?}; shift 2 ;;
    --hosts) host_counts=${2:?}; shift 2 ;;
    --per-host) per_host=${2:?}; shift 2 ;;
    --modes) modes=${2:?}; shift 2 ;;
    --jacobi) jacobi_args=${2:?}; shift 2 ;;
    --rate) rate=${2:?}; shift 2 ;;
    --bench) bench_args=${2:?}; shift 2 ;;
    --timeout) timeout=${2:?}; shift 2 ;;
    --liveness) liveness=1; shift ;;
    # Internal: runs inside the hub namespace made by netns-hosts.sh.
    --in-hub) shift; in_hub=$1; shift; break ;;
    *) die_setup "unknown option $1 (see the header of $0)" ;;
  esac
done
for h in $host_counts; do [[ $h =~ ^[0-9]+$ ]] && ((h >= 1 && h <= 16)) || die_setup "--hosts: '$h' is not 1..16"; done
[[ $per_host =~ ^[1-9][0-9]*$ ]] || die_setup "--per-host: '$per_host' is not a positive count"
need dsmrun dsm_check jacobi_hand jacobi_seq
expect=$top/tests/net/expect.sh

# dsmrun from the hub: one rank per host, the rendezvous on the bridge address, and libfabric's
# tcp provider told to use eth0 (each namespace's only interface besides loopback). An array,
# not a function: expect.sh runs it under timeout(1).
dsmrun_cmd() {
  run=("$bin/dsmrun" -n "$1" --hosts "$NETNS_HOSTS" --launch 'ip netns exec {host}'
       --provider tcp --rendezvous-addr "$NETNS_HUB_ADDR" --env FI_TCP_IFACE=eth0 --timeout "$timeout")
}
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }

if [[ ${in_hub:-} == checks ]]; then
  hosts=$1 want=$2 n=$(($1 * per_host))
  fails=0
  for mode in $modes; do
    echo "== $hosts hosts, $n ranks: dsm_check $mode"
    dsmrun_cmd "$n"
    "$expect" 0 "$timeout" "$mode ok" "${run[@]}" "$bin/dsm_check" "$mode" || fails=$((fails + 1))
  done 2>&1
  echo "== $hosts hosts, $n ranks: jacobi_hand $jacobi_args"
  dsmrun_cmd "$n"
  # shellcheck disable=SC2086  # the app's options are split on purpose
  out=$("${run[@]}" "$bin/jacobi_hand" $jacobi_args 2>&1) || { echo "$out"; echo "FAIL: jacobi_hand exited non-zero"; exit 1; }
  got=$(field checksum <<<"$out")
  echo "checksum $got (jacobi_seq: $want)"
  [[ $got == "$want" ]] || { echo "FAIL: jacobi_hand on $hosts hosts differs from jacobi_seq"; fails=$((fails + 1)); }
  if ((fails > 0)); then echo "== $hosts hosts: $fails FAILED"; exit 1; fi
  echo "== $hosts hosts, $n ranks: pass"
  exit 0
fi
if [[ ${in_hub:-} == liveness ]]; then
  fails=0
  # The cut link back up: host 2 also forgets its failed lookups of the hub's address, which
  # would refuse the next job's connection to the rendezvous for a few seconds.
  restore_link() {
    local h2=${NETNS_HOSTS#*,}
    ip link set vh2 up
    ip netns exec "${h2%%,*}" ip neigh flush all
    for _ in $(seq 1 50); do
      ip link show vh2 | grep -q "state UP" && return 0
      sleep 0.1
    done
  }
  # The rank on host 2 is rank 1; its link is vh2 on the hub's bridge. Each side of the cut
  # hears nothing from the other, and whichever bound runs out first ends the job: rank 0
  # names rank 1, or rank 1 (whose output still reaches dsmrun through the hub) names rank 0.
  echo "== link of host 2 cut for good after 3 s (liveness bound 5 s)"
  dsmrun_cmd 2
  (sleep 3 && ip link set vh2 down) &
  start=$(now)
  "$expect" fail 40 "rank [01] on host [^ ]+ sent nothing for" "${run[@]}" --liveness 5 "$bin/soak_program" 60 ||
    fails=$((fails + 1))
  took=$(calc "$(now) - $start")
  wait
  restore_link
  echo "the job ended $took s after it started (3 s before the cut)"
  awk "BEGIN { exit !($took < 33) }" || { echo "FAIL: not within 30 s of the cut"; fails=$((fails + 1)); }
  echo "== link of host 2 cut for 2 s, then restored (liveness bound 5 s)"
  dsmrun_cmd 2
  (sleep 3 && ip link set vh2 down && sleep 2 && ip link set vh2 up) &
  "$expect" 0 60 "soak ok" "${run[@]}" --liveness 5 "$bin/soak_program" 8 || fails=$((fails + 1))
  wait
  restore_link
  echo "== dsmrun killed (SIGKILL) 3 s into a job"
  dsmrun_cmd 2
  "${run[@]}" "$bin/soak_program" 60 > /dev/null 2>&1 &
  job=$!
  sleep 3
  ranks=$(pgrep -f "^$bin/soak_program" | tr '\n' ' ')
  kill -9 "$job"
  wait "$job" 2>/dev/null || true  # killed: 137
  for _ in $(seq 1 150); do
    left=''
    for p in $ranks; do [[ -r /proc/$p/stat && $(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) != Z ]] && left+=" $p"; done
    [[ -z $left ]] && break
    sleep 0.1
  done
  if [[ -n $ranks && -z $left ]]; then
    echo "every rank ($ranks) exited without dsmrun"
  else
    echo "FAIL: ranks '$ranks' started, '$left' still running 15 s after dsmrun was killed"
    fails=$((fails + 1))
    for p in $left; do kill -9 "$p"; done
  fi
  ((fails == 0)) || { echo "== liveness: $fails FAILED"; exit 1; }
  echo "== liveness: pass"
  exit 0
fi
if [[ ${in_hub:-} == time ]]; then
  # Prints "<app time> <wall time>" of one Jacobi run across the hosts.
  n=$1
  dsmrun_cmd "$n"
  start=$(now)
  # shellcheck disable=SC2086
  out=$("${run[@]}" "$bin/jacobi_hand" $bench_args 2>&1) || { echo "$out" >&2; exit 1; }
  end=$(now)
  echo "$(field time <<<"$out") $(calc "$end - $start") $(field checksum <<<"$out")"
  exit 0
fi
[[ -n ${in_hub:-} ]] && die_setup "unknown internal mode $in_hub"

"$here/netns-hosts.sh" check || { rc=$?; echo "test-multihost: SKIP: cannot make network namespaces here"; exit $rc; }
if [[ -n ${liveness:-} ]]; then
  need soak_program
  exec "$here/netns-hosts.sh" run 2 -- "$self" --bin "$bin" --timeout "$timeout" --in-hub liveness
fi

# shellcheck disable=SC2086
want=$("$bin/jacobi_seq" $jacobi_args | field checksum)
[[ -n $want ]] || die_setup "jacobi_seq printed no checksum"
status=0
for n in $host_counts; do
  "$here/netns-hosts.sh" run "$n" -- "$self" --bin "$bin" --jacobi "$jacobi_args" --timeout "$timeout" \
    --per-host "$per_host" --modes "$modes" --in-hub checks "$n" "$want" || status=1
done

if [[ -n $rate ]]; then
  # shellcheck disable=SC2086
  want=$("$bin/jacobi_seq" $bench_args | field checksum)
  echo
  echo "Jacobi ($bench_args) across namespace hosts, one run each: free links vs tbf $rate"
  printf '%-6s %-10s %12s %12s %s\n' hosts links "app time s" "wall s" checksum
  for n in $host_counts; do
    declare -A app wall
    for links in free "$rate"; do
      opt=(); [[ $links == free ]] || opt=(--rate "$rate")
      read -r t w sum < <("$here/netns-hosts.sh" run "$n" "${opt[@]}" -- "$self" --bin "$bin" --bench "$bench_args" --timeout 600 --in-hub time "$n") || { status=1; continue; }
      [[ $sum == "$want" ]] || { echo "FAIL: checksum $sum differs from jacobi_seq $want"; status=1; }
      printf '%-6s %-10s %12.3f %12.3f %s\n' "$n" "$links" "$t" "$w" "$sum"
      app[$links]=$t wall[$links]=$w
    done
    [[ -n ${app[$rate]:-} && -n ${app[free]:-} ]] &&
      printf '%-6s ratio %s/free: app time %.2fx, wall %.2fx\n' "$n" "$rate" \
        "$(calc "${app[$rate]} / ${app[free]}")" "$(calc "${wall[$rate]} / ${wall[free]}")"
    unset app wall
  done
fi
exit $status
