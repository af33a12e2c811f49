#!/usr/bin/env bash
# in_terminal.sh INPUT CMD...: runs CMD with a terminal (a pseudo-terminal from script(1)) as
# its standard input, output and controlling terminal, typing INPUT (printf %b escapes) into it;
# exits with CMD's status.
set -u
input=$1
shift
printf '%b' "$input" | exec script -qec "$(printf '%q ' "$@")" /dev/null
