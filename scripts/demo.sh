#!/usr/bin/env bash
# The first command to try: builds everything (scripts/setup.sh), then Jacobi at 2 ranks
# bound to the two cores, with the artificial load on core 1, without and with balancing,
# and prints the times and ratios. Short sizes (seconds); scripts/experiments/run.sh --full
# runs the paper's experiments at full size. Environment: BUILD_DIR, LB, EXP_VERSION (as for
# the experiments).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
"$top/scripts/setup.sh"
set_mode short
size[jacobi]="--n 2050 --iters 300"  # the paper's grid: a second or two per run
run jacobi "$version" 2 --lb static
none=$run_time
load_start 1
run jacobi "$version" 2 --lb static
loaded=$run_time
run jacobi "$version" 2 --lb "$lb"
balanced=$run_time
load_stop
ideal=$(awk -v t="$none" 'BEGIN { printf "%.6f", t * 2 / 1.5 }')
cat <<TABLE

Jacobi ${size[jacobi]}, 2 ranks (--bind), artificial load on core 1
  no load                          ${none} s
  load, no balancing (static)      ${loaded} s   load/no-load     $(ratio "$loaded" "$none")
  load, balancing (--lb $lb)       ${balanced} s   balanced/no-load $(ratio "$balanced" "$none")
  ideal (no-load x 2 / 1.5)        ${ideal} s   balanced/ideal   $(ratio "$balanced" "$ideal")
  speed-up from balancing under load: $(ratio "$loaded" "$balanced")
TABLE
