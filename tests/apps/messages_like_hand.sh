#!/usr/bin/env bash
# messages_like_hand.sh PERCENT DSMRUN-ARGS... -- HAND PASS APP-ARGS...
# Runs the hand-parallelized and the pass-compiled version through `dsmrun DSMRUN-ARGS
# --stats` and fails unless both give the same checksum and the pass-compiled one sends at
# most PERCENT % more messages in all than the hand version. In all: over the
# network (msgs_sent) and to the rank itself (msgs_self, a manager's own requests), every
# message the protocol sends.
set -uo pipefail
percent=$1; shift
dsmrun=()
while (($#)) && [ "$1" != -- ]; do dsmrun+=("$1"); shift; done
(($# >= 3)) || { echo "usage: $0 PERCENT DSMRUN-ARGS... -- HAND PASS APP-ARGS..." >&2; exit 2; }
shift
hand=$1 pass=$2; shift 2
run() {  # prints "checksum messages"
  local out
  out=$("${dsmrun[@]}" --stats -- "$@" 2>&1) || { echo "FAILED: ${dsmrun[*]} $*" >&2; echo "$out" >&2; return 1; }
  awk '$1 == "checksum" { sum = $2 } $1 == "msgs_sent" || $1 == "msgs_self" { for (i = 2; i <= NF; ++i) msgs += $i }
       END { if (sum == "" || msgs == "") exit 1; print sum, msgs }' <<<"$out" ||
    { echo "no checksum or msgs_sent in the output of: $*" >&2; echo "$out" >&2; return 1; }
}
read -r hand_sum hand_msgs < <(run "$hand" "$@") || exit 1
read -r pass_sum pass_msgs < <(run "$pass" "$@") || exit 1
echo "hand: checksum $hand_sum, $hand_msgs messages; pass: checksum $pass_sum, $pass_msgs messages"
[ "$hand_sum" = "$pass_sum" ] || { echo "checksums differ" >&2; exit 1; }
((pass_msgs * 100 <= hand_msgs * (100 + percent))) || { echo "pass-compiled sends more than $percent % more messages" >&2; exit 1; }
