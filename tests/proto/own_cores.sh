#!/bin/sh
# own_cores.sh PATTERN CMD...: runs CMD (a dsmrun --stats job), passes when its output matches
# the extended regular expression PATTERN; when it does not and a rank slept in its waits
# because another program took its core (shared_core_waits above 100: the machine was
# busy, which the test's premise excludes), exits 77 (skipped); else fails.
pattern=$1
shift
out=$("$@" 2>&1)
status=$?
printf '%s\n' "$out"
[ "$status" -eq 0 ] || { echo "own_cores.sh: the job failed ($status)"; exit 1; }
printf '%s\n' "$out" | grep -Eq "$pattern" && exit 0
if printf '%s\n' "$out" | awk '$1 == "shared_core_waits" { for (i = 2; i <= NF; i++) if ($i > 100) busy = 1 } END { exit !busy }'; then
  echo "own_cores.sh: another program took the ranks' cores during the run: skipped"
  exit 77
fi
echo "own_cores.sh: output lacks /$pattern/"
exit 1
