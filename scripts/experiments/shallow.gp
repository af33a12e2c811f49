# Fig. 9: Shallow, hand / naive compiler split / locality-conscious balancing:
# time, and per-rank means of messages sent and data bytes (diffs + whole pages).
set datafile separator ','
set terminal pngcairo size 1200,420 noenhanced
set output png
set yrange [0:*]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set multiplot layout 1,3
# One line per rank count: label, then the mean over ranks of column `col` for hand, static,
# locality (the time column is the same on every rank line of a run, so its mean is the time).
table(col) = sprintf("< awk -F, 'NR>1 {k=$2 ($3==1?\"*\":\"\"); if (!(k in s)) o[++m]=k; s[k]=1; v[k,$1]+=$%d; c[k,$1]++} END {split(\"hand static locality\", vs, \" \"); for (i=1;i<=m;i++) {k=o[i]; printf \"%%s\", k; for (j=1;j<=3;j++) printf \",%%f\", (c[k,vs[j]] ? v[k,vs[j]] / c[k,vs[j]] : 0); printf \"\\n\"}}' %s", col, csv)
do for [p in '4 9 12'] {
  set title (p eq '4' ? 'seconds' : p eq '9' ? 'messages sent per rank' : 'data bytes per rank (diffs + whole pages)')
  set xlabel 'ranks (* = oversubscribed)'
  plot table(int(p)) using 2:xtic(1) title 'hand', '' using 3 title 'naive (static)', '' using 4 title 'locality'
}
unset multiplot
