# Jacobi, matmul, Gauss-Seidel, SpMV and CG in every version beside OpenMP (and MPI), at 2 ranks.
#
# usage: scripts/bench peers
# One run on this machine, side by side: Jacobi 2050x2050 floats, matmul 256x256 longs,
# the pipelined 9-point Gauss-Seidel 2000x2000 doubles (OpenMP: its doacross loop; no MPI
# version) and the sparse matrix-vector product of a 1500² grid's Laplacian (an irregular
# loop; no hand version) and conjugate gradient on a 100³ grid's 7-point Laplacian (cg) and on
# a random matrix of as many nonzeros in 1/16 of the rows, in the manner of NAS CG (cg_random) in
#   sequential            <app>_seq
#   DSM hand              dsmrun -n 2 --bind <app>_hand
#   DSM pass --lb static  dsmrun -n 2 --bind --lb static <app>_pass
#   DSM pass (default)    dsmrun -n 2 --bind <app>_pass          (balancer policy auto)
#   OpenMP                <app>_omp, OMP_NUM_THREADS=2, threads bound to cores
#   MPI                   mpirun -np 2 --bind-to core <app>_mpi  (Open MPI, apps/peers/mpirun.sh)
# Every run's checksum must equal the sequential one, or the script stops with an error; CG's
# dot products add their parts in another order on 2 ranks, so its runs are checked with
# --check instead (x within 1e-9 of the sequential solution, computed after the clock stops).
# Each version runs REPEAT times, interleaved (seq, hand, ..., MPI, seq, hand, ...) so that a
# burst of load elsewhere hits all versions alike; the table uses each version's best time
# (the run least disturbed by the rest of the machine), efficiency = sequential / (2 x time)
# (1 for the sequential run), and the ratio of each time to ours (hand, and pass with the
# default policy).
# Targets checked at the end: our Jacobi at least as fast as MPI, within 1.1x of OpenMP, on
# the best times, with the spread of the same ratio within each round beside it.
# Environment: BUILD_DIR (default build; needs -DDSM_BUILD_PASS=ON for the _pass versions
# and Open MPI for the _mpi ones: scripts/setup.sh installs both), REPEAT (default 3),
# JACOBI_ITERS (default 1500), MATMUL_ITERS (default 300), GS_ITERS (default 10 sweeps): a
# few seconds per sequential run, less for Gauss-Seidel; SPMV_ITERS (default 50); CG_ITERS
# (default 100, four of NAS CG's solves of 25); APPS (default "jacobi matmul gauss_seidel spmv cg cg_random"): the
# applications to run, e.g. APPS=jacobi for more rounds of the one the targets are about in
# the same time.
# shellcheck shell=bash disable=SC2154  # bin, cores, mode, size, run_time...: set by lib.sh
(($# == 0)) || die_setup "usage: scripts/bench peers (no arguments; settings in the environment)"
repeat=${REPEAT:-3}
ranks=2
size=([jacobi]="--n 2050 --iters ${JACOBI_ITERS:-1500}" [matmul]="--n 256 --iters ${MATMUL_ITERS:-300}"
  [gauss_seidel]="--n 2000 --iters ${GS_ITERS:-10}" [spmv]="--n 1500 --iters ${SPMV_ITERS:-50}"
  [cg]="--n 100 --iters ${CG_ITERS:-100}" [cg_random]="--n 100 --iters ${CG_ITERS:-100} --problem random")
# The binaries of an application, where their name is not the application's; and the
# applications whose runs are checked with --check rather than by their checksum.
declare -A binary=([cg_random]=cg)
declare -A checked=([cg]=1 [cg_random]=1)
known="jacobi, matmul, gauss_seidel, spmv, cg, cg_random"
all_versions=(seq hand pass_static pass omp mpi)
# versions_of APP: sets versions to the versions APP has.
versions=()
versions_of() {
  case $1 in
    gauss_seidel) versions=(seq hand pass_static pass omp) ;;
    spmv) versions=(seq pass_static pass omp mpi) ;;
    cg | cg_random) versions=(seq hand pass_static pass omp mpi) ;;
    *) versions=("${all_versions[@]}") ;;
  esac
}
declare -A label=([seq]="sequential" [hand]="DSM hand" [pass_static]="DSM pass --lb static"
  [pass]="DSM pass (default lb)" [omp]="OpenMP" [mpi]="MPI (Open MPI)")

[[ $repeat =~ ^[1-9][0-9]*$ ]] || die_setup "REPEAT must be a positive integer, not '$repeat'"
read -ra apps <<<"${APPS:-jacobi matmul gauss_seidel spmv cg cg_random}"
((${#apps[@]})) || die_setup "APPS names no application ($known)"
for app in "${apps[@]}"; do
  [ -n "${size[$app]:-}" ] || die_setup "APPS: unknown application '$app' ($known)"
done
need dsmrun
for app in "${apps[@]}"; do
  versions_of "$app"
  for v in "${versions[@]}"; do
    case $v in pass_static) ;; *) need "${binary[$app]:-$app}_$v" ;; esac
  done
done
for app in "${apps[@]}"; do
  versions_of "$app"
  [[ " ${versions[*]} " != *" mpi "* ]] || { need_command mpirun openmpi-bin; break; }
done
((cores >= ranks)) || warn "warning: $cores core(s) for $ranks ranks: oversubscribed, times mean little"

# cmd_of APP VERSION: sets cmd to the command of one version (the sizes are appended).
cmd=()
cmd_of() {
  local app=${binary[$1]:-$1} dsmrun=("$bin/dsmrun" -n "$ranks" --bind --timeout 900)
  case $2 in
    seq) cmd=("$bin/${app}_seq") ;;
    hand) cmd=("${dsmrun[@]}" -- "$bin/${app}_hand") ;;
    pass_static) cmd=("${dsmrun[@]}" --lb static -- "$bin/${app}_pass") ;;
    pass) cmd=("${dsmrun[@]}" -- "$bin/${app}_pass") ;;
    omp) cmd=(env OMP_NUM_THREADS="$ranks" OMP_PROC_BIND=close OMP_PLACES=cores "$bin/${app}_omp") ;;
    mpi) cmd=(timeout -k 5 900 "$top/apps/peers/mpirun.sh" --bind "$ranks" "$bin/${app}_mpi") ;;
  esac
}

