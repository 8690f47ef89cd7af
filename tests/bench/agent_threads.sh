#!/usr/bin/env bash
# The threads of an idle lockstep-agent, by name, as on hosts of N cores.
#
#   tests/bench/agent_threads.sh [--build DIR] [CORES ...]     (default: 2 4 8 16 32 64)
#
# gRPC sizes its pools by the configured processor count (glibc's
# _SC_NPROCESSORS_CONF, read from /sys/devices/system/cpu), so a private
# mount namespace (unshare -m, as root) with a made-up /sys/devices/system/cpu
# of N "cpuK" directories shows what an agent starts on an N-core host,
# without one. Prints, per N, the total and a count per thread name (comm).
# The agent listens on loopback (--insecure) below a scratch root that is
# removed at exit.
source "$(dirname "$0")/lib.sh"
bench_args agent_threads "$@"
[[ $(id -u) == 0 ]] || { echo "agent_threads.sh: needs root (unshare -m, mount --bind)" >&2; exit 2; }
agent="$build/lockstep-agent"
[[ -x "$agent" ]] || { echo "agent_threads.sh: no $agent (give --build DIR)" >&2; exit 2; }
cores=("${args[@]}")
[[ ${#cores[@]} -gt 0 ]] || cores=(2 4 8 16 32 64)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for n in "${cores[@]}"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "agent_threads.sh: '$n' is not a core count" >&2; exit 2; }
  unshare -m bash -s "$n" "$agent" "$work/$n" <<'INNER'
set -euo pipefail
n="$1" agent="$2" dir="$3"
mkdir -p "$dir/cpu" "$dir/root"
printf '0-%d\n' $((n - 1)) | tee "$dir/cpu/possible" "$dir/cpu/present" > "$dir/cpu/online"
for ((i = 0; i < n; i++)); do mkdir "$dir/cpu/cpu$i"; done
mount --make-rprivate / && mount --bind "$dir/cpu" /sys/devices/system/cpu
"$agent" --listen 127.0.0.1:0 --root "$dir/root" --insecure > "$dir/log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true' EXIT
# Listening, then the thread count unchanged for a second (pools start lazily).
deadline=$((SECONDS + 30)) last=-1 same=0
until grep -q listening "$dir/log"; do
  ((SECONDS < deadline)) || { echo "no 'listening' within 30 s:"; cat "$dir/log"; exit 1; }
  sleep 0.05
done
while ((same < 10 && SECONDS < deadline)); do
  now=$(ls "/proc/$pid/task" | wc -l)
  if [[ $now == "$last" ]]; then same=$((same + 1)); else same=0 last=$now; fi
  sleep 0.1
done
by_name=$(for t in /proc/$pid/task/*; do cat "$t/comm"; done | sort | uniq -c |
          awk '{printf "%s%s %d", sep, $2, $1; sep=", "}')
echo "cores $n ($(getconf _NPROCESSORS_CONF) seen): $last threads: $by_name"
INNER
done
