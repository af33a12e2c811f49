#!/usr/bin/env bash
# netns-hosts.sh: N "hosts" on this machine as network namespaces, for multi-host tests.
#
#   scripts/netns-hosts.sh run N [--rate R] -- CMD...   make the hosts, run CMD in the hub, remove them
#   scripts/netns-hosts.sh up N [--rate R]              make them (prints the names); `down` removes them
#   scripts/netns-hosts.sh down
#   scripts/netns-hosts.sh check                        exit 0 if namespaces can be made here, 77 if not
#
# Layout (nothing is added to this machine's own network namespace):
#   ${PREFIX}hub : a switch namespace with bridge br0 at 10.77.0.1/24; dsmrun runs here (the head node)
#   ${PREFIX}h1..hN : one namespace per host, eth0 at 10.77.0.(10+i)/24, veth to the bridge
# Each host's interface is named eth0 so that one FI_TCP_IFACE=eth0 fits every rank.
# --rate (e.g. 100mbit) puts a tbf qdisc on both ends of every link (each direction limited).
# CMD sees NETNS_HOSTS (comma-separated host names), NETNS_HUB, NETNS_HUB_ADDR.
# NETNS_PREFIX names the namespaces. `run` defaults to dsm<pid>-, so concurrent runs do not
# collide and a set whose run was killed is removed by the next one; `up` and `down` default
# to dsmup- (a set that outlives the command, which later runs leave alone).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

cmd=${1:-}; shift || true
case $cmd in
  up | down) PREFIX=${NETNS_PREFIX:-dsmup-} ;;
  *) PREFIX=${NETNS_PREFIX:-dsm$$-} ;;
esac
SUBNET=10.77.0
MAX_HOSTS=16

# Namespaces, veth and bridges need CAP_NET_ADMIN and CAP_SYS_ADMIN (ip netns mounts).
check() {
  command -v ip >/dev/null || { warn "iproute2 (ip) is not installed"; return 77; }
  local probe="${PREFIX}probe"
  if ! ip netns add "$probe" 2>/dev/null; then
    warn "'ip netns add' is not permitted here (needs root / CAP_SYS_ADMIN)"; return 77
  fi
  local ok=0
  ip netns exec "$probe" ip link add br0 type bridge 2>/dev/null || ok=77
  ip netns del "$probe" 2>/dev/null || true
  [[ $ok == 0 ]] || warn "cannot create a bridge inside a namespace here"
  return $ok
}

down() {
  local ns
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
    [[ $ns == "$PREFIX"* ]] && ip netns del "$ns" 2>/dev/null || true
  done
}

# Sets whose owner was killed without running its trap (e.g. SIGKILL by a test timeout):
# the default prefix carries the owner's pid, so a set whose owner is gone is removed.
remove_stale() {
  local ns
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
    [[ $ns =~ ^dsm([0-9]+)- ]] && ! kill -0 "${BASH_REMATCH[1]}" 2>/dev/null && ip netns del "$ns" 2>/dev/null || true
  done
}

up() {
  local n=$1 rate=$2 hub="${PREFIX}hub" i h hosts=()
  remove_stale
  ip netns add "$hub"
  ip -n "$hub" link set lo up
  ip -n "$hub" link add br0 type bridge
  ip -n "$hub" addr add "$SUBNET.1/24" dev br0
  ip -n "$hub" link set br0 up
  for ((i = 1; i <= n; i++)); do
    h="${PREFIX}h$i"
    ip netns add "$h"
    ip -n "$h" link set lo up
    # Both ends are created directly in their namespaces: the root namespace never sees them.
    ip -n "$hub" link add "vh$i" type veth peer name eth0 netns "$h"
    ip -n "$hub" link set "vh$i" master br0 up
    ip -n "$h" addr add "$SUBNET.$((10 + i))/24" dev eth0
    ip -n "$h" link set eth0 up
    if [[ -n $rate ]]; then
      # burst >= one 64 KiB GSO segment, so big segments pass instead of being dropped.
      # Checked: `up` runs inside `||`, where set -e is off, and a link left unlimited by a
      # rate tc refuses would pass for a limited one.
      ip netns exec "$h" tc qdisc add dev eth0 root tbf rate "$rate" burst 256kb latency 50ms &&
        ip netns exec "$hub" tc qdisc add dev "vh$i" root tbf rate "$rate" burst 256kb latency 50ms ||
        { warn "tc refused the rate '$rate' (a tbf rate such as 100mbit or 1gbit)"; return 1; }
    fi
    hosts+=("$h")
  done
  # Wait until every link is up (veth reports UP once both ends are; bridge ports forward at
  # once with STP off). Bounded: 5 s.
  for h in "${hosts[@]}"; do
    for ((i = 0; i < 50; i++)); do
      [[ $(ip -n "$h" -br link show eth0) == *" UP "* ]] && break
      sleep 0.1
    done
    ((i < 50)) || die_setup "the link of host $h did not come up"
  done
  NETNS_HOSTS=$(IFS=,; echo "${hosts[*]}")
}

parse_n() {
  [[ ${1:-} =~ ^[0-9]+$ ]] && (($1 >= 1 && $1 <= MAX_HOSTS)) || die_setup "N must be 1..$MAX_HOSTS, got '${1:-}'"
}

case $cmd in
  check) check ;;
  down) down ;;
  up|run)
    parse_n "${1:-}"; n=$1; shift
    rate=
    if [[ ${1:-} == --rate ]]; then
      [[ -n ${2:-} ]] || die_setup "--rate needs a value such as 100mbit"
      rate=$2; shift 2
      command -v tc >/dev/null || die_setup "--rate needs tc (iproute2)"
    fi
    check || exit $?
    if [[ $cmd == up ]]; then
      up "$n" "$rate" || { down; exit 1; }
      echo "hub=${PREFIX}hub hub_addr=$SUBNET.1 hosts=$NETNS_HOSTS (remove: NETNS_PREFIX=$PREFIX $0 down)"
      exit 0
    fi
    [[ ${1:-} == -- ]] && shift
    (($# > 0)) || die_setup "run needs a command after --"
    at_exit down
    up "$n" "$rate"
    export NETNS_HOSTS NETNS_HUB="${PREFIX}hub" NETNS_HUB_ADDR="$SUBNET.1"
    rc=0
    ip netns exec "$NETNS_HUB" "$@" || rc=$?
    exit $rc
    ;;
  *) die_setup "usage: $0 run N [--rate R] -- CMD... | up N [--rate R] | down | check" ;;
esac
