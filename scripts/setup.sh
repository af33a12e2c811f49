#!/usr/bin/env bash
# Idempotent set-up: installs the Debian packages the project needs (only those missing),
# then configures and builds into build/. Options go to CMake (e.g. -DDSM_BUILD_PASS=OFF).
# Environment: BUILD_DIR (default build), JOBS (default nproc).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
packages=(build-essential cmake ninja-build pkg-config git
  libfabric-dev libfabric-bin libboost-dev catch2 libcli11-dev
  clang-14 llvm-14-dev libclang-14-dev libclang-cpp14-dev libclang-rt-14-dev
  gnuplot-nox jq procps iproute2 util-linux
  openmpi-bin libopenmpi-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "$script_name: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
elif (($#)); then
  cmake "$build" "$@"
fi
cmake --build "$build" -j "${JOBS:-$(nproc)}"
