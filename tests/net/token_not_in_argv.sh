#!/usr/bin/env bash
# Runs as a rank that dsmrun starts through a launch command: the job token must come on
# standard input (DSM_TOKEN=stdin), never on a command line, which every user of a host can
# read (ps). Reads it, looks for it in the arguments of every process of this host, then runs
# the DSM program given with the token in its environment.
set -u
[ "${DSM_TOKEN:-}" = stdin ] || { echo "token_not_in_argv: DSM_TOKEN is '${DSM_TOKEN:-}', not stdin" >&2; exit 3; }
IFS= read -r token && [ -n "$token" ] || { echo "token_not_in_argv: no token on standard input" >&2; exit 3; }
for f in /proc/[0-9]*/cmdline; do
  mapfile -d '' args 2>/dev/null <"$f" || continue
  if [[ "${args[*]}" == *"$token"* ]]; then
    echo "token_not_in_argv: the token is in the command line of ${f%/cmdline}: ${args[*]}" >&2
    exit 4
  fi
done
export DSM_TOKEN=$token
exec "$@"
