#!/usr/bin/env bash
# The paper's evaluation: each experiment writes RESULTS_DIR/NAME.csv and plots it into
# RESULTS_DIR/NAME.png with NAME.gp:
#   load (Fig. 4-5), ideal (Fig. 6), breakdown (Fig. 7), overhead (Fig. 8), shallow (Fig. 9),
#   dynamic (on/off load).
# Usage: scripts/experiments/run.sh [--short|--full] [NAME...]
#   --short (default): seconds, as CI runs them; --full: the paper's sizes, minutes.
#   NAME...: only these experiments (default: all, in the order above).
# Environment: BUILD_DIR (default build), RESULTS_DIR (default results), LB (the balancing
# policy of "with balancing", default auto), EXP_VERSION (the DSM version the load
# experiments run, default pass: the pass-compiled one; hand to try them without the pass).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
script_name=experiments
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "$here/../lib.sh"

all=(load ideal breakdown overhead shallow dynamic)
m=short
names=()
for arg in "$@"; do
  case $arg in
    --short | --full) m=${arg#--} ;;
    -h | --help) sed -n '2,/^set /{/^set /d; s/^# \{0,1\}//p}' "$0"; exit 0 ;;
    *) [[ " ${all[*]} " == *" $arg "* ]] ||
         die_setup "unknown option or experiment '$arg' (--short, --full, ${all[*]})"
       names+=("$arg") ;;
  esac
done
((${#names[@]})) || names=("${all[@]}")
set_mode "$m"
need_command gnuplot gnuplot-nox
need_command jq jq
need dsmrun dsm-load
for app in matmul jacobi shallow; do need "${app}_seq" "${app}_hand" "${app}_$version"; done
results=${RESULTS_DIR:-$top/results}
mkdir -p "$results"

# experiment NAME: NAME.sh writes its tables, then the main one is shown and plotted. The
# previous run's plot goes first, and a run that fails leaves its tables renamed
# *.csv.incomplete, so that no half-written table sits next to an old plot. NAME.sh runs in a
# subshell with its own exit trap, so its load and scratch files end with it.
experiment() {
  local name=$1 status f
  rm -f "$results/$name".png "$results/$name"-*.png "$results/$name"*.csv.incomplete
  set +e
  (
    set -e
    exit_hooks=() scratch=
    install_traps
    # shellcheck source=/dev/null
    source "$here/$name.sh"
  )
  status=$?
  set -e
  if ((status != 0)); then
    for f in "$results/$name".csv "$results/$name"-*.csv; do
      [ -f "$f" ] || continue
      mv "$f" "$f.incomplete"
      warn "$name failed; the partial table is in $f.incomplete"
    done
    exit "$status"
  fi
  csv_show "$results/$name.csv"
  gnuplot -e "csv='$results/$name.csv'; png='$results/$name.png'" "$here/$name.gp" ||
    die "gnuplot failed on $results/$name.csv"
  echo "wrote $results/$name.csv and $results/$name.png"
}

for name in "${names[@]}"; do
  echo "=== $name (--$mode)"
  experiment "$name"
done
