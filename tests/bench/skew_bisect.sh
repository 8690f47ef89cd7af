#!/usr/bin/env bash
# Finds the commit that made the start skew worse, in one command:
#
#   tests/bench/skew_bisect.sh [--tasks 2] [--agents 2] [--runs 3] [--reps 5]
#                              [--threshold-us 3] [--worktree /work/bisect]
#                              [--first-parent] GOOD BAD
#
# `git bisect run` over GOOD..BAD in a separate worktree (removed at the end).
# Each step builds only `lockstep` and `lockstep-agent` (Release, ccache, one
# build directory reused from step to step) and measures
# `lockstep ior -w -F -b 16m -t 1m --local AGENTS -N TASKS -i REPS`, RUNS times,
# with the independent probe (skewprobe.py: bpftrace, the first transfer-sized
# write of each task thread). A step is bad when the median skew over all its
# phases is above --threshold-us; a commit that does not build is skipped (125).
# Needs root and bpftrace. The log of every step is kept in the printed file.
# --first-parent bisects merges as one step (git >= 2.29), as a first pass
# before the branch the merge brought in.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(git -C "$here" rev-parse --show-toplevel)"
tasks=2 agents=2 runs=3 reps=5 threshold=3 tree=/work/bisect first_parent=()
while [[ $# -gt 2 ]]; do
  case "$1" in
    --tasks) tasks=$2; shift 2 ;;
    --agents) agents=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --threshold-us) threshold=$2; shift 2 ;;
    --worktree) tree=$2; shift 2 ;;
    --first-parent) first_parent=(--first-parent); shift ;;
    *) echo "skew_bisect: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $# -eq 2 ]] || { echo "usage: skew_bisect.sh [options] GOOD BAD" >&2; exit 2; }
good=$(git -C "$repo" rev-parse "$1") bad=$(git -C "$repo" rev-parse "$2")

# The step runs from a copy: the commits under test do not have these scripts.
tools=$(mktemp -d /tmp/skew-bisect-tools-XXXXXX)
cp "$here/skewprobe.py" "$here/skew_vs_mpi.py" "$tools/"
log="$tools/bisect.log"
cat > "$tools/step.sh" <<EOF
#!/usr/bin/env bash
# One bisect step: 0 good, 1 bad, 125 skip.
cd "$tree"
c=\$(git rev-parse --short HEAD)
echo "== step \$c \$(date -u +%H:%M:%S) load \$(cut -d' ' -f1-3 /proc/loadavg)" >> "$log"
if ! { cmake -S . -B build-bisect -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
         && cmake --build build-bisect -j2 --target lockstep lockstep-agent; } >> "$log" 2>&1; then
  echo "\$c: does not build: skip" >> "$log"; exit 125
fi
out=\$(python3 "$tools/skew_vs_mpi.py" --build build-bisect --no-mpi --tasks $tasks \
        --agents $agents --alternations $runs --reps $reps 2>&1) || { echo "\$out" >> "$log"; exit 125; }
echo "\$out" >> "$log"
median=\$(echo "\$out" | awk -F'|' '/^\| $tasks \|/ { split(\$3, m, " "); print m[1] }')
[[ -n "\$median" ]] || exit 125
echo "\$c: median \$median us (threshold $threshold)" | tee -a "$log"
awk -v m="\$median" -v t="$threshold" 'BEGIN { exit !(m <= t) }'
EOF
chmod +x "$tools/step.sh"
echo "skew_bisect: $good (good) .. $bad (bad); log $log"
git -C "$repo" worktree add --detach "$tree" "$bad" >/dev/null
cleanup() { git -C "$tree" bisect reset >/dev/null 2>&1 || true; git -C "$repo" worktree remove --force "$tree"; }
trap cleanup EXIT
cd "$tree"
started=$(git bisect start "${first_parent[@]}" "$bad" "$good")
if grep -q "is the first bad commit" <<<"$started"; then
  echo "$started" | tee -a "$log"  # nothing between GOOD and BAD to measure
  exit 0
fi
git bisect run "$tools/step.sh" | tee -a "$log" | grep -E "is the first bad commit|^[0-9a-f]{7,}|median" || true
git bisect log >> "$log"
