#!/usr/bin/env bash
# install_and_use.sh BUILD_DIR: installs the build into a fresh prefix, then uses only what is
# installed, as a user would: a CMake project outside the tree (find_package(dsm),
# dsm_add_executable) and the installed dsmc++ compile the same program, and the installed
# dsmrun runs both at 2 ranks; each prints the sum that the program compiled without the
# pass prints at 1 rank.
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/dsm-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
mv "$work/prefix" "$work/moved"  # the installation may move: dsmc++ finds itself
prefix=$work/moved
cmake -S "$here/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/consumer" -j 2 >/dev/null
"$prefix/bin/dsmc++" -O2 "$here/consumer/sum.cpp" -o "$work/sum_dsmcxx"
want=$("$work/consumer/sum_plain")
for prog in "$work/consumer/sum_pass" "$work/sum_dsmcxx"; do
  got=$("$prefix/bin/dsmrun" -n 2 --timeout 60 "$prog")
  echo "$(basename "$prog"): $got (1 rank without the pass: $want)"
  [ "$got" = "$want" ] || { echo "install_and_use: $prog gives a different result" >&2; exit 1; }
done
