#!/usr/bin/env bash
# ctest "slurm_sbatch" (label slurm): deploy/slurm/lockstep.sbatch end to end
# on a real local Slurm cluster: one slurmctld and four `slurmd -N nX` on this
# machine as four virtual nodes (../shared/reference/slurm-local.md), munge
# for authentication. Submits the script with `sbatch -N 4 --wait` and checks
# the results directory: a run with 4 client agents that all finished, the
# job directory (CA, keys, announcements) removed, no agent left running.
#   tests/deploy/slurm_test.sh BIN_DIR SOURCE_DIR
# Exit 77 (skipped) with the reason when not root or Slurm is not installed.
set -euo pipefail
bin_dir="$(cd "$1" && pwd)"
src_dir="$(cd "$2" && pwd)"
skip() { echo "SKIPPED: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "needs root to run slurmctld/slurmd (deploy/test.sh runs as root)"
for b in slurmctld slurmd sbatch scontrol sinfo munged; do
  command -v "$b" >/dev/null || skip "$b not installed (apt-get install slurm-wlm munge; deploy/test.sh does)"
done

work="$(mktemp -d /tmp/lockstep-slurm.XXXXXX)"
chmod 0755 "$work"
pids=()
started_munge=""
stop_all() {
  set +e
  SLURM_CONF="$work/slurm.conf" scontrol shutdown >/dev/null 2>&1
  for p in "${pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
  done
  pkill -f -- "lockstep-agent .*--announce $work/[.]lockstep-job-[0-9]+/announce" 2>/dev/null
  [[ -n "$started_munge" ]] && kill "$started_munge" 2>/dev/null
  rm -rf "$work"
}
trap stop_all EXIT

# Polls `cmd` until it succeeds or `secs` pass.
wait_for() {
  local secs="$1"; shift
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    [[ $SECONDS -lt $deadline ]] || return 1
    sleep 0.2
  done
}

# munge: a key and the daemon, unless one already answers.
if ! (munge -n | unmunge) >/dev/null 2>&1; then
  mkdir -p /etc/munge /var/log/munge /run/munge /var/lib/munge
  [[ -s /etc/munge/munge.key ]] || dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
  chown -R munge:munge /etc/munge /var/log/munge /run/munge /var/lib/munge
  chmod 400 /etc/munge/munge.key
  munged --force || skip "munged did not start"
  started_munge="$(cat /run/munge/munged.pid 2>/dev/null || true)"
  wait_for 10 bash -c 'munge -n | unmunge' || skip "munge does not answer"
fi

host="$(hostname -s)"
mkdir -p "$work/ctld" "$work/spool"
cat > "$work/slurm.conf" <<CONF
ClusterName=lockstep
SlurmctldHost=$host
SlurmctldPort=16817
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$work/ctld
SlurmdSpoolDir=$work/spool/%n
SlurmdPidFile=$work/slurmd-%n.pid
SlurmdLogFile=$work/slurmd-%n.log
SlurmctldLogFile=$work/slurmctld.log
SlurmctldPidFile=$work/slurmctld.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
NodeName=n[1-4] NodeHostname=$host NodeAddr=127.0.0.1 Port=17101-17104 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
export SLURM_CONF="$work/slurm.conf"
slurmctld -D -i >"$work/slurmctld.out" 2>&1 &
pids+=($!)
for n in 1 2 3 4; do
  slurmd -D -N "n$n" >"$work/slurmd-n$n.out" 2>&1 &
  pids+=($!)
done
all_idle() { [[ "$(sinfo -h -N -o '%t' | grep -c '^idle')" -eq 4 ]]; }
if ! wait_for 60 all_idle; then
  sinfo -N || true
  tail -n 20 "$work"/slurmctld.log "$work"/slurmd-n*.log || true
  echo "FAIL: the four virtual nodes did not become idle within 60 s"
  exit 1
fi

# A plan without [[agent]] tables, in a directory every "node" sees.
data="$work/data"
mkdir -p "$data"
cat > "$work/plan.toml" <<PLAN
[run]
name = "slurm-smoke"
[[phase]]
name = "write"
kind = "write"
dir = "$data"
file_per_process = true
tasks_per_agent = 2
transfer_size = "256k"
block_size = "1m"
[[phase]]
name = "read"
kind = "read"
dir = "$data"
file_per_process = true
tasks_per_agent = 2
transfer_size = "256k"
block_size = "1m"
verify = true
PLAN

cd "$work"
started=$SECONDS
set +e
LOCKSTEP_BIN_DIR="$bin_dir" timeout 300 sbatch -N 4 --wait -o "$work/job.out" \
  "$src_dir/deploy/slurm/lockstep.sbatch" --out "$work/results" "$work/plan.toml"
status=$?
set -e
echo "sbatch --wait: exit $status after $((SECONDS - started)) s"
cat "$work/job.out"
[[ $status -eq 0 ]] || { echo "FAIL: the job failed"; exit 1; }

run_json="$(ls "$work"/results/*/run.json 2>/dev/null | head -n1)"
[[ -n "$run_json" ]] || { echo "FAIL: no run.json under $work/results"; exit 1; }
python3 - "$run_json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
agents = r.get("agents", [])
ok = [a for a in agents if a.get("status") == "ok"]
assert len(agents) == 4, f"expected 4 agents, run.json has {len(agents)}"
assert len(ok) == 4, f"agents not ok: {[(a.get('address'), a.get('status')) for a in agents]}"
roles = {a.get("role") for a in agents}
assert roles == {"CLIENT"}, roles
print(f"run.json: 4 agents ok at {sorted(a['address'] for a in agents)}; status {r.get('status')}")
PY
grep -q "Summary of all tests" "$work/job.out" || { echo "FAIL: no IOR summary in the job output"; exit 1; }
if ls -d "$work"/.lockstep-job-* >/dev/null 2>&1; then
  echo "FAIL: the job directory (CA, keys) was left behind"; exit 1
fi
# (A pattern that does not match its own command line.)
agents_pattern="lockstep-agent .*--announce $work/[.]lockstep-job-[0-9]+/announce"
no_agents() { ! pgrep -f -- "$agents_pattern"; }
if ! wait_for 10 no_agents; then
  echo "FAIL: agents still running after the job"; pgrep -af -- "$agents_pattern"; exit 1
fi
echo "PASS: 4 virtual nodes, sbatch end to end in $((SECONDS - started)) s"
