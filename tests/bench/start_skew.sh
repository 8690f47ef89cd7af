#!/usr/bin/env bash
# Start skew of Lockstep phases, from run.json and from an independent probe.
#
#   tests/bench/start_skew.sh [--build DIR] [--phases 20] [--cases a,b,c,d]
#                             [--no-bpftrace] [--json OUT.json]
#   tests/bench/start_skew.sh --mpi [--build DIR] [--tasks 2,4,32] [--alternations 5]
#                             [--reps 3] [--ior /opt/ior/bin/ior] [--base OLD_BUILD]
#                             [--json OUT.json]
#
# --mpi: `lockstep ior --local 2` against `mpirun ior` with the same options,
# alternated, both traced by the same bpftrace probe; prints the ratio per
# case (skew_vs_mpi.py; IOR built by build_ior.sh).
#
# Cases (loopback agents, files on /dev/shm so that no disk time enters):
#   a  2 agents x 1 task (one task per core on a 2-core machine: agents spin)
#   b  8 agents x 4 tasks (32 tasks on the cores there are: no spin)
#   c  2 agents x 1 task behind latency relays, 5 ms +- 1 ms each way
#   d  32 agents x 1 task: the barrier round, from the controller's first
#      Prepare to the last task's first I/O (run.json prepare_sent_unix_ns,
#      prepared_unix_ns, start_at_unix_ns and first_io_unix_ns; all in the controller's clock)
#   AxT  A agents x T tasks each, e.g. 1x4 (4 tasks of one agent: the start
#      gate of agent/start_gate.h when they outnumber the cores)
# Each case runs one plan with one write phase repeated --phases times and
# reports the median (and min/max) of run.json start_skew_ns (max - min of
# the tasks' first_io_unix_ns, mapped into the controller's clock by the measured
# offsets). Independently, when root and bpftrace can attach, it traces
# sys_enter_pwrite64 of the agent processes (by pid), keeps the first per
# thread (each phase has new task threads), groups them by phase (tasks per
# phase, in time order) and reports max - min of the kernel's nsecs
# (CLOCK_MONOTONIC, one clock for all agents on this host: no offsets).
BENCH_OWN_FLAGS="--mpi"
source "$(dirname "$0")/lib.sh"
bench_args start_skew "$@"
if [[ -n "${bench_own[--mpi]:-}" ]]; then
  bench_python "$here/skew_vs_mpi.py"
fi
bench_python - <<'PY'
import argparse, json, os, select, shutil, signal, subprocess, sys, tempfile, time
import benchlib
import skewprobe

ap = argparse.ArgumentParser(prog="start_skew.sh")
ap.add_argument("--build", required=True)
ap.add_argument("--phases", type=int, default=20)
ap.add_argument("--cases", default="a,b,c,d")
ap.add_argument("--no-bpftrace", action="store_true")
ap.add_argument("--json", default="")
ap.add_argument("--block", default="4m", help="block_size per task (transfer 1m, or the block if smaller)")
ap.add_argument("--keep", action="store_true", help="keep the run directories and bpftrace output")
a = ap.parse_args()
bins = benchlib.Bins(os.path.abspath(a.build))

CASES = {
    "a": dict(label="a: 2 agents x 1 task", agents=2, tasks=1, relay=None),
    "b": dict(label="b: 8 agents x 4 tasks", agents=8, tasks=4, relay=None),
    "c": dict(label="c: 2 x 1 via relay 5+-1 ms", agents=2, tasks=1, relay=(5, 1)),
    "d": dict(label="d: 32 agents x 1 task", agents=32, tasks=1, relay=None),
}
work = tempfile.mkdtemp(prefix="lockstep-skew-")
logs = os.path.join(work, "logs"); os.makedirs(logs)
shm = tempfile.mkdtemp(prefix="lockstep-skew-", dir="/dev/shm")


def bpftrace_usable():
    return "disabled (--no-bpftrace)" if a.no_bpftrace else skewprobe.usable()


