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
token='' pids=''
for _ in $(seq 1 100); do  # until every rank has joined and opened its endpoint
  pids=$(pgrep -P "$job" | tr '\n' ' ')
  for pid in $pids; do token=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | sed -n 's/^DSM_TOKEN=//p'); done
  [ -n "$token" ] && [ -e "/dev/shm/dsm-${token:0:16}-2" ] && break
  sleep 0.1
done
if [ -z "$token" ] || [ ! -e "/dev/shm/dsm-${token:0:16}-2" ]; then
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
segments=$(find /dev/shm -maxdepth 1 -name "dsm-${token:0:16}-*" -printf '%f ')
find /dev/shm -maxdepth 1 -name "dsm-${token:0:16}-*" -delete  # never leave them, even on failure
if [ -n "$left" ]; then echo "kill_dsmrun: ranks still running 10 s after dsmrun was killed: $left"; exit 1; fi
if [ -n "$segments" ]; then echo "kill_dsmrun: shm segments left behind: $segments"; exit 1; fi
echo "kill_dsmrun: every rank exited ${ms} ms after dsmrun was killed, no segment left"
