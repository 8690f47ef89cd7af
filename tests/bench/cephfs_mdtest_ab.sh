#!/usr/bin/env bash
# Two lockstep-agent binaries against real mdtest on the CephFS testbed
# (deploy/testbed/cephfs.sh up), `mdtest -n 1000 -u -F` on its 2 client hosts,
# rotated over REPS rounds (A mdtest B, B A mdtest, mdtest B A). The client
# agents are restarted with each binary (`cephfs.sh agents BINARY`); they are
# left running the last one used.
#
#   tests/bench/cephfs_mdtest_ab.sh AGENT_A AGENT_B [REPS] [--ior /opt/ior/bin]
#
# Prints one line per run: "ROUND NAME create X stat Y remove Z" (mdtest's
# SUMMARY rate maxima), NAME being A, B or mdtest.
set -euo pipefail
a=${1:?usage: cephfs_mdtest_ab.sh AGENT_A AGENT_B [REPS] [--ior DIR]}
b=${2:?usage: cephfs_mdtest_ab.sh AGENT_A AGENT_B [REPS] [--ior DIR]}
reps=${3:-6}
iorbin=/opt/ior/bin
[ "${4:-}" = --ior ] && iorbin=$5
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
T="${LOCKSTEP_TESTBED_DIR:-/tmp/lockstep-testbed}"
M="${LOCKSTEP_TESTBED_MOUNT:-/mnt/lockstep-cephfs}"
L="${LOCKSTEP_BIN:-$(ls -t "$SRC"/build/*/lockstep | head -1)}"
[ -e "$T/hostfile" ] || { echo "the testbed is not up: run deploy/testbed/cephfs.sh up" >&2; exit 1; }
[ -x "$iorbin/mdtest" ] || { echo "no mdtest at $iorbin: build it with tests/bench/build_ior.sh" >&2; exit 1; }
work="$(mktemp -d /tmp/cephfs-mdtest-ab.XXXXXX)"
trap 'rm -rf "$work"' EXIT
export LOCKSTEP_TESTBED_DIR="$T"  # for testbed_rank.sh

use_agent() {  # the client agents restarted with binary $1, as the testbed starts them
  "$SRC/deploy/testbed/cephfs.sh" agents "$1" client >/dev/null
}
figs() {
  awk '/SUMMARY rate/{s=1} s && /File creation/{c=$4} s && /File stat/{st=$4}
       s && /File removal/{r=$4} /SUMMARY time/{s=0} END{printf "create %s stat %s remove %s", c, st, r}' "$1"
}
run() {  # run NAME ROUND
  rm -rf "$M/bench"; mkdir -p "$M/bench"; sync; echo 3 >/proc/sys/vm/drop_caches
  if [ "$1" = mdtest ]; then
    mpirun --allow-run-as-root --oversubscribe -np 2 --bind-to none "$SRC/tests/bench/testbed_rank.sh" \
      "$iorbin/mdtest" -n 1000 -u -F -d "$M/bench" >"$work/o" 2>&1
  else
    "$L" mdtest --hostfile "$T/hostfile" --tls_dir "$T/tls" --out "$work/results" --tasks 2 \
      -n 1000 -u -F -d "$M/bench" >"$work/o" 2>&1
  fi || { echo "$1 failed:"; tail -3 "$work/o"; return 0; }
  echo "$2 $1 $(figs "$work/o")"
}
orders=("A mdtest B" "B A mdtest" "mdtest B A")
current=""
for i in $(seq "$reps"); do
  for v in ${orders[$(((i - 1) % 3))]}; do
    if [ "$v" != mdtest ] && [ "$v" != "$current" ]; then
      if [ "$v" = A ]; then use_agent "$a"; else use_agent "$b"; fi
      current=$v
    fi
    run "$v" "$i"
  done
done
