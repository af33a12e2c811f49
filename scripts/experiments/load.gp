# Fig. 4-5: execution time per application and rank count, no load / load / load + balancing.
set datafile separator ','
set terminal pngcairo size 1000,450 noenhanced
set output png
set yrange [0:*]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel 'seconds'
set key top left
set multiplot layout 1,2
do for [app in 'matmul jacobi'] {
  set title app.' (ranks; * = oversubscribed)'
  # One row per rank count: columns no load, load, load + balancing.
  plot for [c in 'none load load+lb'] \
    sprintf("< awk -F, -v app=%s -v c='%s' 'NR>1 && $1==app && $4==c {print $2 ($3==1?\"*\":\"\") \",\" $5}' %s", app, c, csv) \
    using 2:xtic(1) title (c eq 'none' ? 'no load' : c eq 'load' ? 'load' : 'load + balancing')
}
unset multiplot
