#!/usr/bin/env bash
# An agent's CPU per unary call: the floor under every fan-out round when
# agents share cores (tests/bench/README.md, "Sixth pass").
#
#   tests/bench/rpc_cost.sh [--build DIR] [--calls 5000] [--runs 3] [AGENT FLAGS...]
#
# Starts one lockstep-agent on loopback (plaintext, root in /dev/shm), warms
# it with 200 Heartbeats, then times `agent_probe --repeat N` (N Heartbeats
# one after another in one session) and reads the agent's user + system CPU
# (/proc/PID/stat) and context switches (/proc/PID/task/*/status: the threads
# alive at each read, so approximate; gRPC retires and starts threads) around it.
# Prints one JSON line per run: calls, wall_ms, agent_cpu_us_per_call,
# agent_context_switches_per_call, agent_threads.
source "$(dirname "$0")/lib.sh"
bench_args rpc_cost "$@"
calls=5000
runs=3
extra=()
set -- "${args[@]}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --calls) calls="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    *) extra+=("$1"); shift ;;
  esac
done
agent="$build/lockstep-agent"
probe="$build/tests/agent_probe"
for b in "$agent" "$probe"; do
  [[ -x "$b" ]] || { echo "rpc_cost: $b is not built; build first (cmake --build $build)" >&2; exit 2; }
done
tick=$(getconf CLK_TCK)

cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^(non)?voluntary_ctxt_switches/ { s += $2 } END { print s + 0 }'; }

for ((r = 1; r <= runs; r++)); do
  root=$(mktemp -d /dev/shm/lockstep-rpc-cost.XXXXXX)
  log=$(mktemp /tmp/lockstep-rpc-cost.XXXXXX)
  "$agent" --listen 127.0.0.1:0 --root "$root" --insecure "${extra[@]}" >"$log" 2>&1 &
  pid=$!
  trap 'kill $pid 2>/dev/null; rm -rf "$root" "$log"' EXIT
  address=""
  deadline=$((SECONDS + 20))
  while [[ -z "$address" ]]; do
    address=$(grep -oE 'listening on [^ ]+' "$log" | head -1 | cut -d' ' -f3 || true)
    if [[ -z "$address" ]]; then
      kill -0 "$pid" 2>/dev/null || { echo "rpc_cost: the agent exited: $(cat "$log")" >&2; exit 1; }
      ((SECONDS < deadline)) || { echo "rpc_cost: the agent did not listen within 20 s" >&2; exit 1; }
      sleep 0.05
    fi
  done
  "$probe" "$address" --repeat 200 >/dev/null
  c0=$(cpu_ticks "$pid"); s0=$(switches "$pid")
  out=$("$probe" "$address" --repeat "$calls")
  c1=$(cpu_ticks "$pid"); s1=$(switches "$pid")
  threads=$(ls /proc/"$pid"/task | wc -l)
  wall_ms=$(echo "$out" | awk '{ print $4 }')
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$root" "$log"; trap - EXIT
  python3 -c "import json; print(json.dumps({'calls': $calls, 'wall_ms': $wall_ms,
    'agent_cpu_us_per_call': round(($c1 - $c0) * 1e6 / $tick / $calls, 1),
    'agent_context_switches_per_call': round(($s1 - $s0) / $calls, 2), 'agent_threads': $threads}))"
done
