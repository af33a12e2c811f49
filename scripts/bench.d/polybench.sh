# The ported PolyBench kernels at LARGE: kernel-only time, sequential against OpenMP and DSM
#
# Builds the LARGE versions of each ported kernel (pb_<kernel>_large_{plain,omp,pass}), then
# runs, interleaved round by round: the sequential build (1 rank, no dsmrun), the OpenMP build
# (2 threads, bound: OMP_PROC_BIND=close) and the DSM build (2 ranks, dsmrun --bind). Each
# prints its kernel time between two barriers on standard error; every run's dump is checked
# against the sequential one. Prints the medians and the ratios DSM / OpenMP and OpenMP /
# sequential, and the median of DSM / OpenMP over the kernels.
#
# usage: scripts/bench polybench [BUILD_DIR]    ROUNDS rounds (default 3); KERNELS: the kernels
# to run, separated by spaces (default all thirteen)
# shellcheck shell=bash disable=SC2154  # bin, build: set by lib.sh
(($# <= 1)) || die_setup "usage: scripts/bench polybench [BUILD_DIR]"
(($# == 0)) || use_build "$1"
need dsmrun
rounds=${ROUNDS:-3}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die_setup "ROUNDS must be a positive integer"
all=(bicg gemver jacobi_1d 3mm syr2k symm correlation adi deriche cholesky gramschmidt ludcmp trisolv)
read -r -a kernels <<<"${KERNELS:-${all[*]}}"
((${#kernels[@]} > 0)) || die_setup "KERNELS names no kernel"
for k in "${kernels[@]}"; do
  [[ " ${all[*]} " == *" $k "* ]] || die_setup "KERNELS: unknown kernel '$k' (known: ${all[*]})"
done
targets=()
for k in "${kernels[@]}"; do targets+=("pb_${k}_large_plain" "pb_${k}_large_omp" "pb_${k}_large_pass"); done
cmake --build "$build" --target "${targets[@]}" >/dev/null || die "cannot build the LARGE kernels in $build"
make_scratch

# run KERNEL VERSION: the kernel's time; its dump goes to $scratch/KERNEL.VERSION.
run_version() {
  local k=$1 v=$2 out=$scratch/$1.$2 err=$scratch/$1.$2.err
  case $v in
    seq) "$bin/pb_${k}_large_plain" >"$out" 2>"$err" ;;
    omp) OMP_NUM_THREADS=2 OMP_PROC_BIND=close "$bin/pb_${k}_large_omp" >"$out" 2>"$err" ;;
    dsm) "$bin/dsmrun" -n 2 --bind --timeout 600 "$bin/pb_${k}_large_pass" >"$out" 2>"$err" ;;
  esac || die "$k ($v) failed: $(tail -3 "$err")"
  field kernel <"$err"
}

printf "%-10s | %9s %9s %9s | %8s %8s\n" kernel "seq s" "omp s" "dsm s" "dsm/omp" "omp/seq"
ratios=()
for k in "${kernels[@]}"; do
  declare -A times=([seq]="" [omp]="" [dsm]="")
  for ((r = 0; r < rounds; r++)); do
    for v in seq omp dsm; do
      times[$v]+="$(run_version "$k" "$v") "
      [ "$v" = seq ] || cmp -s "$scratch/$k.seq" "$scratch/$k.$v" || die "$k: the $v build's dump differs from the sequential one"
    done
  done
  s=$(tr ' ' '\n' <<<"${times[seq]}" | median) o=$(tr ' ' '\n' <<<"${times[omp]}" | median)
  d=$(tr ' ' '\n' <<<"${times[dsm]}" | median)
  ratios+=("$(ratio "$d" "$o")")
  printf "%-10s | %9.4f %9.4f %9.4f | %8s %8s\n" "$k" "$s" "$o" "$d" "$(ratio "$d" "$o")" "$(ratio "$o" "$s")"
  unset times
done
echo "median dsm/omp over the kernels: $(printf '%s\n' "${ratios[@]}" | median)"