declare -A best want times
# peer_run APP VERSION ROUND: one run, its checksum checked against the sequential one;
# keeps the round's time and the best time.
peer_run() {
  local app=$1 v=$2 round=$3 out sum t check=
  cmd_of "$app" "$v"
  [ -z "${checked[$app]:-}" ] || check=--check
  # shellcheck disable=SC2086  # the options are split on purpose
  out=$("${cmd[@]}" ${size[$app]} $check 2>&1) || { echo "$out" >&2; die "$app ${label[$v]} failed"; }
  sum=$(field checksum <<<"$out")
  t=$(field time <<<"$out")
  [ -n "$sum" ] && [ -n "$t" ] || { echo "$out" >&2; die "$app ${label[$v]} printed no checksum/time"; }
  if [ "$v" = seq ] && [ -z "${want[$app]:-}" ]; then want[$app]=$sum; fi
  if [ -n "$check" ]; then
    grep -q '^check ok' <<<"$out" || { echo "$out" >&2; die "$app ${label[$v]}: no 'check ok'"; }
  else
    [ "$sum" = "${want[$app]}" ] ||
      die "CHECKSUM MISMATCH: $app ${label[$v]} gave $sum, sequential ${want[$app]}"
  fi
  printf '  %-7s %-24s %10s s  checksum %s\n' "$app" "${label[$v]}" "$t" "$sum"
  times[$app.$v.$round]=$t
  if [ -z "${best[$app.$v]:-}" ] || awk -v a="$t" -v b="${best[$app.$v]}" 'BEGIN { exit !(a < b) }'; then
    best[$app.$v]=$t
  fi
}

echo "bench peers: $(date -u '+%F %T') UTC, $cores cores, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
  "$ranks ranks, best of $repeat; $(mpirun --version 2>/dev/null | head -1)"
for app in "${apps[@]}"; do
  echo "== $app ${size[$app]}"
  versions_of "$app"
  for ((r = 1; r <= repeat; ++r)); do
    for v in "${versions[@]}"; do peer_run "$app" "$v" "$r"; done
  done
done

for app in "${apps[@]}"; do
  echo
  if [ -n "${checked[$app]:-}" ]; then
    echo "== $app ${size[$app]}, $ranks ranks, best of $repeat (every x within 1e-9 of the sequential one)"
  else
    echo "== $app ${size[$app]}, $ranks ranks, best of $repeat (all checksums equal to sequential ${want[$app]})"
  fi
  printf '%-24s %10s %11s %9s %9s\n' version "time (s)" efficiency "x hand" "x pass"
  versions_of "$app"
  s=${best[$app.seq]} h=${best[$app.hand]:-} p=${best[$app.pass]}
  for v in "${versions[@]}"; do
    t=${best[$app.$v]} n=$ranks
    [ "$v" = seq ] && n=1  # one core
    printf '%-24s %10s %11s %9s %9s\n' "${label[$v]}" "$t" \
      "$(awk -v s="$s" -v t="$t" -v n="$n" 'BEGIN { printf "%.3f", s / (n * t) }')" "$([ -n "$h" ] && ratio "$t" "$h" || echo -)" "$(ratio "$t" "$p")"
  done
done

[ -n "${want[jacobi]:-}" ] || exit 0  # the targets are about Jacobi
# Targets: time(ours) / time(MPI) <= 1 and time(ours) / time(OpenMP) <= 1.1, for Jacobi.
# Judged on the ratio of best times; the ratios within each round (the two runs minutes
# apart at most) show how far the machine's drift moves it: their median, range, and in how
# many rounds the ratio was within the target.
echo
echo "== targets (Jacobi; ratio = our time / peer time; per round: median [min, max] of $repeat)"
target() {  # target OURS PEER LIMIT
  local r k rounds=()
  r=$(ratio "${best[jacobi.$1]}" "${best[jacobi.$2]}")
  for ((k = 1; k <= repeat; ++k)); do rounds+=("$(ratio "${times[jacobi.$1.$k]}" "${times[jacobi.$2.$k]}")"); done
  printf '%-24s / %-16s %7s  (target <= %s: %s)  per round %s\n' "${label[$1]}" "${label[$2]}" "$r" "$3" \
    "$(awk -v r="$r" -v l="$3" 'BEGIN { print (r <= l ? "met" : "NOT met") }')" \
    "$(printf '%s\n' "${rounds[@]}" | sort -g | awk -v l="$3" -v m="$(printf '%s\n' "${rounds[@]}" | median)" \
         '{ v[NR] = $1; k += $1 <= l } END { printf "%.3f [%.3f, %.3f], within the target in %d of %d", m, v[1], v[NR], k, NR }')"
}
for ours in hand pass_static pass; do
  target "$ours" mpi 1.0
  target "$ours" omp 1.1
done
