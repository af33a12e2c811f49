# What the liveness watch costs when nothing fails: Jacobi and matmul (pass-compiled, 2
# ranks, --bind) with the watch off (--liveness 0) and on (the default bound, 10 s),
# interleaved run by run; prints each side's median and their ratio.
#
# usage: scripts/bench liveness [BUILD_DIR]    REPEAT runs of each (default 6)
# shellcheck shell=bash disable=SC2154  # bin: set by lib.sh
(($# <= 1)) || die_setup "usage: scripts/bench liveness [BUILD_DIR]"
(($# == 0)) || use_build "$1"
need dsmrun jacobi_pass matmul_pass
repeat=${REPEAT:-6}
[[ $repeat =~ ^[1-9][0-9]*$ ]] || die_setup "REPEAT must be a positive integer"

run() {  # run BOUND APP ARGS... -> the app's time
  local bound=$1 app=$2
  shift 2
  "$bin/dsmrun" -n 2 --bind --liveness "$bound" --timeout 300 "$bin/$app" "$@" | awk '$1 == "time" {print $2}'
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }

printf "%-12s | %10s %10s %7s\n" app "off s" "on s" "on/off"
for app in "jacobi_pass --n 2050 --iters 600" "matmul_pass --n 512 --iters 10"; do
  off=() on=()
  for ((r = 0; r < repeat; r++)); do
    # shellcheck disable=SC2086  # the app's options are split on purpose
    off+=("$(run 0 $app)")
    # shellcheck disable=SC2086
    on+=("$(run 10 $app)")
  done
  a=$(printf '%s\n' "${off[@]}" | median) b=$(printf '%s\n' "${on[@]}" | median)
  printf "%-12s | %10.3f %10.3f %7.3f\n" "${app%% *}" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { print b / a }')"
done
