#!/usr/bin/env bash
# pause_rank.sh SECONDS DSMRUN ARGS...: runs `DSMRUN ARGS...`, stops rank 1 (SIGSTOP) a
# second after every rank started, and lets it continue (SIGCONT) SECONDS later: a rank
# stopped for less than the liveness bound must be waited for, not given up. Exits with the
# job's status. (Run under expect.sh, which also checks /proc for leftover processes.)
set -u
pause=$1
shift
"$@" &
job=$!
rank1=''
for _ in $(seq 1 100); do  # until rank 1 has started
  for pid in $(pgrep -P "$job"); do
    tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qx 'DSM_RANK=1' && rank1=$pid
  done
  [ -n "$rank1" ] && break
  sleep 0.1
done
if [ -z "$rank1" ]; then
  echo "pause_rank: rank 1 did not start"
  kill "$job"
  exit 1
fi
sleep 1
kill -STOP "$rank1" && echo "pause_rank: rank 1 stopped for $pause s"
sleep "$pause"
kill -CONT "$rank1"
wait "$job"
