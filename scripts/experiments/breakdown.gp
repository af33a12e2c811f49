# Fig. 7: time breakdown, mean over ranks, normalized to the no-load run of each app.
set datafile separator ','
set terminal pngcairo size 900,450 noenhanced
set output png
set yrange [0:*]
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.7
set ylabel 'time / no-load time'
set key outside right
set title 'time breakdown at 2 ranks (mean over ranks)'
# awk averages the ranks of each (app, condition): label,user,protocol,wait
mean = sprintf("< awk -F, 'NR>1 {k=$1\" \"$2; if (!(k in n)) o[++m]=k; n[k]++; u[k]+=$4/$10; p[k]+=$5/$10; w[k]+=$6/$10} END {for (i=1;i<=m;i++) {k=o[i]; printf \"%%s,%%f,%%f,%%f\\n\", k, u[k]/n[k], p[k]/n[k], w[k]/n[k]}}' %s", csv)
plot mean using 2:xtic(1) title 'user', '' using 3 title 'protocol', '' using 4 title 'communication + wait'
