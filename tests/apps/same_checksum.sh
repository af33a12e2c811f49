#!/usr/bin/env bash
# same_checksum.sh REFERENCE-COMMAND... -- COMMAND...
# Runs both commands and fails unless each prints one "checksum <hex>" line and they are equal.
set -uo pipefail
ref=()
while (($#)) && [ "$1" != -- ]; do ref+=("$1"); shift; done
[ "${1:-}" = -- ] && (($# > 1)) || { echo "usage: $0 REFERENCE... -- COMMAND..." >&2; exit 2; }
shift
checksum_of() {
  local out
  out=$("$@") || { echo "FAILED (exit $?): $*" >&2; return 1; }
  local sums
  sums=$(grep -E '^checksum [0-9a-f]{16}$' <<<"$out" | awk '{print $2}')
  [ "$(wc -l <<<"$sums")" -eq 1 ] && [ -n "$sums" ] || { echo "no single checksum line from: $*" >&2; echo "$out" >&2; return 1; }
  echo "$sums"
}
want=$(checksum_of "${ref[@]}") || exit 1
got=$(checksum_of "$@") || exit 1
echo "reference $want, got $got: $*"
[ "$want" = "$got" ]
