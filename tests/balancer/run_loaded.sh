#!/usr/bin/env bash
# Runs a DSM program on 2 ranks with the paper's artificial load on core LOAD_CORE (1).
# Usage: [LOAD_CORE=C] run_loaded.sh DSMRUN DSM_LOAD [dsmrun options, e.g. --bind] PROGRAM [args...]
set -euo pipefail
dsmrun=$1 load=$2
shift 2
# Bounds scaled to the build's speed as tests/net/expect.sh scales its own.
scale=${DSM_TEST_TIME_SCALE:-1}
"$load" --core "${LOAD_CORE:-1}" --seconds $((120 * scale)) &
load_pid=$!
trap 'kill "$load_pid" 2>/dev/null || true' EXIT
"$dsmrun" -n 2 --timeout $((100 * scale)) "$@"
