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

case $mode in
live)
  "$dsmrun" -n 3 --timeout 60 --watch=0.5 --stats-json "$tmp/final.json" "$prog" sync_for 4 2>"$tmp/watch" &
  job=$!
  name=$(board_of "$job")
  [ -n "$name" ] || fail "no board with 3 ranks appeared"
  "$top" --json "$name" >"$tmp/first" || fail "dsm-top could not read $name"
  # Samples for as long as the job runs, and keeps the last: a few samples at fixed times
  # could all fall before the ranks' first barrier on a busy machine. (The board goes with
  # the job, so a read that fails at the end is no error.)
  while sleep 0.5 && kill -0 "$job" 2>/dev/null; do
    "$top" --json "$name" >"$tmp/next" 2>/dev/null && mv "$tmp/next" "$tmp/last"
  done
  wait "$job" || { cat "$tmp/watch"; fail "the job failed"; }
  [ -s "$tmp/last" ] || fail "dsm-top read $name only once while the job ran"
  echo "board $name, first and last samples:"
  jq -c '.ranks[] | {rank, state, barriers: .counters.barriers, msgs_sent: .counters.msgs_sent}' "$tmp/first" "$tmp/last"
  # A jq for each check, not for each counter and rank: ~200 of them took a minute on a busy
  # machine. The counters of locks and barriers grew between the first and the last sample.
  complaints=$(jq -n -r --slurpfile a "$tmp/first" --slurpfile b "$tmp/last" '
    $a[0].ranks[] as $x | ($b[0].ranks[] | select(.rank == $x.rank)) as $y
    | ("barriers", "lock_acquires", "msgs_sent", "bytes_sent") as $c | select($y.counters[$c] <= $x.counters[$c])
    | "rank \($x.rank): \($c) did not grow while the job ran (\($x.counters[$c]), then \($y.counters[$c]))"') ||
    fail "jq could not read the samples"
  [ -z "$complaints" ] || fail "$complaints"
  # Every counter the board shows is one of --stats-json's, and at most its final value.
  complaints=$(jq -r --slurpfile f "$tmp/final.json" '
    .ranks[] | .rank as $r | ($f[0][] | select(.rank == $r) | .counters) as $at_end | .counters | to_entries[]
    | .key as $k
    | if ($at_end | has($k)) | not then "rank \($r): the board has \($k), which --stats-json lacks"
      elif (($k | endswith("_seconds")) | not) and .value > $at_end[$k] then
        "rank \($r): \($k) was \(.value) on the board, \($at_end[$k]) at the end"
      else empty end' "$tmp/last") || fail "jq could not read the last sample or --stats-json"
  [ -z "$complaints" ] || fail "$complaints"
  # dsmrun --watch's last table (every rank finished; columns rank pid state for(s) msgs_sent
  # bytes_sent comm(s) barriers locks faults) shows what --stats-json does.
  watched=$(awk '/job ended/ { last = 1 } last && $3 == "finished" { print $1, $5, $6, $8, $9 }' "$tmp/watch" | sort -n)
  final=$(jq -r '.[] | [.rank, (.counters | .msgs_sent, .bytes_sent, .barriers, .lock_acquires)] | map(tostring) | join(" ")' \
          "$tmp/final.json" | sort -n)
  [ "$watched" = "$final" ] ||
    { cat "$tmp/watch"; fail "--watch's last rank, msgs_sent, bytes_sent, barriers, locks: $watched; --stats-json: $final"; }
  # What a rank sent to each rank is its share of the network's traffic; none goes to itself.
  complaints=$(jq -r '.[] | .rank as $r | .counters as $c | .sent_to
    | select(((.msgs | length) == 3 and (.msgs | add) == $c.msgs_sent and (.bytes | add) == $c.bytes_sent
              and .msgs[$r] == 0 and .bytes[$r] == 0) | not)
    | "rank \($r): sent_to does not add up to msgs_sent and bytes_sent: \(tojson)"' "$tmp/final.json") ||
    fail "jq could not read --stats-json"
  [ -z "$complaints" ] || fail "$complaints"
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
