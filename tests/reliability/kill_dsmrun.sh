#!/usr/bin/env bash
# kill_dsmrun.sh DSMRUN PROG ARGS...: dsmrun itself is killed with SIGKILL (no chance to stop
# the ranks or clean up) in the middle of a 3-rank shm job. Every rank must notice the lost
# rendezvous connection and exit within 10 s, and the job's shm segments must not stay in
# /dev/shm. (Run under expect.sh, which also checks /proc for leftover processes.)
set -u
dsmrun=$1
shift
"$dsmrun" -n 3 --provider shm "$@" &
job=$!
# The job's segments are named dsm-<digest of the token>-<rank>: read the prefix from a rank's mappings.
prefix='' pids=''
for _ in $(seq 1 100); do  # until every rank has joined and opened its endpoint
  pids=$(pgrep -P "$job" | tr '\n' ' ')
  for pid in $pids; do
    p=$(grep -o 'dsm-[0-9a-f]\{16\}-' "/proc/$pid/maps" 2>/dev/null | head -n 1)
    [ -n "$p" ] && prefix=$p
  done
  [ -n "$prefix" ] && [ -e "/dev/shm/${prefix}2" ] && break
  sleep 0.1
done
if [ -z "$prefix" ] || [ ! -e "/dev/shm/${prefix}2" ]; then
  echo "kill_dsmrun: the job did not start"
  kill -9 "$job"
  exit 1
fi
sleep 1
kill -9 "$job"
wait "$job" 2>/dev/null
alive() {  # a rank that has not exited (zombies waiting for init to reap them count as gone)
  local p
  for p in $pids; do
    [ -r "/proc/$p/stat" ] && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ] && echo "$p"
  done
}
start=$(date +%s%N)
for _ in $(seq 1 100); do
  [ -z "$(alive)" ] && break
  sleep 0.1
done
ms=$((($(date +%s%N) - start) / 1000000))
left=$(alive)
segments=$(find /dev/shm -maxdepth 1 -name "${prefix}*" -printf '%f ')
find /dev/shm -maxdepth 1 -name "${prefix}*" -delete  # never leave them, even on failure
if [ -n "$left" ]; then echo "kill_dsmrun: ranks still running 10 s after dsmrun was killed: $left"; exit 1; fi
if [ -n "$segments" ]; then echo "kill_dsmrun: shm segments left behind: $segments"; exit 1; fi
echo "kill_dsmrun: every rank exited ${ms} ms after dsmrun was killed, no segment left"
