#!/bin/bash
# Runs every IOR and mdtest command line of hpc/ior's own test scripts
# (testing/basic-tests.sh, testing/complex-tests.sh: their IOR and MDTEST
# lines, in order, with the -o / -d that testing/test-lib.sh appends) with a
# real IOR/mdtest (mpirun -np R) and with `lockstep ior` / `lockstep mdtest`
# (one local agent, R tasks), on tmpfs, and prints per line whether the exit
# status (0 or not) and the files left (names and sizes) are the same, then
# the totals. As test-lib.sh does, one data directory per script and tool
# kept across its lines (IOR: -o DIR/ior; mdtest: DIR/mdest removed before
# each line). What test-lib.sh adds that is not the line's own is left out:
# mdtest's -V=4 (verbose lines for its pattern files) and IOR_EXTRA.
# basic-tests.sh stops after its second line (`exit 1`); every line is run
# here all the same. After a line that differs, Lockstep's directory is set
# to IOR's files before the next line. Not run by ctest: it needs a real IOR.
#
# It also compares, per line, the block that describes the test before its
# results: for IOR every `Options:` block (from "Options:" up to the blank
# line before "Results:"; a line with several tests has several), for mdtest
# the lines from "mdtest-... was launched with N total task(s) on M node(s)"
# up to the blank line before "SUMMARY" ("Command line used:", "Nodemap:",
# "Path", "FS", "N tasks, M files/directories"). What is normalised, and
# nothing else (a value printed differently is a difference):
#   - the data directory: IOR's is WORKDIR/SCRIPT/real, Lockstep's
#     WORKDIR/SCRIPT/lockstep; both are written @DIR@ (IOR's "test
#     filename", mdtest's "Command line used:" and "Path").
#   - mdtest's program name in "Command line used:" (argv[0]: IOR_BIN_DIR/
#     mdtest for the real one, how `lockstep mdtest` was called for ours):
#     the first word after "used: " is written mdtest.
#   - the numbers of mdtest's "FS" line: size and fill level of the file
#     system at that instant (IOR's "FS" line is outside its Options block).
#   - Lockstep's own lines ('#' first), which may stand anywhere (the
#     conformance rules, tests/conformance/conformance.h).
# Not normalised: "api" (both run POSIX), the task counts, sizes, orderings,
# seeds. The Began/StartTime/Machine/Command line header of IOR and mdtest's
# "-- started at" line lie outside the blocks and are not compared here.
# A line Lockstep refuses (non-zero exit, no block) is not compared.
#
#   tests/bench/ior_scripts_compare.sh IOR_SRC IOR_BIN_DIR LOCKSTEP_BIN WORKDIR
#
# IOR_SRC: hpc/ior's source tree (its testing/); IOR_BIN_DIR: where ior and
# mdtest are; WORKDIR: on tmpfs, emptied first. Output per line:
#   N [SAME|DIFF] TOOL np=R ARGS
#       real: exit A, files: ...
#       lockstep: exit B, files: ...   (and the first line of its refusal)
#       options: [SAME|DIFF|NOT COMPARED]   (DIFF: a unified diff of the
#                first differing hunk, IOR's block as ---, Lockstep's as +++)
set -u
src=$1 bin=$2 lockstep=$(realpath "$3") work=$4   # the lines run in the data directories
rm -rf "$work" && mkdir -p "$work" || exit 2
# block TOOL OUT DIR: the normalised Options block(s) / mdtest header of OUT.
block() {
  if [[ $1 == IOR ]]; then
    awk '/^Options:/ { on = 1 } on && /^$/ { on = 0 } on' "$2"
  else
    awk '/ was launched with / { on = 1 } on && /^$/ { on = 0 } on' "$2"
  fi | grep -v '^#' | awk -v dir="$3" '
    { while ((i = index($0, dir)) > 0) $0 = substr($0, 1, i - 1) "@DIR@" substr($0, i + length(dir)) }
    /^Command line used: / { sub(/^Command line used: [^ ]+/, "Command line used: mdtest") }
    /^FS  / { gsub(/[0-9]+(\.[0-9]+)?/, "#") }
    { print }'
}
list() { (cd "$1" && find . -type f -printf '%p %s\n' | sort | tr '\n' ' '); }
n=0 same=0 refused=0 opt_same=0 opt_diff=0 opt_none=0
for script in basic-tests.sh complex-tests.sh; do
  R=$work/${script%.sh}/real S=$work/${script%.sh}/lockstep
  mkdir -p "$R" "$S"
  while read -r tool np args; do
    args=${args%%#*}                                   # a trailing comment
    args=${args//\$ROOT/$src/testing}
    args=${args//\"/}
    n=$((n + 1))
    if [[ $tool == IOR ]]; then
      (cd "$R" && timeout 300 mpirun --allow-run-as-root --oversubscribe -np "$np" \
         "$bin/ior" $args -o "$R/ior" < /dev/null > "$work/real.$n.out" 2>&1); a=$?
      (cd "$S" && timeout 300 "$lockstep" ior $args -o "$S/ior" --local 1 \
         --tasks-per-agent "$np" --out "$work/res" < /dev/null > "$work/lockstep.$n.out" 2>&1); b=$?
    else
      rm -rf "$R/mdest" "$S/mdest"
      (cd "$R" && timeout 300 mpirun --allow-run-as-root --oversubscribe -np "$np" \
         "$bin/mdtest" $args -d "$R/mdest" < /dev/null > "$work/real.$n.out" 2>&1); a=$?
      (cd "$S" && timeout 300 "$lockstep" mdtest $args -d "$S/mdest" --local 1 --tasks "$np" \
         --out "$work/res" < /dev/null > "$work/lockstep.$n.out" 2>&1); b=$?
    fi
    fa=$(list "$R") fb=$(list "$S")
    verdict=DIFF
    if [[ $((a == 0)) == $((b == 0)) && "$fa" == "$fb" ]]; then
      verdict=SAME
      same=$((same + 1))
    fi
    echo "$n [$verdict] $tool np=$np $args ($script)"
    echo "    real: exit $a, files: $fa"
    echo "    lockstep: exit $b, files: $fb"
    if [[ $b != 0 ]]; then
      refused=$((refused + 1))
      echo "    lockstep says: $(grep -m1 "^lockstep \(ior\|mdtest\):" "$work/lockstep.$n.out")"
    fi
    block "$tool" "$work/real.$n.out" "$R" > "$work/real.$n.options"
    block "$tool" "$work/lockstep.$n.out" "$S" > "$work/lockstep.$n.options"
    if [[ $b != 0 && ! -s $work/lockstep.$n.options ]]; then
      opt_none=$((opt_none + 1))
      echo "    options: NOT COMPARED (Lockstep refused the line)"
    elif cmp -s "$work/real.$n.options" "$work/lockstep.$n.options"; then
      opt_same=$((opt_same + 1))
      echo "    options: SAME ($(wc -l < "$work/real.$n.options") lines)"
    else
      opt_diff=$((opt_diff + 1))
      echo "    options: DIFF"
      diff -u --label "real $tool" --label "lockstep $tool" "$work/real.$n.options" \
        "$work/lockstep.$n.options" | awk 'NR <= 2 { print; next } /^@@/ && ++h > 1 { exit } 1' |
        sed 's/^/      /'
    fi
    # After a difference the next line starts from IOR's files (names and
    # sizes; the data is Lockstep's pattern), so that one difference is
    # counted once, not again in every later line of the script.
    if [[ $verdict == DIFF ]]; then
      (cd "$R" && find . -type f -printf '%P %s\n') > "$work/resync"
      rm -rf "$S" && mkdir -p "$S"
      while read -r f size; do
        mkdir -p "$S/$(dirname "$f")" && head -c "$size" /dev/zero > "$S/$f"
      done < "$work/resync"
    fi
  done < <(grep -E '^(IOR|MDTEST) [0-9]' "$src/testing/$script")
done
echo "lines: $n, same exit and files: $same, lockstep non-zero: $refused"
echo "options block: same $opt_same, different $opt_diff, not compared $opt_none (refused)"
