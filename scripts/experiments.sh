#!/usr/bin/env bash
# Runs every experiment of the paper's evaluation, each writing results/<name>.csv and .png:
#   load (Fig. 4-5), ideal (Fig. 6), breakdown (Fig. 7), overhead (Fig. 8), shallow (Fig. 9),
#   dynamic (on/off load).
# Usage: scripts/experiments.sh [--short|--full]   (--short: seconds, for CI; --full: minutes)
# Environment as in scripts/exp-lib.sh (BUILD_DIR, RESULTS_DIR, LB, EXP_VERSION).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=${1:---short}
case $mode in
  --short | --full) ;;
  *) echo "usage: $0 [--short|--full]" >&2; exit 2 ;;
esac
for exp in load ideal breakdown overhead shallow dynamic; do
  echo "=== $exp ($mode)"
  "$here/exp-$exp.sh" "$mode"
done
