#!/usr/bin/env bash
# Issue 43's 16-core measurements in one device call (about 9 minutes), for a
# session that is lent the 16-core machine (15 minutes of device time in all,
# starts included: read /work/.library/device/README.md first).
#
#   here, after a build:   ../shared/tools/devkit.sh build/test /path/to/fio
#                          (build/test: it has agent_swarm; the kit must stay within
#                          the 64 MiB a device call carries: ~30 MB without fio, and
#                          Debian's fio brings ~70 MB of libraries, so build a lean one
#                          from source as devkit.sh says, or leave fio out)
#   device run:            bash devkit/bench/device_issue43.sh      carry ["devkit"]
#   on 2 cores, to check:  tests/bench/device_issue43.sh --build build/test --quick
#
# Steps, each bounded by `timeout` so that one slow step leaves the rest their
# time; each step's output (the scripts' tables and JSON lines), the skew and
# fio JSON files and the whole log go to $OUT (they come back):
#   1. start skew at a task per core and beyond (item 1): 1x16, 16x1, 8x2, 4x4, 32x1;
#   2. the engine against fio at 8 and 16 tasks on tmpfs, 3 alternations (item 2),
#      when a fio is there (devkit/bin/fio or on PATH);
#   3. the controller at 1,024 swarm agents, plaintext then mutual TLS (item 3);
#   4. the controller at 10,000 swarm agents, plaintext (item 3: <= 2 s CPU per
#      phase, <= 600 MB, Prepare + collect <= 1.5 s).
# With --quick: 2 phases, 1x2/2x1 skew, 2 and 4 tasks against fio (1 alternation),
# 64 and 256 swarm agents: a dry check of the script on a small machine.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=""
quick=false
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --quick) quick=true; shift ;;
    *) echo "device_issue43.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "$build" ]; then  # in a devkit: bench/ beside build/, lib/ and bin/
  kit=$(cd "$here/.." && pwd)
  build=$kit/build
  export LD_LIBRARY_PATH=$kit/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export PATH=$kit/bin:$PATH
fi
build=$(cd "$build" && pwd)
OUT=${OUT:-/tmp/device-issue43}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
# ~33 threads per idle agent: 10,000 swarm agents are one process, but the
# skew cases' real agents and gRPC's pools still want room.
sysctl -w kernel.pid_max=4194304 >/dev/null 2>&1 || true
echo "cores $(nproc), kernel $(uname -r), $(date -u +%FT%TZ), build $build"
cd "$here"

step() {  # NAME SECONDS COMMAND...: runs it bounded; its output also in $OUT/NAME.out
  local name=$1 limit=$2
  shift 2
  echo "== $name (at most ${limit} s): $*"
  local t0=$SECONDS
  timeout "$limit" "$@" 2>&1 | tee "$OUT/$name.out"
  echo "== $name: exit ${PIPESTATUS[0]} after $((SECONDS - t0)) s"
}

if $quick; then
  step skew 120 ./start_skew.sh --build "$build" --no-bpftrace --phases 2 --cases 1x2,2x1 \
    --json "$OUT/skew.json"
  if command -v fio >/dev/null; then
    step fio 240 ./fio_compare.sh --build "$build" --reps 1 --cases shm \
      --json "$OUT/fio.json"
  fi
  step scale-plain 120 ./scale.sh --build "$build" --agents 64 --swarm --phases 2
  step scale-tls 120 ./scale.sh --build "$build" --agents 64 --swarm --phases 2 --tls
  step scale-big 180 ./scale.sh --build "$build" --agents 256 --swarm --phases 2
else
  step skew 150 ./start_skew.sh --build "$build" --no-bpftrace --phases 8 \
    --cases 1x16,16x1,8x2,4x4,32x1 --json "$OUT/skew.json"
  if command -v fio >/dev/null; then
    step fio 150 ./fio_compare.sh --build "$build" --reps 3 --cases shm16 \
      --json "$OUT/fio.json"
  else
    echo "== fio: skipped (no fio in devkit/bin or on PATH)"
  fi
  step scale-plain 60 ./scale.sh --build "$build" --agents 1024 --swarm --phases 6
  step scale-tls 60 ./scale.sh --build "$build" --agents 1024 --swarm --phases 6 --tls
  step scale-big 120 ./scale.sh --build "$build" --agents 10000 --swarm --phases 3 \
    --connect-timeout-ms 60000
fi
echo "done $(date -u +%FT%TZ); results in $OUT"
