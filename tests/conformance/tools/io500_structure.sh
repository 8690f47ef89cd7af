#!/bin/bash
# Prints the structure of an IO500 result directory, as the conformance
# test of `lockstep io500` compares it (io500_conformance_test.cc does the
# same in C++): its files (but Lockstep's own lockstep.txt), result.txt's
# sections, keys and exe lines, each CSV's first line, and config.ini, with
# the data and result directories written @DATA@ and @RESULTS@, IO500's
# timestamps @TS@ and the -G seeds -G#. Measurements and the timing-dependent
# "; ERROR INVALID" lines are left out.
#
#   tests/conformance/tools/io500_structure.sh RESULT_DIR DATA RESULTS
set -euo pipefail
dir=$1 data=$2 results=$3
norm() {
  sed -e "s|$results|@RESULTS@|g" -e "s|$data|@DATA@|g" \
      -E -e 's/[0-9]{4}\.[0-9]{2}\.[0-9]{2}-[0-9]{2}\.[0-9]{2}\.[0-9]{2}/@TS@/g'
}
echo "== files"
(cd "$dir" && ls | grep -v '^lockstep.txt$')
echo "== result.txt"
norm < "$dir/result.txt" | awk '
  /^\[/ { print; next }
  /^; (START|END) / { print $1, $2; next }
  /^;/ { next }
  /^exe / { sub(/^exe +=/, "exe ="); gsub(/-G[ =]-?[0-9]+/, "-G#"); print; next }
  /=/ { print $1 }'
echo "== csv"
for f in "$dir"/*.csv; do echo "$(basename "$f"): $(head -1 "$f" | sed -E 's/[0-9.]+/#/g')"; done
echo "== config.ini"
norm < "$dir/config.ini"
