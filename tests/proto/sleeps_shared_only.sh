#!/usr/bin/env bash
# sleeps_shared_only.sh CMD...: runs a job that prints its statistics (dsmrun --stats) and
# passes when every rank slept only in waits it began with its core shared
# (shared_core_waits): such a rank sleeps at once by design, whatever its poll budget, and
# one whose core is its own polls for the whole budget. With a budget longer than any wait,
# any other sleep means the budget was not kept.
set -uo pipefail
out=$("$@")
rc=$?
echo "$out"
((rc == 0)) || { echo "sleeps_shared_only: the job failed"; exit 1; }
awk '$1 == "sleeps" { for (i = 2; i <= NF; ++i) sleeps[i] = $i; ranks = NF - 1 }
     $1 == "shared_core_waits" { for (i = 2; i <= NF; ++i) shared[i] = $i }
     END {
       if (!ranks) { print "sleeps_shared_only: no sleeps counter in the statistics"; exit 1 }
       bad = 0
       for (i = 2; i <= ranks + 1; ++i) {
         printf "sleeps_shared_only: rank %d slept %s times, %s of them with its core shared\n", i - 2, sleeps[i], shared[i]
         if (sleeps[i] != shared[i]) bad = 1
       }
       if (bad) { print "sleeps_shared_only: a rank slept while its core was its own"; exit 1 }
       print "sleeps_shared_only ok"
     }' <<<"$out"
