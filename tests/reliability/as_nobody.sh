#!/usr/bin/env bash
# as_nobody.sh NPROC EXPECT ARGS... CMD...: runs tests/net/expect.sh with CMD as user nobody
# limited to NPROC processes (a limit root ignores). Skips (77) where that cannot be done.
set -u
nproc=$1 expect=$2
shift 2
as_nobody=(prlimit --nproc="$nproc" setpriv --reuid nobody --regid nogroup --clear-groups)
[ "$(id -u)" = 0 ] || { echo "not root: cannot become nobody: skipped"; exit 77; }
# expect.sh's own arguments (status, seconds, regex) come first; the command is the rest.
cmd=("${@:4}")
"${as_nobody[@]:2}" test -x "${cmd[0]}" || { echo "nobody cannot run ${cmd[0]} here: skipped"; exit 77; }
exec "$expect" "$1" "$2" "$3" "${as_nobody[@]}" "${cmd[@]}"
