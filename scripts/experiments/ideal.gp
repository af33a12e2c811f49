# Fig. 6: balanced run with one core half-loaded against the ideal (no-load time x 2 / 1.5).
set datafile separator ','
set terminal pngcairo size 700,450 noenhanced
set output png
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel 'seconds'
set key top left
set title 'load + balancing against the ideal (2 ranks, one core half-loaded)'
set yrange [0:*]
set xlabel 'application (balanced / ideal)'
plot csv using 3:xtic(sprintf('%s (%.3f)', strcol(1), $5)) title 'ideal', '' using 4 title 'load + balancing'
