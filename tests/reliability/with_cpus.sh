#!/bin/sh
# with_cpus.sh N CMD...: runs CMD with @CPU1@, @CPU2@ (the first and second CPU this process
# may use: a CI runner's cpuset need not hold CPUs 0 and 1) and @CPUS@ (the first N, comma
# separated) replaced in its arguments; exits 77 (skipped) when fewer than N CPUs are allowed.
n=$1
shift
list=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
cpus=
for part in $(echo "$list" | tr ',' ' '); do
  lo=${part%-*} hi=${part#*-}
  c=$lo
  while [ "$c" -le "$hi" ]; do
    cpus="$cpus $c"
    c=$((c + 1))
  done
done
count=0 first= second= chosen=
for c in $cpus; do
  count=$((count + 1))
  [ $count -eq 1 ] && first=$c
  [ $count -eq 2 ] && second=$c
  [ $count -le "$n" ] && chosen=${chosen:+$chosen,}$c
done
if [ "$count" -lt "$n" ]; then
  echo "with_cpus.sh: $count CPU(s) allowed, the test needs $n: skipped"
  exit 77
fi
# Rebuild the argument list with the placeholders replaced.
args=$#
while [ "$args" -gt 0 ]; do
  a=$(printf '%s' "$1" | sed "s/@CPU1@/$first/g; s/@CPU2@/$second/g; s/@CPUS@/$chosen/g")
  shift
  set -- "$@" "$a"
  args=$((args - 1))
done
exec "$@"
