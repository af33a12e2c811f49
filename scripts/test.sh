#!/usr/bin/env bash
# The whole test suite: set-up and build (scripts/setup.sh), then every CTest test, then the
# runtime tests again in the AddressSanitizer/UBSan build. Environment: BUILD_DIR (default
# build), as for setup.sh. Not the ThreadSanitizer run (scripts/sanitize.sh thread): its build
# and tests take ~15 minutes on two cores, which would take the whole past half an hour.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
"$top/scripts/setup.sh"
cd "$build"
ctest --output-on-failure -j 2 --timeout 300
"$top/scripts/sanitize.sh" address
