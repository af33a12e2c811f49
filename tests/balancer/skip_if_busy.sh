#!/usr/bin/env bash
# skip_if_busy.sh: exits 77 (ctest's skip, through tests/net/expect.sh) with a line saying
# so when other programs keep the machine's cores busy before a test that puts its own load
# on a core: what such a test asserts (a rank leaving while the load runs, coming back
# after it) is then the other programs' doing as much as the runtime's. Busy: more than a
# quarter of all cores' time over one second. Exits 0 otherwise.
set -u
limit=0.25
read -r _ a1 a2 a3 a4 a5 a6 a7 a8 _ </proc/stat
sleep 1
read -r _ b1 b2 b3 b4 b5 b6 b7 b8 _ </proc/stat
total=$(((b1 + b2 + b3 + b4 + b5 + b6 + b7 + b8) - (a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8)))
idle=$(((b4 + b5) - (a4 + a5)))
if awk -v t="$total" -v i="$idle" -v l="$limit" 'BEGIN { exit !(t > 0 && (t - i) / t > l) }'; then
  awk -v t="$total" -v i="$idle" 'BEGIN { printf "skip: other programs kept %.0f %% of the cores busy before the test\n", 100 * (t - i) / t }'
  exit 77
fi
exit 0
