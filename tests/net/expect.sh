#!/usr/bin/env bash
# expect.sh RC SECONDS REGEX CMD...: runs CMD; passes when its exit status is RC (0) or
# non-zero (RC=fail), it ended within SECONDS (times DSM_TEST_TIME_SCALE, an integer set
# for sanitizer builds), its output matches REGEX (extended, may be empty), and no process
# of the job is left behind; CMD exiting 77 after a line "skip: ..." is a skip (exit 77).
# The job's own bound (dsmrun --timeout S in CMD) scales alike: unscaled, it would stop a
# sanitizer build's job long before SECONDS.
set -u
scale=${DSM_TEST_TIME_SCALE:-1}
want=$1 limit=$(($2 * scale)) regex=$3
shift 3
args=()
while (($#)); do
  args+=("$1")
  if [ "$1" = --timeout ] && (($# > 1)); then
    args+=("$(awk -v s="$2" -v k="$scale" 'BEGIN { print s * k }')")
    shift
  fi
  shift
done
set -- "${args[@]}"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# Every process of the job inherits this marker, so leftovers can be found in /proc.
export DSM_EXPECT_MARKER="expect-$$-$RANDOM"
start=$(date +%s%N)
timeout -k 5 $((limit + 30)) "$@" >"$out" 2>&1
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
cat "$out"
echo "expect: exit status $rc after $ms ms"
# A test that found the machine unfit for what it measures says so and is skipped (ctest's
# SKIP_RETURN_CODE 77).
if [ $rc -eq 77 ] && grep -q '^skip: ' "$out"; then echo "expect: skipped"; exit 77; fi
ok=1
if [ "$want" = fail ]; then [ $rc -ne 0 ] || { echo "expect: wanted a non-zero exit"; ok=0; }
elif [ $rc -ne "$want" ]; then echo "expect: wanted exit status $want"; ok=0; fi
if ((ms > limit * 1000)); then echo "expect: took longer than $limit s"; ok=0; fi
if [ -n "$regex" ] && ! grep -Eq -e "$regex" "$out"; then echo "expect: output lacks /$regex/"; ok=0; fi
sleep 0.3
left=
for dir in /proc/[0-9]*; do
  pid=${dir#/proc/}
  [ "$pid" = $$ ] && continue
  grep -qsa "DSM_EXPECT_MARKER=$DSM_EXPECT_MARKER" "/proc/$pid/environ" && left+=" $(ps -o pid=,args= -p "$pid")"
done
if [ -n "$left" ]; then echo "expect: processes left behind: $left"; ok=0; fi
((ok)) && echo "expect: pass" || { echo "expect: FAIL"; exit 1; }
