#!/usr/bin/env bash
# kill_loading.sh DSMRUN PROG ARGS...: a rank of a 2-rank job gets SIGSEGV from outside while
# it loads libfabric, whose libinfinipath installs crash handlers that exit(1) (fabric_lib.cpp
# holds such signals back until they are dropped). dsmrun must report the signal. (Run under
# expect.sh, which also checks /proc for leftover processes.)
set -u
dsmrun=$1
shift
err=$(mktemp)
trap 'rm -f "$err"' EXIT
"$dsmrun" -n 2 --timeout 30 "$@" 2>"$err" &
job=$!
victim=''
for _ in $(seq 1 3000); do  # until a rank maps libinfinipath: its constructors run next
  for pid in $(pgrep -P "$job"); do
    if grep -q libinfinipath "/proc/$pid/maps" 2>/dev/null; then
      victim=$pid
      break 2
    fi
  done
  sleep 0.001
done
if [ -z "$victim" ]; then
  wait "$job"
  echo "kill_loading: no rank loaded libinfinipath (a libfabric without psm): nothing to check"
  exit 0
fi
kill -SEGV "$victim"
wait "$job"
rc=$?
cat "$err"
if [ $rc -eq 0 ] || ! grep -q "(pid $victim) killed by signal SIGSEGV" "$err"; then
  echo "kill_loading: dsmrun exited with $rc and did not report rank pid $victim killed by SIGSEGV"
  exit 1
fi
echo "kill_loading: rank pid $victim got SIGSEGV while loading libfabric and died of it"
