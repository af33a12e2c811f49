#!/usr/bin/env bash
# load_duty.sh DSM_LOAD: an on/off load (duty 0.25, period 0.4 s) uses about a quarter of a
# core over 2 s: between 5 % (a test running beside it on the same core halves it) and 45 %
# (a load that ignored --period or --duty would use all it can get).
set -eu
TIMEFORMAT='%U %S'
cpu=$({ time "$1" --core 0 --period 0.4 --duty 0.25 --seconds 2 >/dev/null; } 2>&1)
awk -v t="$cpu" 'BEGIN { split(t, a, " "); share = (a[1] + a[2]) / 2
  printf "load_duty: %.2f of a core over 2 s (duty 0.25)\n", share; exit !(share > 0.05 && share < 0.45) }'
