# Bulk pages from one rank to another beside one MPI message of the same size, shm and tcp.
#
# usage: scripts/bench bulk [BUILD_DIR]     (default: BUILD_DIR from the environment, or build)
# Rank 0 fills MIB MiB (default 256) with plain stores, a barrier, then rank 1 reads all of
# it (dsm-bench-bulk): by faults, and after one dsm::prefetch of the whole range, a fresh
# array each round. The reference is one MPI message of the same size between two ranks (bulk_mpi: Open MPI over
# shared memory for shm, over its tcp transport for tcp), in the same run. Each case runs
# REPEAT times (default 3) interleaved with the others, ROUNDS rounds per run (default 3);
# the table shows the best round of all and its ratio to MPI's best.
# Target: at least 0.5x MPI's bandwidth in each of the four cases.
# shellcheck shell=bash disable=SC2154  # bin, cores...: set by lib.sh
(($# <= 1)) || die_setup "usage: scripts/bench bulk [BUILD_DIR]"
(($# == 0)) || use_build "$1"
need dsmrun dsm-bench-bulk
mib=${MIB:-256}
repeat=${REPEAT:-3}
rounds=${ROUNDS:-3}
[[ $mib =~ ^[1-9][0-9]*$ && $repeat =~ ^[1-9][0-9]*$ && $rounds =~ ^[1-9][0-9]*$ ]] ||
  die_setup "MIB, REPEAT and ROUNDS must be positive integers"
mpi=1
[ -x "$bin/bulk_mpi" ] && command -v mpirun >/dev/null || { mpi=0; warn "no MPI (bulk_mpi or mpirun missing): ratios left out"; }
here_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Rank 0 keeps each array's pages as changes to serve: the collection bound must hold them
# all (a collection in a barrier would fetch the data before the clock starts).
export DSM_GC_BOUND=$((2 * mib * (rounds + 1)))M

# gbs PROVIDER MODE -> GB/s of the best round of one run
ours() {
  "$bin/dsmrun" -n 2 --bind --provider "$1" --timeout 300 "$bin/dsm-bench-bulk" --mib "$mib" --rounds "$rounds" --mode "$2" |
    awk '$1 == "bulk" {print $5}'
}
theirs() {
  if [ "$1" = shm ]; then
    "$here_dir/apps/peers/mpirun.sh" --bind 2 "$bin/bulk_mpi" --mib "$mib" --rounds "$rounds"
  else
    local root=()
    [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
    mpirun "${root[@]}" -np 2 --map-by core --bind-to core --mca btl tcp,self "$bin/bulk_mpi" --mib "$mib" --rounds "$rounds"
  fi | awk '$1 == "bulk" {print $5}'
}

declare -A best
keep() { awk -v a="$1" -v b="${2:-0}" 'BEGIN { print (a > b ? a : b) }'; }
for ((r = 0; r < repeat; r++)); do
  for prov in shm tcp; do
    ((mpi)) && best[$prov.mpi]=$(keep "$(theirs $prov)" "${best[$prov.mpi]:-}")
    for mode in fault prefetch; do
      got=$(ours $prov $mode)
      [ -n "$got" ] || die "dsm-bench-bulk failed ($prov, $mode)"
      best[$prov.$mode]=$(keep "$got" "${best[$prov.$mode]:-}")
    done
  done
done

printf "%-8s %-9s | %9s %9s %7s\n" provider read "dsm GB/s" "MPI GB/s" ratio
for prov in shm tcp; do
  for mode in fault prefetch; do
    m=${best[$prov.mpi]:-0}
    printf "%-8s %-9s | %9.2f %9.2f %7s\n" $prov $mode "${best[$prov.$mode]}" "$m" \
      "$( ((mpi)) && ratio "${best[$prov.$mode]}" "$m" || echo -)"
  done
done
echo "$((mib)) MiB from rank 0 to rank 1, best of $repeat runs x $rounds rounds; ratio = dsm / one MPI message (target >= 0.5)"
