#!/usr/bin/env bash
# mpirun.sh [--bind] NP PROGRAM ARGS...
# Runs an MPI peer on this host with the settings this machine needs, for the benchmark and
# the tests alike:
#  - as root, Open MPI refuses to start without --allow-run-as-root;
#  - only the self and shared-memory (vader) transports: nothing probes the network;
#  - no single-copy mechanism: CMA (process_vm_readv) is refused in containers that
#    restrict ptrace, and vader would then fail at the first large message;
#  - --bind: one rank per core (--bind-to core), as dsmrun --bind and OMP_PROC_BIND do;
#    otherwise unbound and allowed to oversubscribe (tests on a loaded or 1-core machine).
# MPIEXEC names the launcher (default: mpirun on PATH). Exit 77 when there is none.
set -uo pipefail
bind=0
[ "${1:-}" = --bind ] && { bind=1; shift; }
(($# >= 2)) && [[ $1 =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [--bind] NP PROGRAM ARGS..." >&2; exit 2; }
np=$1
shift
mpiexec=${MPIEXEC:-mpirun}
command -v "$mpiexec" >/dev/null || { echo "$0: $mpiexec not found (apt-get install openmpi-bin)" >&2; exit 77; }
opts=(-np "$np" --mca btl "self,vader" --mca btl_vader_single_copy_mechanism none)
[ "$(id -u)" -eq 0 ] && opts+=(--allow-run-as-root)
if ((bind)); then opts+=(--map-by core --bind-to core); else opts+=(--bind-to none --oversubscribe); fi
exec "$mpiexec" "${opts[@]}" "$@"
