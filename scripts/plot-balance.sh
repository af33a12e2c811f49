#!/usr/bin/env bash
# Draws a balancer trace (dsmrun --lb-trace FILE, or DSM_LB_TRACE_CSV) as a PNG: each rank's
# share of a loop's iterations, and the loop's period (one execution to the next, barriers
# included), over the seconds of the run.
#
# usage: scripts/plot-balance.sh TRACE.csv OUT.png [--loop NAME] [--mark EPOCH_SECONDS LABEL]...
#   --loop   the loop to draw (default: the one with the most executions)
#   --mark   a vertical line at that time (seconds since the epoch, as `date +%s.%N` prints
#            them and the trace's time column holds them): where a load started or stopped
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

(($# >= 2)) || die_setup "usage: scripts/plot-balance.sh TRACE.csv OUT.png [--loop NAME] [--mark EPOCH_SECONDS LABEL]..."
trace=$1 png=$2
shift 2
loop='' marks=()
while (($#)); do
  case $1 in
    --loop) (($# >= 2)) || die_setup "--loop needs a loop name"; loop=$2; shift 2 ;;
    --mark)
      (($# >= 3)) || die_setup "--mark needs a time and a label"
      [[ $2 =~ ^[0-9]+(\.[0-9]+)?$ ]] || die_setup "--mark: '$2' is not a time in seconds"
      marks+=("$2" "$3"); shift 3 ;;
    *) die_setup "unknown argument '$1'" ;;
  esac
done
[ -r "$trace" ] || die_setup "cannot read $trace"
[ "$(head -n 1 "$trace")" = "time,loop,execution,rank,iterations,seconds,period,power,moved,taken" ] ||
  die_setup "$trace is not a balancer trace (its first line is not the trace's header)"
need_command gnuplot gnuplot-nox

# Loop names may be quoted CSV fields with commas: awk splits on the last nine commas.
rows() { awk '{ n = split($0, f, ","); loop = f[2]; for (i = 3; i <= n - 8; ++i) loop = loop "," f[i];
                printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f[1], loop, f[n-7], f[n-6], f[n-5], f[n-3], f[n-1] }' "$trace" | tail -n +2; }
if [ -z "$loop" ]; then
  loop=$(rows | awk -F'\t' '{ c[$2]++ } END { for (l in c) if (c[l] > best) { best = c[l]; pick = l } print pick }')
fi
[ -n "$loop" ] || die "$trace holds no executions"
make_scratch
# One line per execution: seconds since the first, period in ms, whether it moved, then each
# rank's share of the iterations.
rows | awk -F'\t' -v loop="$loop" '
  $2 != loop { next }
  { if (!(($3) in t)) { order[++count] = $3; t[$3] = $1; period[$3] = $6 * 1000; moved[$3] = $7 }
    it[$3, $4] = $5; total[$3] += $5; if ($4 + 1 > ranks) ranks = $4 + 1
    if (start == "" || $1 < start) start = $1 }
  END { for (i = 1; i <= count; ++i) { e = order[i]
          line = sprintf("%.6f %.3f %d", t[e] - start, period[e], moved[e])
          for (r = 0; r < ranks; ++r) line = line sprintf(" %.5f", total[e] ? it[e, r] / total[e] : 0)
          print line }
        printf "%.6f %d\n", start, ranks > "/dev/stderr" }' >"$scratch/data" 2>"$scratch/meta"
[ -s "$scratch/data" ] || die "no executions of loop '$loop' in $trace"
read -r start ranks <"$scratch/meta"
arrows=
for ((i = 0; i < ${#marks[@]}; i += 2)); do
  at=$(awk -v m="${marks[i]}" -v s="$start" 'BEGIN { printf "%.3f", m - s }')
  arrows+="set arrow from $at, graph 0 to $at, graph 1 nohead dt 2 lc rgb 'gray40'; "
  arrows+="set label '${marks[i + 1]//\'/}' at $at, graph 0.95 offset 0.5,0 font ',9'; "
done
gnuplot <<PLOT || die "gnuplot failed on $trace"
set terminal pngcairo size 900,600 noenhanced
set output '$png'
set multiplot layout 2,1 title 'loop ${loop//\'/}'
set xlabel 'seconds since the first execution'
set xrange [0:*]
set lmargin 10
set rmargin 18
set ylabel 'share of the iterations'
set yrange [0:1]
set key outside right
$arrows
plot for [r=0:$((ranks - 1))] '$scratch/data' using 1:(column(4 + r)) with steps lw 2 title sprintf('rank %d', r)
set ylabel 'period (ms)'
set yrange [0:*]
plot '$scratch/data' using 1:2 with lines lc rgb 'black' title 'execution', \
     '' using 1:(\$3 > 0 ? \$2 : 1/0) with points pt 7 lc rgb 'red' title 'ranges changed'
unset multiplot
PLOT
echo "$png"
