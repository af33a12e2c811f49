#!/usr/bin/env bash
# nproc_limited.sh NPROC EXPECT ARGS... CMD...: runs tests/net/expect.sh with CMD limited to
# NPROC processes (RLIMIT_NPROC, which root ignores). As root, CMD runs as the unprivileged
# user 65534 (nobody); as another user, as root of a user namespace of its own, where the
# limit counts only the namespace's processes (Linux 5.14 on; before, all of the user's, and
# the first fork fails). Skips (77) only where neither can be done.
set -u
nproc=$1 expect=$2
shift 2
# expect.sh's own arguments (status, seconds, regex) come first; the command is the rest.
cmd=("${@:4}")
dir=
trap '[ -z "$dir" ] || rm -rf "$dir"' EXIT
if [ "$(id -u)" = 0 ]; then
  limited=(setpriv --reuid 65534 --regid 65534 --clear-groups)
  # A build tree the user cannot reach (one under /root): the program runs from a copy (dsmrun
  # links no library of the tree).
  if ! "${limited[@]}" test -x "${cmd[0]}"; then
    dir=$(mktemp -d) && chmod 755 "$dir" && cp "${cmd[0]}" "$dir/" || exit 1
    cmd[0]=$dir/$(basename "${cmd[0]}")
  fi
else
  limited=(unshare --user --map-root-user)
  "${limited[@]}" true 2>/dev/null || { echo "no user namespace for this user here: skipped"; exit 77; }
fi
# The limit set inside: a user namespace keeps its creator's limit for the user's processes
# outside it.
"$expect" "$1" "$2" "$3" "${limited[@]}" prlimit --nproc="$nproc" "${cmd[@]}"
