# Load balancing (paper Fig. 4-6 and 8): no load, load, load + balancing, ideal, overhead.
#
# usage: scripts/bench balance [BUILD_DIR]     (default: BUILD_DIR from the environment, or build)
# Measured side by side in one run: 2 ranks bound to cores 0 and 1 (dsmrun --bind), the
# paper's artificial load (dsm-load: a tight loop writing 10240 longs) on core 1. For matmul
# and Jacobi (pass-compiled) it prints the time with no load, with load and no balancing
# (--lb static), with load and balancing (--lb POLICY, default auto), the ideal (no-load
# time x 2 / 1.5), balanced/ideal (paper: 1.09 matmul, 1.20 Jacobi), and the balancer's
# overhead without load (POLICY vs static; paper: under 6 %). REPS rounds (default 3) each
# run all four conditions; the times printed are medians over the rounds, the two ratios the
# medians of each round's ratio.
# The yardstick beside the ideal: in each round, under the load, the same pass-compiled
# program with each fixed split of SPLITS (rank 1's share of the work, DSM_LB_SHARES, cut as
# POLICY cuts); the fastest of them is that round's best fixed split (the share printed: the
# best one in most rounds). The fastest of a dozen noisy runs is faster than that split runs
# on average (the winner's curse: Jacobi's runs at one split spread by a fifth), so the round
# then runs that split and POLICY again, CONFIRM times each (default 2), interleaved, and
# POLICY / best fixed split is the median of each round's ratio of their means; the sweep's
# own ratio (POLICY's first run over the fastest of the sweep) is printed beside it.
# ORACLE=hand sweeps the hand-parallelized version instead (--shares, --lb static): another
# binary, whose inner loops ran up to 30 % faster or slower than the pass-compiled ones at one
# rank for their placement alone (matmul at n = 256 and 260, docs/results.md).
# Then a load that comes and goes: dsm-load on core 1 on for half of each period of PERIODS
# seconds, POLICY against static in each round, runs of several periods each (the *_ONOFF_ARGS
# sizes), and POLICY / static, the median of each round's ratio. Beside it, with a sweep, the
# bound of any balancer between executions: a follower that knew the load's turns and switched
# at no cost between equal blocks (load off) and the round's best fixed split (load on). Half
# the time in each, its rate is the mean of the two rates, as static's is of its own two: the
# bound is the median over the rounds of harmonic_mean(static0, fixed) /
# harmonic_mean(static0, static+L), from the constant-load runs.
# Environment: REPS, CONFIRM, POLICY, APPS ("matmul jacobi jacobi_o2 shallow"; jacobi_o2 is
# Jacobi built at -O2, with Jacobi's sizes), MATMUL_ARGS, JACOBI_ARGS,
# SHALLOW_ARGS (problem sizes), SPLITS ("0.15 0.175 ... 0.4"; empty: no sweep), ORACLE
# ("pass" or "hand"), PERIODS ("0.5 4"; empty: no on/off load), MATMUL_ONOFF_ARGS,
# JACOBI_ONOFF_ARGS, SHALLOW_ONOFF_ARGS; DSM_LB_* settings pass through to the ranks.
# shellcheck shell=bash disable=SC2154  # bin, cores, mode, size, run_time...: set by lib.sh
shopt -s inherit_errexit  # a run that fails inside $(...) stops the script, not a column
(($# <= 1)) || die_setup "usage: scripts/bench balance [BUILD_DIR]"
(($# == 0)) || use_build "$1"
reps=${REPS:-3} confirm=${CONFIRM:-2}
[[ $reps =~ ^[1-9][0-9]*$ && $confirm =~ ^[1-9][0-9]*$ ]] || die_setup "REPS and CONFIRM must be positive integers"
policy=${POLICY:-auto}
read -ra apps <<<"${APPS:-matmul jacobi jacobi_o2 shallow}"
read -ra splits <<<"${SPLITS-0.15 0.175 0.2 0.225 0.25 0.275 0.3 0.325 0.35 0.375 0.4}"
read -ra periods <<<"${PERIODS-0.5 4}"
oracle=${ORACLE:-pass}
[[ $oracle == pass || $oracle == hand ]] || die_setup "ORACLE: '$oracle' is neither pass nor hand"
for f in "${splits[@]}"; do [[ $f =~ ^0?\.[0-9]+$ ]] || die_setup "SPLITS: '$f' is not a share between 0 and 1"; done
for p in "${periods[@]}"; do [[ $p =~ ^[0-9]*\.?[0-9]+$ ]] || die_setup "PERIODS: '$p' is not a period in seconds"; done
# Long enough that the balancer's warm-up (10 executions of each loop) is a small part.
declare -A args=([matmul]=${MATMUL_ARGS:---n 256 --iters 300} [jacobi]=${JACOBI_ARGS:---n 2050 --iters 500}
  [shallow]=${SHALLOW_ARGS:---n 514 --iters 200})
args[jacobi_o2]=${args[jacobi]}
# Under the on/off load: several of the longest period (4 s) each.
declare -A onoff_args=([matmul]=${MATMUL_ONOFF_ARGS:---n 256 --iters 1200} [jacobi]=${JACOBI_ONOFF_ARGS:---n 2050 --iters 3000}
  [shallow]=${SHALLOW_ONOFF_ARGS:---n 514 --iters 1000})
onoff_args[jacobi_o2]=${onoff_args[jacobi]}
need dsmrun dsm-load
for app in "${apps[@]}"; do
  [ -n "${args[$app]:-}" ] || die_setup "APPS: unknown application '$app' (matmul, jacobi, jacobi_o2, shallow)"
  need "${app}_pass"
  ((${#splits[@]} == 0)) || [ "$oracle" = pass ] || need "${app}_hand"
done
((cores >= 2)) || die_setup "needs 2 cores"

# timed_run POLICY PROGRAM [ARGS...]: the time of one run at 2 ranks, bound, --lb POLICY.
timed_run() {
  local lb=$1 prog=$2 t
  shift 2
  t=$("$bin/dsmrun" -n 2 --bind --timeout 600 --lb "$lb" "$prog" "$@" | field time) || die "$prog --lb $lb failed"
  [ -n "$t" ] || die "$prog printed no time"
  echo "$t"
}

# onoff_run POLICY PROGRAM [ARGS...]: timed_run under an on/off load of `period` seconds on
# core 1 started with the run: every run meets the load at the same phase (one load for two
# runs put one at each phase, and their ratio swung by a fifth either way).
onoff_run() {
  install_traps
  load_start 1 --period "$period"
  timed_run "$@"
  load_stop
}

# run_pair A B ROUND PROGRAM [ARGS...]: the times under policies A and B, A's first, each run
# by `runner` (timed_run); the two run in an order that alternates with ROUND, so that
# neither always runs first.
runner=timed_run
run_pair() {
  local a=$1 b=$2 round=$3 ta tb
  shift 3
  if ((round % 2)); then tb=$($runner "$b" "$@"); ta=$($runner "$a" "$@")
  else ta=$($runner "$a" "$@"); tb=$($runner "$b" "$@"); fi
  echo "$ta $tb"
}

# fixed_run SHARE APP [ARGS...]: the time of one run under the load with rank 1 given SHARE of
# the work: the pass-compiled program at DSM_LB_SHARES, or the hand version with --shares and
# --lb static (ORACLE=hand).
fixed_run() {
  local f=$1 app=$2 w
  shift 2
  w=$(awk -v f="$f" 'BEGIN { print 1 - f "," f }')
  if [ "$oracle" = pass ]; then DSM_LB_SHARES=$w timed_run "$policy" "$bin/${app}_pass" "$@"
  else timed_run static "$bin/${app}_hand" "$@" --shares "$w"; fi
}

# best_split APP [ARGS...]: "time share" of the fastest fixed split of SPLITS under the load.
best_split() {
  local app=$1 f t best='' share=''
  shift
  for f in "${splits[@]}"; do
    t=$(fixed_run "$f" "$app" "$@")
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t share=$f; fi
  done
  echo "$best $share"
}

# confirm_split SHARE ROUND APP [ARGS...]: "fixed policy", the mean times of CONFIRM runs
# each of the fixed split SHARE and of POLICY under the load, in pairs whose order
# alternates: fresh runs of the split the sweep chose, which its fastest run overstates.
confirm_split() {
  local share=$1 round=$2 app=$3 k tf tp sf=0 sp=0
  shift 3
  for ((k = 0; k < confirm; k++)); do
    if (((round + k) % 2)); then tp=$(timed_run "$policy" "$bin/${app}_pass" "$@"); tf=$(fixed_run "$share" "$app" "$@")
    else tf=$(fixed_run "$share" "$app" "$@"); tp=$(timed_run "$policy" "$bin/${app}_pass" "$@"); fi
    sf=$(awk -v a="$sf" -v b="$tf" 'BEGIN { print a + b }') sp=$(awk -v a="$sp" -v b="$tp" 'BEGIN { print a + b }')
  done
  awk -v f="$sf" -v p="$sp" -v k="$confirm" 'BEGIN { printf "%.6f %.6f\n", f / k, p / k }'
}

# Over the rounds in `rows` ("noload static0 static_l bal_l [best share fixed again]" each): col N, the
# median of column N; per_round EXPR, the median of each round's value of the awk expression
# EXPR.
rows=()
declare -A follower=()  # per app, the bound of a follower of on/off loads (see above)
col() { printf '%s\n' "${rows[@]}" | awk -v c="$1" '{print $c}' | median; }
per_round() { printf '%s\n' "${rows[@]}" | awk "{print $1}" | median; }

# The share most rounds found best (the first such in SPLITS' order on a tie).
usual_share() { printf '%s\n' "${rows[@]}" | awk '{ c[$6]++ } END { for (s in c) if (c[s] > n) { n = c[s]; b = s } print b }'; }

printf '%-9s %9s %9s %9s %9s %9s %14s %9s' app noload static+L "$policy+L" ideal static0 balanced/ideal overhead
((${#splits[@]} == 0)) && echo || printf ' %9s %6s %11s %9s %9s %11s\n' sweep-best share "$policy/sweep" fixed "$policy" "$policy/best"

for app in "${apps[@]}"; do
  prog=$bin/${app}_pass
  # shellcheck disable=SC2086  # the options are split on purpose
  "$bin/dsmrun" -n 2 --bind --lb "$policy" "$prog" ${args[$app]} --check >/dev/null ||
    die "$app result differs from the sequential one"
  # Rounds, each measuring all four conditions within seconds of each other: the machine's
  # speed drifts over minutes, and a ratio of two medians taken minutes apart carries that drift.
  rows=()
  for ((r = 0; r < reps; r++)); do
    # shellcheck disable=SC2086
    pair=$(run_pair "$policy" static "$r" "$prog" ${args[$app]})
    read -r noload static0 <<<"$pair"
    load_start 1
    # shellcheck disable=SC2086
    pair=$(run_pair "$policy" static "$r" "$prog" ${args[$app]})
    read -r bal_l static_l <<<"$pair"
    best=
    if ((${#splits[@]} > 0)); then
      # shellcheck disable=SC2086
      best=$(best_split "$app" ${args[$app]})
      # shellcheck disable=SC2086
      best="$best $(confirm_split "${best#* }" "$r" "$app" ${args[$app]})"
    fi
    load_stop
    rows+=("$noload $static0 $static_l $bal_l $best")
  done
  # shellcheck disable=SC2016  # the $N are awk's
  awk -v app="$app" -v n="$(col 1)" -v s0="$(col 2)" -v sl="$(col 3)" -v bl="$(col 4)" \
    -v bi="$(per_round '$4 / ($1 * 2 / 1.5)')" -v ov="$(per_round '($1 / $2 - 1) * 100')" 'BEGIN {
    printf "%-9s %9.3f %9.3f %9.3f %9.3f %9.3f %14.3f %8.1f%%", app, n, sl, bl, n * 2 / 1.5, s0, bi, ov
  }'
  if ((${#splits[@]} == 0)); then echo
  else
    # shellcheck disable=SC2016
    awk -v b="$(col 5)" -v f="$(usual_share)" -v r="$(per_round '$4 / $5')" -v fa="$(col 7)" -v pa="$(col 8)" \
      -v ra="$(per_round '$8 / $7')" 'BEGIN { printf " %9.3f %6s %11.3f %9.3f %9.3f %11.3f\n", b, f, r, fa, pa, ra }'
    # shellcheck disable=SC2016
    follower[$app]=$(per_round '(1 / $2 + 1 / $3) / (1 / $2 + 1 / $7)')
  fi
done
if ((${#splits[@]} > 0)); then
  if [ "$oracle" = pass ]; then what="run of the same program at a fixed split (DSM_LB_SHARES)"
  else what="hand-parallelized run (--shares)"; fi
  echo "sweep-best: the fastest $what under the load over rank 1's shares ${splits[*]}; share: the best in most rounds; $policy/sweep: $policy's run over it"
  echo "fixed, $policy: means of $confirm more runs each of that round's best split and of $policy, interleaved; $policy/best: median of each round's ratio of the two"
fi

((${#periods[@]} > 0)) || exit 0
echo
printf '%-9s %7s %9s %9s %11s %9s\n' app period static "$policy" "$policy/static" follower
for app in "${apps[@]}"; do
  prog=$bin/${app}_pass
  for period in "${periods[@]}"; do
    rows=()
    for ((r = 0; r < reps; r++)); do
      # shellcheck disable=SC2086
      rows+=("$(runner=onoff_run run_pair "$policy" static "$r" "$prog" ${onoff_args[$app]})")
    done
    # shellcheck disable=SC2016
    awk -v app="$app" -v p="$period" -v s="$(col 2)" -v b="$(col 1)" -v r="$(per_round '$1 / $2')" -v f="${follower[$app]:--}" \
      'BEGIN { printf "%-9s %6ss %9.3f %9.3f %11.3f %9s\n", app, p, s, b, r, f == "-" ? f : sprintf("%.3f", f) }'
  done
done
echo "on/off: dsm-load on core 1 for half of each period; $policy/static: median of each round's ratio"
((${#splits[@]} == 0)) ||
  echo "follower: the bound of a balancer that switched at no cost between equal blocks and the best fixed split at the load's turns, x static"
