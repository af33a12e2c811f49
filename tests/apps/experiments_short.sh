#!/usr/bin/env bash
# experiments_short.sh BUILD_DIR RESULTS_DIR: scripts/experiments/run.sh --short (as CI runs
# the experiments), then every experiment's table has rows and its plot is a PNG.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$2"
BUILD_DIR=$1 RESULTS_DIR=$2 "$top/scripts/experiments/run.sh" --short
for name in load ideal breakdown overhead shallow dynamic; do
  rows=$(($(wc -l <"$2/$name.csv") - 1))
  ((rows > 0)) || { echo "experiments_short: $2/$name.csv has no rows"; exit 1; }
  [ "$(head -c 4 "$2/$name.png" | tail -c 3)" = PNG ] || { echo "experiments_short: $2/$name.png is not a PNG"; exit 1; }
  echo "experiments_short: $name: $rows rows and a plot"
done
