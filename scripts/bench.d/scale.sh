# What a barrier costs as the job grows, and a model of it up to 1024 ranks.
#
# The busiest rank's messages and bytes per barrier, and rank 0's time per barrier, when
# every rank writes one word of its own page between barriers
# (dsm_check barrier_notices; tests/proto/barrier_costs.sh), at each rank count on this host;
# with FLAT=1 also with one manager for all (the tree's fan-out as large as the job). Then a
# model: bytes per barrier fitted as a + b*P over the measured counts of 4 and more, messages
# at most fan-out + 1, and the time as 2 * depth hops at the cost of one hop measured at 2
# ranks; its predictions at 256 and 1024 ranks beside the measured points. Times are shown
# only where the ranks have a core each: beyond, they time the scheduler.
#
# usage: scripts/bench scale [BUILD_DIR]   RANKS (default "2 4 8 16 32 64"), FLAT (0),
#                                          FANOUT (DSM_BARRIER_FANOUT, default 3),
#                                          PROVIDER (default shm; tcp: its hop in the model)
# shellcheck shell=bash disable=SC2154  # bin, top: set by lib.sh
(($# <= 1)) || die_setup "usage: scripts/bench scale [BUILD_DIR]"
(($# == 0)) || use_build "$1"
need dsmrun dsm_check
ranks=${RANKS:-2 4 8 16 32 64}
fanout=${FANOUT:-3}
[[ $fanout =~ ^[1-9][0-9]*$ ]] || die_setup "FANOUT must be a positive integer"
costs=$top/tests/proto/barrier_costs.sh

printf "%-6s %-5s | %9s %12s %12s\n" ranks tree "msgs/bar" "bytes/bar" "us/bar"
points=()
for n in $ranks; do
  if ! [[ $n =~ ^[1-9][0-9]*$ ]] || ((n < 2)); then die_setup "RANKS must be counts of 2 or more"; fi
  kinds=(tree)
  [ "${FLAT:-0}" = 1 ] && kinds+=(flat)
  for kind in "${kinds[@]}"; do
    f=$fanout
    [ "$kind" = flat ] && f=$n
    read -r msgs bytes secs < <(LONG=$((n <= cores ? 2060 : 160)) "$costs" "$bin/dsmrun" "$bin/dsm_check" "$n" \
      --provider "${PROVIDER:-shm}" --env "DSM_BARRIER_FANOUT=$f") || die "the job at $n ranks failed"
    us=-
    ((n <= cores)) && us=$(awk -v s="$secs" 'BEGIN { printf "%.1f", s * 1e6 }')
    printf "%-6s %-5s | %9s %12s %12s\n" "$n" "$kind" "$msgs" "$bytes" "$us"
    [ "$kind" = tree ] && points+=("$n $bytes $secs")
  done
done
echo
printf '%s\n' "${points[@]}" | awk -v f="$fanout" '
  function depth(p,   d, first, width) { d = 0; first = 1; width = f; while (first < p) { d++; first += width; width *= f } return d }
  { P[NR] = $1; B[NR] = $2; S[NR] = $3 }
  $1 == 2 { hop = $3 / 2 }
  END {
    for (i = 1; i <= NR; ++i) if (P[i] >= 4) { n++; sx += P[i]; sy += B[i]; sxx += P[i] * P[i]; sxy += P[i] * B[i] }
    if (n < 2) { print "model: needs two measured counts of 4 ranks or more"; exit }
    b = (n * sxy - sx * sy) / (n * sxx - sx * sx); a = (sy - b * sx) / n
    printf "model: busiest rank bytes/barrier = %.0f + %.1f * P; messages <= %d; time = 2 * depth * %.1f us (one hop, from 2 ranks)\n", a, b, f + 1, hop * 1e6
    printf "%-6s | %12s %12s %6s %12s\n", "ranks", "bytes model", "measured", "depth", "us model"
    for (i = 1; i <= NR; ++i) printf "%-6d | %12.0f %12s %6d %12.1f\n", P[i], a + b * P[i], B[i], depth(P[i]), 2 * depth(P[i]) * hop * 1e6
    for (p = 256; p <= 1024; p *= 4) printf "%-6d | %12.0f %12s %6d %12.1f\n", p, a + b * p, "-", depth(p), 2 * depth(p) * hop * 1e6
  }'
