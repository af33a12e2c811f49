# Dynamic load: duration of each Jacobi iteration over time, one panel per on/off period,
# one line per policy (from dynamic-trace.csv beside the summary csv).
set datafile separator ','
trace = csv[1:strlen(csv)-4].'-trace.csv'
periods = system(sprintf("awk -F, 'NR>1 && !s[$1]++ {printf \"%%s \", $1}' %s", trace))
policies = system(sprintf("awk -F, 'NR>1 && !s[$2]++ {printf \"%%s \", $2}' %s", trace))
set terminal pngcairo size 500*words(periods)+200,450 noenhanced
set output png
set yrange [0:*]
set xlabel 'seconds since start'
set ylabel 'iteration time (s)'
set key top right
set multiplot layout 1,words(periods)
do for [p in periods] {
  set title sprintf('load on/off, period %s s', p)
  plot for [pol in policies] sprintf("< awk -F, -v p=%s -v pol=%s 'NR>1 && $1==p && $2==pol {print $4 \",\" $5}' %s", p, pol, trace) \
    using 1:2 with lines title pol
}
unset multiplot
