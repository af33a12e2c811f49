# Fig. 8: pass-compiled with balancing against hand-parallelized, no load.
set datafile separator ','
set terminal pngcairo size 800,450 noenhanced
set output png
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel 'seconds'
set key top left
set title 'runtime library overhead without load'
set yrange [0:*]
set xlabel 'application, ranks (pass+lb / hand)'
plot csv using 3:xtic(sprintf('%s %sr (%.3f)', strcol(1), strcol(2), $6)) title 'sequential', \
     '' using 4 title 'hand', '' using 5 title 'pass + balancing'
