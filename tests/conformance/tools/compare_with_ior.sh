#!/bin/bash
# Runs IOR command lines one after another with a real IOR (mpirun -np R) and
# with `lockstep ior` (--local 1 -N R), each in its own directory kept across
# the lines (as hpc/ior's testing/test-lib.sh runs its scripts), and prints per
# line whether the exit status (0 or not), the files left (names, sizes) and
# the Options block are the same. Not run by ctest: it needs a real IOR.
#
#   tests/conformance/tools/compare_with_ior.sh LINES IOR_BIN LOCKSTEP_BIN WORKDIR
#
# LINES: one "RANKS ARGS..." a line (-o WORKDIR/.../ior is appended).
set -u
lines=$1 ior=$2 lockstep=$3 work=$4
R=$work/ior S=$work/lockstep
rm -rf "$R" "$S" "$work/res" && mkdir -p "$R" "$S" || exit 2
list() { (cd "$1" && find . -type f ! -name OUT.json ! -name stonewall.log -printf '%p %s\n' | sort | tr '\n' ' '); }
options() { sed -n '/^Options:/,/^Results:/p' "$1" | sed "s|$2|DIR|g" | grep -v '^$'; }
n=0 same=0
while read -r np args; do
  [[ -z "$np" || "$np" == \#* ]] && continue
  n=$((n + 1))
  (cd "$R" && timeout 300 mpirun --allow-run-as-root --oversubscribe -np "$np" "$ior" $args \
     -o "$R/ior" < /dev/null > "$work/ior.$n.out" 2>&1); a=$?
  (cd "$S" && timeout 300 "$lockstep" ior $args -o "$S/ior" -N "$np" --local 1 \
     --out "$work/res" < /dev/null > "$work/lockstep.$n.out" 2>&1); b=$?
  fa=$(list "$R") fb=$(list "$S")
  verdict=DIFF
  if [[ $((a == 0)) == $((b == 0)) && "$fa" == "$fb" ]]; then verdict=SAME; same=$((same + 1)); fi
  opt=""
  if [[ $a == 0 && $b == 0 ]]; then
    if [[ "$(options "$work/ior.$n.out" "$R")" == "$(options "$work/lockstep.$n.out" "$S")" ]]; then
      opt=" options:same"
    else
      opt=" options:DIFF"
    fi
  fi
  echo "$n [$verdict]$opt np=$np $args"
  echo "    ior: exit $a, files: $fa"
  echo "    lockstep: exit $b, files: $fb"
  [[ $b != 0 ]] && echo "    lockstep says: $(grep -m1 'lockstep ior:' "$work/lockstep.$n.out")"
done < "$lines"
echo "same: $same of $n"
