# Shared by the experiment scripts (source it): options, sizes, running a version and
# checking its checksum, the artificial load, the statistics JSON, plots.
#   exp-X.sh [--short|--full]    (default --short)
# Environment: BUILD_DIR (default build), RESULTS_DIR (default results), LB (the balancing
# policy of "with balancing", default auto), EXP_VERSION (the DSM version the load
# experiments run, default pass: the pass-compiled one; hand to try the scripts without it).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${BUILD_DIR:-$top/build}/bin
results=${RESULTS_DIR:-$top/results}
lb=${LB:-auto}
version=${EXP_VERSION:-pass}
mode=short
for arg in "$@"; do
  case $arg in
    --short) mode=short ;;
    --full) mode=full ;;
    *) echo "$(basename "$0"): unknown option '$arg' (use --short or --full)" >&2; exit 2 ;;
  esac
done
mkdir -p "$results"

# Problem sizes: full mode uses the paper's sizes, with more iterations than the paper so
# the balancer's start-up (it watches 10 executions before moving work) is a small part.
declare -A size
if [ "$mode" = full ]; then
  size=([matmul]="--n 256 --iters 300" [jacobi]="--n 2050 --iters 500" [shallow]="--n 514 --iters 200")
else
  size=([matmul]="--n 128 --iters 60" [jacobi]="--n 1026 --iters 150" [shallow]="--n 258 --iters 30")
fi
cores=$(nproc)

die() { echo "$(basename "$0"): $*" >&2; exit 1; }
need() {
  for b in "$@"; do
    [ -x "$bin/$b" ] || die "$bin/$b is missing: build first (scripts/setup.sh; the *_pass versions need -DDSM_BUILD_PASS=ON)"
  done
}
command -v gnuplot >/dev/null || die "gnuplot is missing (scripts/setup.sh installs gnuplot-nox)"
command -v jq >/dev/null || die "jq is missing (scripts/setup.sh installs it)"

# --- artificial load (dsm-load), always stopped on exit ---
load_pid=
load_start() {  # load_start CORE [dsm-load options...]
  load_stop
  "$bin/dsm-load" --core "$@" &
  load_pid=$!
  sleep 0.2
  kill -0 "$load_pid" 2>/dev/null || die "dsm-load did not start"
}
load_stop() {
  if [ -n "$load_pid" ]; then
    kill "$load_pid" 2>/dev/null || true
    wait "$load_pid" 2>/dev/null || true
    load_pid=
  fi
}
# The experiment's outputs (exp-NAME.sh writes results/NAME*.csv and .png): the previous
# run's plot goes now, and a run that fails leaves its CSVs renamed *.csv.incomplete, so no
# half-written table sits next to an old plot.
experiment=$(basename "$0" .sh)
experiment=${experiment#exp-}
rm -f "$results/$experiment".png "$results/$experiment"-*.png "$results/$experiment"*.csv.incomplete
finish() {
  local status=$?
  load_stop
  if ((status != 0)); then
    for f in "$results/$experiment".csv "$results/$experiment"-*.csv; do
      [ -f "$f" ] || continue
      mv "$f" "$f.incomplete"
      echo "$(basename "$0"): failed; the partial table is in $f.incomplete" >&2
    done
  fi
}
trap finish EXIT
trap 'exit 130' INT TERM

# --- running versions ---
# Reference checksum per app and size (size may be changed by a script), from <app>_seq.
declare -A reference
reference_of() {  # reference_of APP
  local key="$1 ${size[$1]}"
  if [ -z "${reference[$key]:-}" ]; then
    need "${1}_seq"
    # shellcheck disable=SC2086
    reference[$key]=$("$bin/${1}_seq" ${size[$1]} | awk '$1 == "checksum" {print $2}')
    [ -n "${reference[$key]}" ] || die "${1}_seq printed no checksum"
  fi
  echo "${reference[$key]}"
}

# run APP VERSION RANKS [dsmrun options...]: runs build/bin/APP_VERSION (through dsmrun
# --bind for DSM versions), checks its checksum against the sequential one, and sets
# run_time (seconds, as the program measured it) and run_out (its output).
run_time=
run_out=
run() {
  local app=$1 version=$2 ranks=$3
  shift 3
  local exe=$bin/${app}_${version} out want
  need "${app}_${version}"
  reference_of "$app" >/dev/null  # fills the cache outside the $( ) below
  want=$(reference_of "$app")
  case $version in
    seq | omp) out=$(OMP_NUM_THREADS=$ranks OMP_WAIT_POLICY=passive OMP_PROC_BIND=true "$exe" ${size[$app]}) ;;
    *) need dsmrun
       out=$("$bin/dsmrun" -n "$ranks" --bind --timeout 1800 "$@" -- "$exe" ${size[$app]}) ;;
  esac || die "failed: $app $version on $ranks ranks $*"
  local sum
  sum=$(awk '$1 == "checksum" {print $2}' <<<"$out")
  [ "$sum" = "$want" ] || die "$app $version on $ranks ranks $*: checksum '$sum', sequential $want"
  run_time=$(awk '$1 == "time" {print $2}' <<<"$out")
  run_out=$out
  echo "  $app $version ranks=$ranks $* : ${run_time} s" >&2
}

# The core the artificial load goes to: the last rank's core (1 on two cores), so that
# exactly one rank shares its core with the load.
load_core() {  # load_core RANKS
  local r=$(($1 - 1))
  echo $((r < cores ? r : cores - 1))
}
oversubscribed() { (($1 > cores)) && echo 1 || echo 0; }

# --- statistics (the only place that knows the runtime's JSON names) ---
# stats_rows FILE: one CSV line per rank: rank,user_s,protocol_s,wait_s,msgs,diff_bytes,whole_pages
# (whole pages sent: fetched by a reader, or pushed to it with a barrier)
stats_rows() {
  jq -r 'to_entries[] | .key as $k | .value | (.counters // .) as $s | [(.rank // $k),
      ($s.user_seconds // 0), ($s.protocol_seconds // 0),
      (($s.comm_wait_seconds // 0) + ($s.lock_wait_seconds // 0) + ($s.barrier_wait_seconds // 0)),
      ($s.msgs_sent // 0), ($s.diff_bytes_created // 0), (($s.whole_pages_sent // 0) + ($s.pages_pushed // 0))] | @csv' "$1"
}

# ratio A B: A / B with 3 decimals
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }

# plot NAME: runs scripts/plot-NAME.gp on results/NAME.csv into results/NAME.png
plot() {
  gnuplot -e "csv='$results/$1.csv'; png='$results/$1.png'" "$top/scripts/plot-$1.gp" ||
    die "gnuplot failed on $results/$1.csv"
  echo "wrote $results/$1.csv and $results/$1.png"
}
