#!/usr/bin/env bash
# Soak run: one job of 4 ranks for SOAK_SECONDS (default 120) doing lock-heavy and
# barrier-heavy rounds, each checked exactly against the sequential result
# (tests/reliability/soak_program.cpp), with a small DSM_GC_BOUND so garbage is collected
# often. While it runs, every rank's open file descriptors and mappings are sampled from
# /proc; the script fails if the job fails, a result differs, or descriptors or mappings
# grow between the first and the last quarter of the run. Prints peak protocol memory.
#
#   SOAK_SECONDS=300 SOAK_RANKS=4 SOAK_GC_BOUND=1M BUILD_DIR=build scripts/soak.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
seconds=${SOAK_SECONDS:-120}
ranks=${SOAK_RANKS:-4}
gc_bound=${SOAK_GC_BOUND:-1M}
need dsmrun soak_program
make_scratch

# Mappings other than the shared region itself: the region's per-page protections split it
# into many entries that come and go with page states, which is not a leak.
maps_count() { grep -vc 'dsm-region' "/proc/$1/maps" 2>/dev/null || echo 0; }
fd_count() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }

echo "soak: $ranks ranks, ${seconds} s, DSM_GC_BOUND=$gc_bound"
"$bin/dsmrun" -n "$ranks" --stats --timeout $((seconds * 3 + 120)) --env DSM_GC_BOUND="$gc_bound" \
  "$bin/soak_program" "$seconds" >"$scratch/job.txt" 2>&1 &
job=$!
# samples.txt: elapsed-seconds rank-pid fds maps rss-kB
start=$(date +%s)
sleep 2
while kill -0 "$job" 2>/dev/null; do
  now=$(($(date +%s) - start))
  for pid in $(pgrep -P "$job" || true); do
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    echo "$now $pid $(fd_count "$pid") $(maps_count "$pid") ${rss:-0}" >>"$scratch/samples.txt"
  done
  sleep 1
done
rc=0
wait "$job" || rc=$?
cat "$scratch/job.txt"
if [ $rc -ne 0 ] || ! grep -q '^soak ok' "$scratch/job.txt"; then
  die "FAIL (dsmrun exit status $rc)"
fi

peak=$(awk '$1 == "protocol_bytes_peak" {m = 0; for (i = 2; i <= NF; ++i) if ($i > m) m = $i; print m}' "$scratch/job.txt")
gcs=$(field gcs <"$scratch/job.txt")
echo "soak: peak protocol memory $((${peak:-0} / 1024)) KiB (DSM_GC_BOUND=$gc_bound), $gcs collections"

# Per rank: the largest fd/maps counts in the first and in the last quarter of the samples
# (after the 2 s start-up); they must not grow. RSS is printed for information.
[ -s "$scratch/samples.txt" ] || die "FAIL (no samples: the job ended too soon; raise SOAK_SECONDS)"
awk -v rank_count="$ranks" '
  { t[NR] = $1; pid[NR] = $2; fd[NR] = $3; mp[NR] = $4; rss[NR] = $5; if ($1 > last) last = $1; if (first == "" || $1 < first) first = $1 }
  END {
    q = (last - first) / 4; bad = 0
    for (i = 1; i <= NR; ++i) {
      p = pid[i]; pids[p] = 1
      if (t[i] <= first + q) { if (fd[i] > fd0[p]) fd0[p] = fd[i]; if (mp[i] > mp0[p]) mp0[p] = mp[i]; if (rss[i] > rss0[p]) rss0[p] = rss[i] }
      if (t[i] >= last - q)  { if (fd[i] > fd1[p]) fd1[p] = fd[i]; if (mp[i] > mp1[p]) mp1[p] = mp[i]; if (rss[i] > rss1[p]) rss1[p] = rss[i] }
    }
    n = 0
    for (p in pids) {
      ++n
      printf "soak: pid %s: fds %d -> %d, mappings %d -> %d, RSS %d -> %d KiB\n", p, fd0[p], fd1[p], mp0[p], mp1[p], rss0[p], rss1[p]
      if (fd1[p] > fd0[p] || mp1[p] > mp0[p]) bad = 1
    }
    if (n != rank_count) { printf "soak: sampled %d processes, expected %d\n", n, rank_count; bad = 1 }
    printf "soak: %d samples over %d s\n", NR, last - first
    exit bad
  }' "$scratch/samples.txt" || die "FAIL (descriptors or mappings grew)"
echo "soak: pass"
