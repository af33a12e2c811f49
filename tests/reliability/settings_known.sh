#!/usr/bin/env bash
# settings_known.sh SOURCE_DIR DSMRUN: every DSM_* variable the sources read (C++ string
# literals in the runtime, the balancer and the pass; ${DSM_...:-default} in the scripts) is one
# dsmrun knows, so it warns of none of them; the program is missing on purpose, so dsmrun
# stops right after the check.
set -u
src=$1 dsmrun=$2
mapfile -t names < <({
  grep -rhoE '"DSM_[A-Z0-9_]+"' "$src/dsm/src" "$src/balancer" "$src/passes" --include='*.cpp' --include='*.hpp'
  grep -rhoE '\$\{DSM_[A-Z0-9_]+:-' "$src/scripts" "$src/passes" "$src/tests" --include='*.sh' --include='*.in'
} | grep -oE 'DSM_[A-Z0-9_]+' | sort -u)
echo "${#names[@]} names: ${names[*]}"
((${#names[@]} >= 25)) || { echo "FAIL: the sources should read at least 25 DSM_* variables"; exit 1; }
settings=()
for n in "${names[@]}"; do settings+=("$n=1"); done
out=$(env "${settings[@]}" "$dsmrun" -n 1 /nonexistent/program 2>&1)
echo "$out"
if grep -q "nothing reads" <<<"$out"; then echo "FAIL: dsmrun does not know a variable the sources read"; exit 1; fi
grep -q "cannot run /nonexistent/program" <<<"$out" || { echo "FAIL: dsmrun did not get to the program check"; exit 1; }
echo pass