class Probe:
    """bpftrace: first pwrite64 per thread of the given pids."""

    def __init__(self, pids, out_path):
        pred = " || ".join(f"pid == {p}" for p in pids)
        prog = ('BEGIN { printf("ready\\n"); } '
                f'tracepoint:syscalls:sys_enter_pwrite64 /({pred}) && @seen[tid] == 0/ '
                '{ @seen[tid] = 1; printf("%d %d %llu\\n", pid, tid, nsecs); } '
                'END { clear(@seen); }')
        self.out_path = out_path
        self.proc = skewprobe.start_bpftrace(prog, out_path)

    def events(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill(); self.proc.wait()
        ev = []
        with open(self.out_path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and all(p.isdigit() for p in parts):
                    ev.append((int(parts[2]), int(parts[0]), int(parts[1])))
        return sorted(ev)


def plan_for(addresses, tasks, phases, name):
    return benchlib.write_plan(addresses, name, phases, tasks, a.block)


def stats(xs):
    xs = [x for x in xs if x == x]
    if not xs:
        return "n/a"
    return f"{benchlib.median(xs):9.1f} ({min(xs):.1f}..{max(xs):.1f})"


why_no_probe = bpftrace_usable()
with open("/proc/loadavg") as f:
    load = f.read().split()[:3]
print(f"# start_skew: {a.phases} phases per case; {os.cpu_count()} cores shared with other jobs "
      f"(load {' '.join(load)}); files on {shm} (tmpfs)")
print("# probe: " + ("bpftrace sys_enter_pwrite64, first per task thread" if not why_no_probe
                     else "none: " + why_no_probe))
results = []
def case_of(key):
    if key in CASES:
        return CASES[key]
    agents, _, tasks = key.partition("x")
    if not (agents.isdigit() and tasks.isdigit()):
        raise SystemExit(f"start_skew: unknown case {key!r}: a, b, c, d or AGENTSxTASKS (1x4)")
    return dict(label=f"{key}: {agents} agent(s) x {tasks} tasks", agents=int(agents),
                tasks=int(tasks), relay=None)


for key in a.cases.split(","):
    c = case_of(key)
    procs, relays, probe = [], [], None
    try:
        for i in range(c["agents"]):
            procs.append(benchlib.start_agent(bins, os.path.join(shm, key, str(i)), logs))
        addresses = [p.address for p in procs]
        if c["relay"]:
            for p in procs:
                relays.append(benchlib.start_relay(bins, p.address, logs, *c["relay"]))
            addresses = [r.address for r in relays]
        if not why_no_probe:
            try:
                probe = Probe([p.pid for p in procs], os.path.join(work, f"bpf-{key}.txt"))
            except RuntimeError as e:
                print(f"# probe for {key} failed: {e}")
        rec, _ = benchlib.run_lockstep(bins, plan_for(addresses, c["tasks"], a.phases, "skew-" + key),
                                       os.path.join(work, "results"))
        ph = list(benchlib.phases(rec))
        skew_us = [int(p.get("start_skew_ns", 0)) / 1e3 for p in ph]
        r = {"case": c["label"], "phases": len(ph), "skew_us": skew_us,
             "delay_us": [int(ag.get("clock", {}).get("delay_ns", 0)) / 1e3 for ag in rec["agents"]],
             "offset_us": [int(ag.get("clock", {}).get("offset_ns", 0)) / 1e3 for ag in rec["agents"]]}
        # Barrier round: Prepare sent -> last first I/O; and its parts.
        rounds, prep, lead, late = [], [], [], []
        # Where a late start goes: the tasks' wake-up (release - start_at, the
        # latest task) or their open (first I/O - release, the longest); run.json
        # has the tasks' instants in the controller's clock already.
        release_late, opening = [], []
        for p in ph:
            at = int(p.get("start_at_unix_ns", 0))
            rel, op = [], []
            for ag in p.get("agents", []):
                for t in ag.get("tasks", []):
                    r_ns, f_ns = int(t.get("release_unix_ns", 0)), int(t.get("first_io_unix_ns", 0))
                    if r_ns and f_ns:
                        rel.append((r_ns - at) / 1e3)
                        op.append((f_ns - r_ns) / 1e3)
            if rel:
                release_late.append(max(rel))
                opening.append(max(op))
        r.update(release_late_us=release_late, open_us=opening)
        for p in ph:
            fio_ns = benchlib.first_io_unix_ns(p)
            if not fio_ns or "prepare_sent_unix_ns" not in p:
                continue
            sent, done, at = int(p["prepare_sent_unix_ns"]), int(p["prepared_unix_ns"]), int(p["start_at_unix_ns"])
            rounds.append((max(fio_ns) - sent) / 1e3)
            prep.append((done - sent) / 1e3)
            lead.append((at - done) / 1e3)
            late.append((max(fio_ns) - at) / 1e3)
        r.update(round_us=rounds, prepare_us=prep, lead_us=lead, late_us=late)
        if probe:
            ev = probe.events()
            per = c["agents"] * c["tasks"]
            groups = [ev[i:i + per] for i in range(0, len(ev), per)]
            r["bpf_events"] = len(ev)
            r["bpf_skew_us"] = [(g[-1][0] - g[0][0]) / 1e3 for g in groups if len(g) == per]
            if len(ev) != per * len(ph):
                print(f"# {key}: bpftrace saw {len(ev)} first writes, expected {per * len(ph)}; "
                      "grouping may be off")
        results.append(r)
        print(f"{c['label']:28s} run.json skew us: {stats(skew_us)}   bpftrace skew us: "
              f"{stats(r.get('bpf_skew_us', []))}   Prepare->all started us: {stats(rounds)}",
              flush=True)
    finally:
        if probe and probe.proc.poll() is None:
            probe.proc.kill(); probe.proc.wait()
        for p in relays + procs:
            p.stop()

print()
print("| case | phases | start skew, run.json (median, min..max) us | start skew, bpftrace pwrite64 us "
      "| Prepare sent -> all started us | of which Prepare round | lead (start_at - prepared) "
      "| last start - start_at | latest release - start_at | longest release -> first I/O "
      "| clock delay (RTT) us |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for r in results:
    print(f"| {r['case']} | {r['phases']} | {stats(r['skew_us'])} | {stats(r.get('bpf_skew_us', []))} "
          f"| {stats(r['round_us'])} | {stats(r['prepare_us'])} | {stats(r['lead_us'])} "
          f"| {stats(r['late_us'])} | {stats(r['release_late_us'])} | {stats(r['open_us'])} "
          f"| {stats(r['delay_us'])} |")
if a.json:
    with open(a.json, "w") as f:
        json.dump(results, f, indent=1)
shutil.rmtree(shm, ignore_errors=True)
if a.keep:
    print(f"# kept {work}")
else:
    shutil.rmtree(work, ignore_errors=True)
PY
