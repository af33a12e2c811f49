# Jacobi across namespace hosts over TCP, DSM beside Open MPI: time and bytes on the wire.
#
# usage: scripts/bench hosts
# HOSTS "hosts" on this machine, network namespaces on one bridge (scripts/netns-hosts.sh),
# one rank on each, their links free or limited by tbf to a rate; per rate, Jacobi 2050x2050
# floats in
#   DSM hand              dsmrun --hostfile ... --provider tcp  jacobi_hand
#   DSM pass (default lb) the same with jacobi_pass             (balancer policy auto)
#   DSM pass --lb static  the same with --lb static
#   MPI (Open MPI)        mpirun across the same namespaces, TCP transport (btl tcp,self)
# dsmrun and mpirun run in the hub namespace and start the ranks on the hosts, dsmrun through
# `ip netns exec`, mpirun its daemons through scripts/nsrsh; scripts/bind-rank binds every
# rank to the CPU of its rank number (mod the cores), as dsmrun --bind does on one host.
# Every run's checksum must equal jacobi_seq's, or the script stops with an error. The versions
# run REPEAT times, interleaved (hand, pass, pass static, MPI, hand, ...) so that a burst of
# load elsewhere hits all alike. For each rate the table gives each version's median time,
# its ratio to MPI (the median over the rounds of its time / MPI's time in the same round),
# and the bytes each iteration puts on the wire, counted alike for both stacks: the bytes the
# hosts' eth0 sent (ip -s link, summed over the hosts) in one run of 4 x JACOBI_ITERS
# iterations less the median of the timed runs, over 3 x JACOBI_ITERS, so that start-up and
# shut-down cancel out. The DSM runs print the balancer's moves (DSM_LB_TRACE=1); the table
# counts them, over the timed runs and in the counting run: bytes per iteration say little of
# a steady state where one of those moved rows.
# Without mpirun (or jacobi_mpi) the MPI rows are left out, with a note. Exit 77 when network
# namespaces cannot be made here (they need root).
# Environment: BUILD_DIR (default build; needs -DDSM_BUILD_PASS=ON for jacobi_pass and Open
# MPI for jacobi_mpi), HOSTS (2; up to 16, more hosts than cores share them), RATES
# ("unlimited 1gbit": unlimited or a tc rate such as 100mbit, per link and direction), REPEAT
# (3), JACOBI_ITERS (1000), JACOBI_N (2050).
# shellcheck shell=bash disable=SC2154  # bin, cores, top: set by lib.sh
shopt -s inherit_errexit  # a failure inside $(...) stops the script
(($# == 0)) || die_setup "usage: scripts/bench hosts (no arguments; settings in the environment)"
nhosts=${HOSTS:-2} repeat=${REPEAT:-3} iters=${JACOBI_ITERS:-1000} n=${JACOBI_N:-2050}
read -ra rates <<<"${RATES:-unlimited 1gbit}"
{ [[ $nhosts =~ ^[0-9]+$ ]] && ((nhosts >= 2 && nhosts <= 16)); } || die_setup "HOSTS must be 2..16, not '$nhosts'"
for setting in repeat iters n; do
  [[ ${!setting} =~ ^[1-9][0-9]*$ ]] || die_setup "REPEAT, JACOBI_ITERS and JACOBI_N must be positive integers"
done
((${#rates[@]})) || die_setup "RATES names no rate (unlimited, 1gbit, 100mbit, ...)"
for rate in "${rates[@]}"; do
  [[ ${rate,,} =~ ^(unlimited|[0-9]+(\.[0-9]+)?([kmgt]i?)?(bit|bps))$ ]] ||
    die_setup "RATES: '$rate' is neither unlimited nor a rate such as 1gbit or 100mbit"
done
need dsmrun jacobi_seq jacobi_hand jacobi_pass
need_command jq jq
netns=$top/scripts/netns-hosts.sh
"$netns" check || { rc=$?; warn "cannot make network namespaces here (root and iproute2 needed)"; exit "$rc"; }

versions=(hand pass pass_static mpi)
declare -A label=([hand]="DSM hand" [pass]="DSM pass (default lb)" [pass_static]="DSM pass --lb static"
  [mpi]="MPI (Open MPI)")
mpi_note=
if ! command -v mpirun >/dev/null; then mpi_note="mpirun is missing (scripts/setup.sh installs openmpi-bin)"
elif [ ! -x "$bin/jacobi_mpi" ]; then mpi_note="$bin/jacobi_mpi is missing (built when Open MPI is found)"; fi
[ -z "$mpi_note" ] || { versions=(hand pass pass_static); warn "no MPI rows: $mpi_note"; }
((cores >= nhosts)) || warn "warning: $cores core(s) for $nhosts hosts: ranks share cores, times mean little"

# The sequential checksums: of the timed runs (JACOBI_ITERS) and of the counting run (4 x).
declare -A want
for k in 1 4; do
  want[$k]=$("$bin/jacobi_seq" --n "$n" --iters $((k * iters)) | field checksum)
  [ -n "${want[$k]}" ] || die "jacobi_seq printed no checksum"
done

# --- the hosts: one set per rate, named after this script's pid so that a set left behind by
# a killed run is removed by the next (netns-hosts.sh) ---
prefix=dsm$$-
make_scratch
hostfile=$scratch/hosts
hub='' hub_addr='' hosts=()
hosts_down() { NETNS_PREFIX=$prefix "$netns" down; }
at_exit hosts_down
hosts_up() {  # hosts_up RATE: sets hub, hub_addr, hosts and the hostfile (one slot each)
  local line rate_opt=() h
  [ "$1" = unlimited ] || rate_opt=(--rate "$1")
  line=$(NETNS_PREFIX=$prefix "$netns" up "$nhosts" "${rate_opt[@]}") || die "cannot make $nhosts namespace hosts"
  read -r hub hub_addr line _ <<<"$line"
  hub=${hub#hub=} hub_addr=${hub_addr#hub_addr=}
  IFS=, read -ra hosts <<<"${line#hosts=}"
  printf '%s slots=1\n' "${hosts[@]}" >"$hostfile"
  # tc reports a rate it cannot read, but netns-hosts.sh makes the hosts all the same.
  [ "$1" = unlimited ] || for h in "${hosts[@]}"; do
    tc -n "$h" qdisc show dev eth0 | grep -q tbf || die_setup "RATES: tc takes no rate '$1'"
  done
}
wire_bytes() {  # the bytes the hosts' eth0 sent so far, summed over the hosts
  local h
  for h in "${hosts[@]}"; do ip -n "$h" -s -j link show eth0 | jq '.[0].stats64.tx.bytes'; done | awk '{s += $1} END {printf "%.0f\n", s}'
}

# cmd_of VERSION: sets cmd to one version's command, to run in the hub (the sizes are appended).
cmd=()
cmd_of() {
  local subnet=${hub_addr%.*}.0/24 dsmrun=("$bin/dsmrun" -n "$nhosts" --hostfile "$hostfile"
    --launch 'ip netns exec {host}' --provider tcp --rendezvous-addr "$hub_addr" --env FI_TCP_IFACE=eth0 --timeout 1800
    --env DSM_LB_TRACE=1)
  case $1 in
    hand) cmd=("${dsmrun[@]}" -- "$top/scripts/bind-rank" "$bin/jacobi_hand") ;;
    pass) cmd=("${dsmrun[@]}" -- "$top/scripts/bind-rank" "$bin/jacobi_pass") ;;
    pass_static) cmd=("${dsmrun[@]}" --lb static -- "$top/scripts/bind-rank" "$bin/jacobi_pass") ;;
    # Only the hub's bridge and the hosts' eth0 carry the subnet; rtc_hwloc_vmhole none keeps
    # the daemons off an hwloc query that crashed one of them; --bind-to none, as bind-rank binds.
    mpi) cmd=(timeout -k 5 1800 mpirun --allow-run-as-root -np "$nhosts" --hostfile "$hostfile" --map-by node
              --bind-to none --mca plm_rsh_agent "$top/scripts/nsrsh" --mca rtc_hwloc_vmhole none
              --mca btl 'tcp,self' --mca btl_tcp_if_include "$subnet" --mca oob_tcp_if_include "$subnet"
              "$top/scripts/bind-rank" "$bin/jacobi_mpi") ;;
  esac
}

# hosts_run VERSION K: one run of K x JACOBI_ITERS iterations across the hosts, its checksum
# checked against jacobi_seq's; sets run_t (the program's time), run_bytes (sent on the wire)
# and run_moves (the balancer's changes of the split; 0 where it printed none).
run_t='' run_bytes='' run_moves=''
hosts_run() {
  local v=$1 k=$2 out sum before after
  cmd_of "$v"
  before=$(wire_bytes)
  out=$(ip netns exec "$hub" "${cmd[@]}" --n "$n" --iters $((k * iters)) 2>&1) ||
    { echo "$out" >&2; die "${label[$v]} failed ($nhosts hosts, links $rate)"; }
  after=$(wire_bytes)
  sum=$(field checksum <<<"$out")
  run_t=$(field time <<<"$out")
  if [ -z "$sum" ] || [ -z "$run_t" ]; then echo "$out" >&2; die "${label[$v]} printed no checksum/time"; fi
  [ "$sum" = "${want[$k]}" ] ||
    die "CHECKSUM MISMATCH: ${label[$v]} ($nhosts hosts, links $rate, $((k * iters)) iterations) gave $sum, jacobi_seq ${want[$k]}"
  run_bytes=$((after - before))
  run_moves=$(grep -c '^dsm-lb: .* moved: ' <<<"$out" || true)
  [ "$v" != mpi ] || run_moves=-
}

echo "bench hosts: $(date -u '+%F %T') UTC, $cores cores, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
  "$nhosts namespace hosts, median of $repeat; ${mpi_note:-$(mpirun --version 2>/dev/null | head -1)}"
for rate in "${rates[@]}"; do
  hosts_up "$rate"
  declare -A times=() bytes=() long=() moves=()
  echo "== $nhosts hosts, links $rate: Jacobi --n $n --iters $iters"
  for ((r = 1; r <= repeat; ++r)); do
    for v in "${versions[@]}"; do
      hosts_run "$v" 1
      times[$v.$r]=$run_t bytes[$v.$r]=$run_bytes moves[$v]=$((${moves[$v]:-0} + ${run_moves/-/0}))
      printf '  %-24s %10s s  %12s B  %3s moves  checksum %s\n' "${label[$v]}" "$run_t" "$run_bytes" "$run_moves" "${want[1]}"
    done
  done
  for v in "${versions[@]}"; do
    hosts_run "$v" 4
    long[$v]=$run_bytes moves[$v]="${moves[$v]:-0}/$run_moves"
    printf '  %-24s %d iterations: %s B, %s moves\n' "${label[$v]}" $((4 * iters)) "$run_bytes" "$run_moves"
  done
  hosts_down

  declare -A per_iter=()
  for v in "${versions[@]}"; do
    per_iter[$v]=$(awk -v l="${long[$v]}" -v s="$(for ((r = 1; r <= repeat; ++r)); do echo "${bytes[$v.$r]}"; done | median)" \
      -v d=$((3 * iters)) 'BEGIN { printf "%.0f", (l - s) / d }')
  done
  echo
  echo "== $nhosts hosts, links $rate: Jacobi --n $n --iters $iters, median of $repeat" \
    "(checksums equal to jacobi_seq's ${want[1]})"
  printf '%-24s %10s %8s %12s %12s %8s\n' version "time (s)" "x MPI" "bytes/iter" "x MPI bytes" "moves"
  for v in "${versions[@]}"; do
    t=$(for ((r = 1; r <= repeat; ++r)); do echo "${times[$v.$r]}"; done | median)
    x=- xb=-
    if [ -z "$mpi_note" ]; then
      x=$(for ((r = 1; r <= repeat; ++r)); do ratio "${times[$v.$r]}" "${times[mpi.$r]}"; echo; done | median)
      xb=$(ratio "${per_iter[$v]}" "${per_iter[mpi]}")
    fi
    m=${moves[$v]}
    [ "$v" != mpi ] || m=-
    printf '%-24s %10s %8s %12s %12s %8s\n' "${label[$v]}" "$t" "$x" "${per_iter[$v]}" "$xb" "$m"
  done
  [ -z "$mpi_note" ] || echo "no MPI rows: $mpi_note"
  echo
done
