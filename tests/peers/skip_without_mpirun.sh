#!/usr/bin/env bash
# skip_without_mpirun.sh COMMAND...: exit 77 (CTest's skip) with a message when mpirun is
# missing at test time (the MPI binaries may have been built where mpirun was installed);
# otherwise runs COMMAND under a time limit, so a stuck MPI start-up fails instead of hanging.
set -uo pipefail
command -v "${MPIEXEC:-mpirun}" >/dev/null || { echo "SKIP: ${MPIEXEC:-mpirun} not found (apt-get install openmpi-bin)"; exit 77; }
timeout -k 5 50 "$@"
rc=$?
((rc == 124)) && echo "timed out after 50 s: $*" >&2
exit $rc
