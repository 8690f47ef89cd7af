#!/bin/bash
# Runs one IO500 ini through the real io500 app (mpirun -np R) and through
# `lockstep io500` (one local agent, R tasks), then IO500's own verifier on
# both result directories, each with the config.ini it wrote (what a
# submission carries), and prints what differs in their structure: the files
# of each directory, result.txt's sections and keys, the exe lines with the
# paths and -G seeds written as placeholders, each CSV's header, config.ini.
# Not run by ctest: it needs the real io500, built with
#   tests/bench/build_ior.sh IOR_SRC && tests/bench/build_io500.sh IO500_SRC PFIND_SRC IOR_SRC
# (hpc/ior 5fcf0ba, IO500's pinned IOR; never vendored).
#
#   tests/bench/io500_compare.sh IO500_SRC LOCKSTEP_BIN INI RANKS WORKDIR
#
# INI's datadir and resultdir are replaced by WORKDIR/{real,lockstep}/{data,results}.
# Exit 0 when both verifiers accept both directories ([OK], or "[OK] But this is
# an invalid run!" for a short stonewall) and the structures are the same.
set -u
io500=$1 lockstep=$(realpath "$2") ini=$3 np=$4 work=$5
rm -rf "$work" && mkdir -p "$work" || exit 2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for side in real lockstep; do
  mkdir -p "$work/$side"
  sed -e "s|^datadir *=.*|datadir = $work/$side/data|" \
      -e "s|^resultdir *=.*|resultdir = $work/$side/results|" "$ini" > "$work/$side/io500.ini"
  grep -q '^resultdir' "$work/$side/io500.ini" ||
    sed -i "s|^\[global\]|[global]\nresultdir = $work/$side/results|" "$work/$side/io500.ini"
done
(cd "$work/real" && timeout 900 mpirun --oversubscribe -np "$np" "$io500/io500" io500.ini \
   > run.out 2>&1); a=$?
(cd "$work/lockstep" && timeout 900 "$lockstep" io500 io500.ini --local 1 --tasks-per-agent \
   "$np" --out "$work/lockstep/out" > run.out 2>&1); b=$?
echo "run: real exit $a, lockstep exit $b"
status=0
[[ $a == 0 && $b == 0 ]] || status=1
# structure DIR: the normalised structure of a result directory.
structure() {
  local dir=$1 side=$2
  echo "== files"; (cd "$dir" && ls | grep -v '^lockstep.txt$')
  echo "== result.txt"
  sed -e "s|$work/$side|@W@|g" -E -e 's/[0-9]{4}\.[0-9]{2}\.[0-9]{2}-[0-9]{2}\.[0-9]{2}\.[0-9]{2}/@TS@/g' \
      "$dir/result.txt" |
    awk '/^\[/ { print; next }
         /^; (START|END) / { print $1, $2; next }
         /^; ERROR INVALID/ { gsub(/[0-9][0-9.]*/, "#"); print; next }
         /^exe / { sub(/-G[ =]-?[0-9]+/, "-G#"); print; next }
         /=/ { print $1 }'
  echo "== csv headers"
  # find.csv's first line is its figures ("runtime: 0.002 rate: 1422292.5"):
  # numbers written # (as the conformance case's structure.txt has them).
  for f in "$dir"/*.csv; do
    echo "$(basename "$f"): $(head -c 80 "$f" | head -1 | sed -E 's/[0-9]+(\.[0-9]+)?/#/g')"
  done
  echo "== config.ini"; sed -e "s|$work/$side|@W@|g" "$dir/config.ini"
}
for side in real lockstep; do
  dir=$(ls -d "$work/$side/results"/*/ 2>/dev/null | head -1)
  if [[ -z $dir ]]; then echo "$side: no result directory"; status=1; continue; fi
  echo "--- $side: $dir"
  for how in io500-verify io500; do
    if [[ $how == io500-verify ]]; then
      out=$("$io500/io500-verify" "$dir/config.ini" "$dir/result.txt" 2>&1); v=$?
    else
      out=$(mpirun --oversubscribe -np 1 "$io500/io500" "$dir/config.ini" --verify \
              "$dir/result.txt" 2>&1); v=$?
    fi
    verdict=$(echo "$out" | grep -E '^\[OK\]|ERROR|FATAL|Parsing error' | head -2 | tr '\n' ' ')
    echo "$side $how: exit $v, $verdict"
    [[ $verdict == *"[OK]"* ]] || status=1
  done
  structure "$dir" "$side" > "$work/$side.structure"
done
if diff -u "$work/real.structure" "$work/lockstep.structure" > "$work/structure.diff"; then
  echo "structure: SAME"
else
  echo "structure: DIFF ($work/structure.diff)"; cat "$work/structure.diff"; status=1
fi
exit $status
