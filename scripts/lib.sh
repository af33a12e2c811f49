# Functions and settings shared by the scripts: sourced, never run. Sourcing it sets
#   top          the project's root
#   build, bin   the build directory (BUILD_DIR, default build/ under the root) and its bin/
#   script_name  the name messages start with (the script's file name unless set before)
# and installs the exit trap: the artificial load is stopped and the hooks given to at_exit
# run (last first) however the script ends, INT and TERM included.
# shellcheck shell=bash

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
script_name=${script_name:-$(basename "$0" .sh)}

# --- messages and exits ---
warn() { echo "$script_name: $*" >&2; }
# die: a run or a check failed (exit 1). die_setup: wrong use, or something missing that
# scripts/setup.sh provides (exit 2), so that a caller can tell the two apart.
die() { warn "$@"; exit "${die_status:-1}"; }
die_setup() { local die_status=2; die "$@"; }

exit_hooks=()
at_exit() { exit_hooks+=("$1"); }  # at_exit FUNCTION
on_exit() {
  local i
  load_stop
  for ((i = ${#exit_hooks[@]} - 1; i >= 0; i--)); do "${exit_hooks[i]}" || true; done
}
# Subshells start without traps: one that starts a load installs them again.
install_traps() {
  trap on_exit EXIT
  trap 'exit 130' INT TERM
}
install_traps

# scratch: a private temporary directory, removed on exit (make_scratch makes it).
scratch=
remove_scratch() { rm -rf "$scratch"; }
make_scratch() {
  [ -z "$scratch" ] || return 0
  scratch=$(mktemp -d)
  at_exit remove_scratch
}

# --- the build directory and the tools ---
use_build() {  # use_build DIR
  build=$1
  bin=$build/bin
}
use_build "${BUILD_DIR:-$top/build}"

need() {  # need PROGRAM...: each one is built in $bin
  local p
  for p in "$@"; do
    [ -x "$bin/$p" ] || die_setup "$bin/$p is missing: build first (scripts/setup.sh, or BUILD_DIR=DIR;" \
      "the _pass versions need -DDSM_BUILD_PASS=ON, the _mpi ones Open MPI)"
  done
}
need_command() {  # need_command COMMAND PACKAGE
  command -v "$1" >/dev/null || die_setup "$1 is missing (scripts/setup.sh installs $2)"
}

# --- the artificial load (dsm-load: a tight loop that takes half of the core it is bound to) ---
cores=$(nproc)
load_pid=
load_start() {  # load_start CORE [dsm-load options...]: replaces any running load
  load_stop
  need dsm-load
  "$bin/dsm-load" --core "$@" &
  load_pid=$!
  sleep 0.2
  kill -0 "$load_pid" 2>/dev/null || die "dsm-load did not start"
}
load_stop() {
  [ -n "$load_pid" ] || return 0
  kill "$load_pid" 2>/dev/null || true
  wait "$load_pid" 2>/dev/null || true
  load_pid=
}
# The core a load goes to at RANKS ranks bound with --bind: the last rank's (1 on two
# cores), so that exactly one rank shares its core with the load.
load_core() {  # load_core RANKS
  local r=$(($1 - 1))
  echo $((r < cores ? r : cores - 1))
}
oversubscribed() { (($1 > cores)) && echo 1 || echo 0; }  # oversubscribed RANKS: 1 or 0

# --- numbers and tables ---
# field NAME: the value on the line "NAME value" of a program's output (stdin): checksum, time.
field() { awk -v k="$1" '$1 == k {print $2}'; }
# ratio A B: A / B with 3 decimals (0 when B is 0).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }
# median: of the numbers on stdin, one a line (the mean of the middle two for an even count).
median() {
  sort -g | awk '{v[NR] = $1} END {if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'
}
csv_new() {  # csv_new FILE COLUMN...: the table with its header line
  local file=$1 IFS=,
  shift
  echo "$*" >"$file"
}
csv_row() {  # csv_row FILE VALUE...
  local file=$1 IFS=,
  shift
  echo "$*" >>"$file"
}
csv_show() { column -s, -t "$1"; }

# stats_rows FILE: from dsmrun --stats-json FILE, one CSV line per rank:
#   rank,user_s,protocol_s,wait_s,msgs,diff_bytes,whole_pages
# (msgs: sent over the network, those to the rank itself not counted; whole pages sent:
# fetched by a reader, or pushed to it with a barrier). The only place that knows the
# runtime's JSON names.
stats_rows() {
  jq -r 'to_entries[] | .key as $k | .value | (.counters // .) as $s | [(.rank // $k),
      ($s.user_seconds // 0), ($s.protocol_seconds // 0),
      (($s.comm_wait_seconds // 0) + ($s.lock_wait_seconds // 0) + ($s.barrier_wait_seconds // 0)),
      ($s.msgs_sent // 0), ($s.diff_bytes_created // 0), (($s.whole_pages_sent // 0) + ($s.pages_pushed // 0))] | @csv' "$1"
}

# --- running the applications, every result checked against the sequential one ---
# LB: the balancing policy of "with balancing"; EXP_VERSION: the DSM version the load
# measurements run (pass, the pass-compiled one; hand to run them without the pass).
# shellcheck disable=SC2034  # both used by the scripts that source this
lb=${LB:-auto} version=${EXP_VERSION:-pass}
declare -A size reference
mode=
# set_mode short|full: the problem sizes. Full: the paper's sizes, with more iterations than
# the paper so that the balancer's start-up (it watches 10 executions before moving work) is
# a small part of the time; short: seconds.
set_mode() {
  mode=$1
  if [ "$mode" = full ]; then
    size=([matmul]="--n 256 --iters 300" [jacobi]="--n 2050 --iters 500" [shallow]="--n 514 --iters 200")
  else
    size=([matmul]="--n 128 --iters 60" [jacobi]="--n 1026 --iters 150" [shallow]="--n 258 --iters 30")
  fi
}
parse_mode() {  # parse_mode [--short|--full]: a script's options (default --short)
  local arg m=short
  for arg in "$@"; do
    case $arg in
      --short | --full) m=${arg#--} ;;
      *) die_setup "unknown option '$arg' (use --short or --full)" ;;
    esac
  done
  set_mode "$m"
}

reference_of() {  # reference_of APP: the sequential checksum at the current size of APP
  local key="$1 ${size[$1]}"
  if [ -z "${reference[$key]:-}" ]; then
    need "${1}_seq"
    # shellcheck disable=SC2086  # the options are split on purpose
    reference[$key]=$("$bin/${1}_seq" ${size[$1]} | field checksum)
    [ -n "${reference[$key]}" ] || die "${1}_seq printed no checksum"
  fi
  echo "${reference[$key]}"
}

# run APP VERSION RANKS [dsmrun options...]: runs $bin/APP_VERSION at its current size
# (DSM versions through dsmrun --bind, seq and omp directly), checks its checksum against the
# sequential one, and sets run_time (seconds, as the program measured it) and run_out (its
# output).
run_time=
run_out=
# shellcheck disable=SC2034  # run_out: for the caller
run() {
  local app=$1 v=$2 ranks=$3 out want sum
  shift 3
  local exe=$bin/${app}_$v
  need "${app}_$v"
  reference_of "$app" >/dev/null  # fills the cache, which the $( ) below cannot
  want=$(reference_of "$app")
  # shellcheck disable=SC2086
  case $v in
    seq | omp) out=$(OMP_NUM_THREADS=$ranks OMP_WAIT_POLICY=passive OMP_PROC_BIND=true "$exe" ${size[$app]}) ;;
    *) need dsmrun
       out=$("$bin/dsmrun" -n "$ranks" --bind --timeout 1800 "$@" -- "$exe" ${size[$app]}) ;;
  esac || die "failed: $app $v on $ranks ranks $*"
  sum=$(field checksum <<<"$out")
  [ "$sum" = "$want" ] || die "$app $v on $ranks ranks $*: checksum '$sum', sequential $want"
  run_time=$(field time <<<"$out")
  run_out=$out
  echo "  $app $v ranks=$ranks $* : ${run_time} s" >&2
}
