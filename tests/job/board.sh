#!/usr/bin/env bash
# board.sh MODE DSMRUN DSM-TOP DSM_CHECK: the statistics board through real processes.
#   live     3 ranks take locks and barriers for 4 s; dsm-top reads the board meanwhile: the
#            counters grow, never exceed the final --stats-json, and dsmrun --watch's last
#            table equals it; each rank's final sent_to adds up to its msgs_sent and
#            bytes_sent; the board is gone from /dev/shm after the job.
#   crash    a rank is killed with SIGSEGV mid-job: the board is gone after the job too.
#   foreign  an object named like a board but holding other bytes is refused by dsm-top.
set -u
mode=$1 dsmrun=$2 top=$3 prog=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "board.sh $mode: $*"; exit 1; }

# The board's name, from dsmrun's mappings (it creates the board before starting the ranks).
board_of() {
  local name='' _
  for _ in $(seq 1 100); do
    name=$(grep -o 'dsm-[0-9a-f]\{16\}-board' "/proc/$1/maps" 2>/dev/null | head -n 1)
    [ -n "$name" ] && "$top" --json "$name" 2>/dev/null | jq -e '.ranks | length == 3' >/dev/null && break
    sleep 0.1
  done
  echo "$name"
}

# field JSON RANK NAME: a rank's counter in a dsm-top --json sample.
field() { jq -r --argjson r "$2" ".ranks[] | select(.rank == \$r) | .counters.$3" "$1"; }

case $mode in
live)
  "$dsmrun" -n 3 --timeout 60 --watch=0.5 --stats-json "$tmp/final.json" "$prog" sync_for 4 2>"$tmp/watch" &
  job=$!
  name=$(board_of "$job")
  [ -n "$name" ] || fail "no board with 3 ranks appeared"
  for i in 1 2 3 4; do
    "$top" --json "$name" >"$tmp/sample$i" || fail "dsm-top could not read $name"
    sleep 0.5
  done
  wait "$job" || { cat "$tmp/watch"; fail "the job failed"; }
  echo "board $name, first and last samples:"
  jq -c '.ranks[] | {rank, state, barriers: .counters.barriers, msgs_sent: .counters.msgs_sent}' "$tmp/sample1" "$tmp/sample4"
  for r in 0 1 2; do
    for c in barriers lock_acquires msgs_sent bytes_sent; do
      a=$(field "$tmp/sample1" $r $c) b=$(field "$tmp/sample4" $r $c)
      ((b > a)) || fail "rank $r: $c did not grow while the job ran ($a, then $b)"
    done
    # Every counter the board shows is one of --stats-json's, and at most its final value.
    final=$(jq -c --argjson r $r '.[] | select(.rank == $r) | .counters' "$tmp/final.json")
    jq -e --argjson f "$final" --argjson r $r \
      '.ranks[] | select(.rank == $r) | .counters | to_entries | all(.key as $k | $f | has($k))' \
      "$tmp/sample4" >/dev/null || fail "rank $r: the board has counters --stats-json lacks"
    for c in $(jq -r '.ranks[0].counters | keys[] | select(endswith("_seconds") | not)' "$tmp/sample4"); do
      live=$(field "$tmp/sample4" $r "$c") end=$(jq -r ".$c" <<<"$final")
      ((live <= end)) || fail "rank $r: $c was $live on the board, $end at the end"
    done
    # dsmrun --watch's last table (every rank finished): columns rank pid state for(s)
    # msgs_sent bytes_sent comm(s) barriers locks faults.
    row=$(awk -v r=$r '/job ended/ { last = 1 } last && $1 == r && $3 == "finished"' "$tmp/watch")
    [ -n "$row" ] || { cat "$tmp/watch"; fail "no final --watch line for rank $r"; }
    read -r _ _ _ _ msgs bytes _ barriers locks _ <<<"$row"
    for pair in "msgs_sent $msgs" "bytes_sent $bytes" "barriers $barriers" "lock_acquires $locks"; do
      set -- $pair
      [ "$(jq -r ".$1" <<<"$final")" = "$2" ] || fail "rank $r: --watch's last $1 $2 differs from --stats-json"
    done
    # What a rank sent to each rank is its share of the network's traffic; none goes to itself.
    jq -e --argjson r $r '.[] | select(.rank == $r) | .counters as $c | .sent_to |
        (.msgs | length) == 3 and (.msgs | add) == $c.msgs_sent and (.bytes | add) == $c.bytes_sent and
        .msgs[$r] == 0 and .bytes[$r] == 0' "$tmp/final.json" >/dev/null ||
      fail "rank $r: sent_to does not add up to msgs_sent and bytes_sent: $(jq -c --argjson r $r '.[] | select(.rank == $r) | .sent_to' "$tmp/final.json")"
  done
  echo "counters grew on the board and match the final --stats-json, sent_to included"
  ;;
crash)
  "$dsmrun" -n 3 --timeout 60 "$prog" sync_for 30 2>"$tmp/err" &
  job=$!
  name=$(board_of "$job")
  [ -n "$name" ] || fail "no board with 3 ranks appeared"
  victim=$("$top" --json "$name" | jq -r '.ranks[] | select(.rank == 1) | .pid')
  kill -SEGV "$victim"
  wait "$job" && fail "the job succeeded although rank 1 was killed"
  grep -q "rank 1 (pid $victim) killed by signal SIGSEGV" "$tmp/err" || { cat "$tmp/err"; fail "dsmrun did not report the crash"; }
  echo "rank 1 (pid $victim) killed with SIGSEGV"
  ;;
foreign)
  name=dsm-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')-board
  head -c 4096 /dev/urandom >"/dev/shm/$name"
  "$top" "$name" >"$tmp/out" 2>&1
  rc=$?
  rm -f "/dev/shm/$name"
  cat "$tmp/out"
  ((rc == 1)) || fail "dsm-top read a foreign object (exit status $rc)"
  grep -q "refusing $name: not a DSM statistics board" "$tmp/out" || fail "dsm-top did not say why"
  echo "foreign object refused"
  exit 0
  ;;
*) fail "unknown mode" ;;
esac
[ ! -e "/dev/shm/$name" ] || { rm -f "/dev/shm/$name"; fail "/dev/shm/$name is left after the job"; }
"$top" "$name" >"$tmp/out" 2>&1 && fail "dsm-top read a board after its job"
grep -q "no such board" "$tmp/out" || { cat "$tmp/out"; fail "dsm-top did not say the board is gone"; }
echo "board gone after the job"
