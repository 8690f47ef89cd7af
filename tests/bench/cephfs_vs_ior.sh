#!/usr/bin/env bash
# Lockstep against real IOR and mdtest on the same CephFS mounts of the
# testbed (deploy/testbed/cephfs.sh up), the same command lines, the same
# client count, alternated A/B; prints each figure and the ratio
# Lockstep / IOR (median over the alternations).
#
#   tests/bench/cephfs_vs_ior.sh [--reps N] [--clients M] [--ior /opt/ior/bin]
#
# IOR's ranks are placed one per client host: mpirun starts a small wrapper
# that enters client<rank+1>'s UTS and mount namespaces (nsenter) and execs
# ior there, so that every rank sees its own ceph-fuse mount at the same
# path, as Lockstep's agents do. Real IOR/mdtest: tests/bench/build_ior.sh
# builds them from hpc/ior's source with Debian's Open MPI (never vendored).
# Cold-cache cases drop caches between a -w -k run and a -r run for both
# tools (one machine: `echo 3 > /proc/sys/vm/drop_caches` serves all hosts).
set -euo pipefail
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
reps=3 clients=2 iorbin=/opt/ior/bin
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --ior) iorbin=$2; shift 2 ;;
    *) echo "usage: $0 [--reps N] [--clients M] [--ior DIR]" >&2; exit 2 ;;
  esac
done
T="${LOCKSTEP_TESTBED_DIR:-/tmp/lockstep-testbed}"
M="${LOCKSTEP_TESTBED_MOUNT:-/mnt/lockstep-cephfs}"
[ -e "$T/hostfile" ] || { echo "the testbed is not up: run deploy/testbed/cephfs.sh up" >&2; exit 1; }
[ -x "$iorbin/ior" ] || { echo "no IOR at $iorbin/ior: build it with tests/bench/build_ior.sh" >&2; exit 1; }
L="${LOCKSTEP_BIN:-$(ls -t "$SRC"/build/*/lockstep | head -1)}"
work="$(mktemp -d /tmp/cephfs-vs-ior.XXXXXX)"
trap 'rm -rf "$work"' EXIT

# The rank wrapper (testbed_rank.sh): rank r runs in client host r+1's namespaces.
export LOCKSTEP_TESTBED_DIR="$T"
mpi=(mpirun --allow-run-as-root --oversubscribe -np "$clients" --bind-to none "$SRC/tests/bench/testbed_rank.sh")
lock=("$L" ior --hostfile "$T/hostfile" --tls_dir "$T/tls" --out "$work/results")
lockmd=("$L" mdtest --hostfile "$T/hostfile" --tls_dir "$T/tls" --out "$work/results")
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
clean() { rm -rf "$M/bench"; mkdir -p "$M/bench"; }

# "write 123.4" / "read 234.5" from the "Summary of all tests" block (Max MiB/s).
ior_figures() { awk '/^Summary of all tests/{s=1} s && /^(write|read) /{print $1, $2}' "$1"; }
# mdtest's SUMMARY rate lines: "File creation : max min mean sd" -> "create MAX".
md_figures() {
  awk '/SUMMARY rate/{s=1} s && /File creation/{print "create", $4} s && /File stat/{print "stat", $4}
       s && /File removal/{print "remove", $4} /SUMMARY time/{s=0}' "$1"
}

# A/B alternated: Lockstep first in odd repetitions, IOR first in even ones.
order() { if [ $(($1 % 2)) -eq 1 ]; then echo lockstep ior; else echo ior lockstep; fi; }

declare -A figs
record() {  # record CASE TOOL FILE KIND
  local c=$1 tool=$2 f=$3 kind=$4 op v
  while read -r op v; do figs["$c|$op|$tool"]+="$v "; done < <("${kind}_figures" "$f")
}

ior_case() {  # ior_case NAME ARGS...: both tools, same args
  local name=$1; shift
  local args=(-a POSIX "$@" -o "$M/bench/testfile")
  for i in $(seq "$reps"); do
    for tool in $(order "$i"); do
      clean; drop
      if [ "$tool" = lockstep ]; then "${lock[@]}" -N "$clients" "${args[@]}" >"$work/o" 2>&1
      else "${mpi[@]}" "$iorbin/ior" "${args[@]}" >"$work/o" 2>&1; fi || {
        echo "$tool failed on $name:"; tail -5 "$work/o"; continue; }
      record "$name" "$tool" "$work/o" ior
    done
  done
}

cold_case() {  # cold_case NAME ARGS...: -w -k, drop caches, -r (both tools)
  local name=$1; shift
  local args=(-a POSIX "$@" -o "$M/bench/testfile")
  for i in $(seq "$reps"); do
    for tool in $(order "$i"); do
      clean; drop
      if [ "$tool" = lockstep ]; then
        "${lock[@]}" -N "$clients" "${args[@]}" -w -k >"$work/o" 2>&1 && record "$name" lockstep "$work/o" ior
        drop
        "${lock[@]}" -N "$clients" "${args[@]}" -r >"$work/o" 2>&1 && record "$name" lockstep "$work/o" ior
      else
        "${mpi[@]}" "$iorbin/ior" "${args[@]}" -w -k >"$work/o" 2>&1 && record "$name" ior "$work/o" ior
        drop
        "${mpi[@]}" "$iorbin/ior" "${args[@]}" -r >"$work/o" 2>&1 && record "$name" ior "$work/o" ior
      fi
    done
  done
}

md_case() {
  local name=$1; shift
  for i in $(seq "$reps"); do
    for tool in $(order "$i"); do
      clean; drop
      if [ "$tool" = lockstep ]; then "${lockmd[@]}" --tasks "$clients" "$@" -d "$M/bench" >"$work/o" 2>&1
      else "${mpi[@]}" "$iorbin/mdtest" "$@" -d "$M/bench" >"$work/o" 2>&1; fi || {
        echo "$tool failed on $name:"; tail -5 "$work/o"; continue; }
      record "$name" "$tool" "$work/o" md
    done
  done
}

median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{a[NR]=$1} END{if(NR==0){print "nan"} else if(NR%2){print a[(NR+1)/2]} else {print (a[NR/2]+a[NR/2+1])/2}}'; }

echo "# $clients client hosts, $reps alternations, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
ior_case fpp-warm -w -r -e -F -b 256m -t 1m
ior_case shared-warm -w -r -e -b 256m -t 1m
ior_case fpp-reorder -w -r -e -F -C -b 256m -t 1m
cold_case fpp-cold -e -F -b 256m -t 1m
cold_case shared-cold -e -b 256m -t 1m
md_case mdtest-unique -n 1000 -u -F
md_case mdtest-shared -n 1000 -F

printf '%-14s %-7s %12s %12s %8s   %s\n' case op lockstep ior ratio "lockstep | ior (each run)"
for key in $(printf '%s\n' "${!figs[@]}" | sed 's/|[^|]*$//' | sort -u); do
  a="${figs[$key|lockstep]:-}" b="${figs[$key|ior]:-}"
  ma=$(echo "$a" | median) mb=$(echo "$b" | median)
  ratio=$(awk -v a="$ma" -v b="$mb" 'BEGIN{ if (b > 0 && a == a) printf "%.2f", a / b; else print "-" }')
  printf '%-14s %-7s %12s %12s %8s   %s| %s\n' "${key%%|*}" "${key##*|}" "$ma" "$mb" "$ratio" "$a" "$b"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
