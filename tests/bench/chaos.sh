#!/usr/bin/env bash
# Faults at scale: N real agents on this host, a plan of P short repetitions
# with on_agent_loss = "continue", and faults injected one at a time into
# random agents at random stages of a repetition while it runs.
#
#   tests/bench/chaos.sh --agents 64 --phases 50 [--seed S] [--lease-ms 2000]
#                        [--netns K] [--faults F] [--hold-ms 150] [--build DIR] [--keep]
#
# Faults: SIGKILL, SIGSTOP (a hung agent; resumed with SIGCONT after the run)
# and, as root, a network cut: K agents (default 4 when root, else 0) run in
# their own network namespace behind a veth pair whose host end is set down
# (they then use mutual TLS, as every agent does, since their addresses are
# not loopback). Stages: prepare, cache (barrier), start, io, collect,
# cleanup. So that each stage lasts long enough to be aimed at, every agent
# holds Prepare, the cache barrier and Cleanup for --hold-ms (the agents' test
# hook --test_delay_calls; heartbeats are still answered) and its I/O takes
# ~300 ms (--test_delay_per_transfer_us). A fault is aimed at a stage by
# watching the victim's log for the hook's line ("test hook: prepare
# delayed") and, for start/io/collect, by timing from the cache barrier's;
# the stage it actually landed in is then read from run.json's timestamps of
# that repetition (prepare_sent, prepared, start_at, results, reduced).
# The next fault waits until the previous one was reported.
#
# Detection: the instant the controller printed "... continuing without it"
# naming the victim (stdout, read as it comes) minus the injection instant;
# "detected" counts those within lease + 1 s. Files left behind: after the
# run, stopped agents are resumed and cut links restored, their leases left
# to expire, then every live agent's root is scanned (a SIGKILLed agent
# cannot remove what it wrote: its files are counted apart, as
# files_of_killed_agents; the next write of that rank removes them, as IOR's).
#
# Prints one JSON line: faults_injected, by_kind, by_stage (aimed and
# landed), detected, max_detect_ms, detect_ms (each), faults (each: agent,
# kind, aimed, landed, detect_ms or null), files_left_behind,
# files_of_killed_agents, controller_hangs, controller_exit, partial_rows,
# rows, whole_run_s.
source "$(dirname "$0")/lib.sh"
bench_args chaos "$@"
bench_python - <<'PY'
import argparse, json, os, random, re, shutil, signal, subprocess, sys, tempfile, threading, time
import benchlib

ap = argparse.ArgumentParser(prog="chaos.sh")
ap.add_argument("--build", required=True)
ap.add_argument("--agents", type=int, default=64)
ap.add_argument("--phases", type=int, default=50, help="repetitions of one write phase")
ap.add_argument("--seed", type=int, default=int(time.time()))
ap.add_argument("--lease-ms", type=int, default=2000)
ap.add_argument("--netns", type=int, default=-1,
                help="agents in their own network namespace (default: 4 as root, else 0)")
ap.add_argument("--faults", type=int, default=0,
                help="faults to inject (default: a quarter of the agents)")
ap.add_argument("--hold-ms", type=int, default=150, help="Prepare, cache barrier and Cleanup hold")
ap.add_argument("--keep", action="store_true")
a = ap.parse_args()
rng = random.Random(a.seed)
bins = benchlib.Bins(os.path.abspath(a.build))
root_user = os.geteuid() == 0 and shutil.which("ip") is not None
netns = a.netns if a.netns >= 0 else (4 if root_user else 0)
if netns and not root_user:
    raise SystemExit("chaos: --netns needs root and ip(8)")
netns = min(netns, a.agents)
n_faults = a.faults or max(1, a.agents // 4)
work = tempfile.mkdtemp(prefix="lockstep-chaos-")
shm = tempfile.mkdtemp(prefix="lockstep-chaos-", dir="/dev/shm")
logs = os.path.join(work, "logs"); os.makedirs(logs)
pki = os.path.join(work, "pki")
tag = f"lsx{os.getpid() % 10000}"  # namespace and link names: ours only
STAGES = ["prepare", "cache", "start", "io", "collect", "cleanup"]


def sh(*argv):
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


class Agent:
    def __init__(self, k):
        self.k = k
        self.root = os.path.join(shm, f"a{k}")
        os.makedirs(os.path.join(self.root, "data"))
        self.ns = f"{tag}n{k}" if k < netns else ""
        self.host = f"10.214.{k + 1}.2" if self.ns else "127.0.0.1"
        self.log_path = os.path.join(logs, f"agent-{k}.log")
        self.state = "ok"  # ok, killed, stopped, cut

    def argv(self):
        prefix = ["ip", "netns", "exec", self.ns] if self.ns else []
        cert = os.path.join(pki, f"agent-a{self.k}")
        return prefix + [bins.agent, "--listen", f"{self.host}:0", "--root", self.root,
                         "--tls_ca", os.path.join(pki, "ca.pem"), "--tls_cert", cert + ".pem",
                         "--tls_key", cert + ".key", "--allow_drop_caches=false",
                         "--test_delay_calls", "prepare,cache,cleanup",
                         "--test_delay_call_ms", str(a.hold_ms),
                         "--test_delay_per_transfer_us", "20000"]

    def start(self):
        self.listener = benchlib.Listener(self.argv(), self.log_path, timeout=60)
        self.address = self.listener.address
        # `ip netns exec` execs the agent: the pid is the agent's.
        self.pid = self.listener.pid

    def hook_lines(self, call):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().count(f"test hook: {call} delayed".encode())
        except OSError:
            return 0


def make_network():
    for ag in agents[:netns]:
        i = ag.k + 1
        sh("ip", "netns", "add", ag.ns)
        sh("ip", "-n", ag.ns, "link", "set", "lo", "up")
        sh("ip", "link", "add", f"{tag}c{i}", "type", "veth", "peer", "name", f"{tag}a{i}",
           "netns", ag.ns)
        sh("ip", "addr", "add", f"10.214.{i}.1/24", "dev", f"{tag}c{i}")
        sh("ip", "-n", ag.ns, "addr", "add", f"10.214.{i}.2/24", "dev", f"{tag}a{i}")
        sh("ip", "link", "set", f"{tag}c{i}", "up")
        sh("ip", "-n", ag.ns, "link", "set", f"{tag}a{i}", "up")


def remove_network():
    for ag in agents[:netns]:
        subprocess.run(["ip", "link", "del", f"{tag}c{ag.k + 1}"], stderr=subprocess.DEVNULL)
        subprocess.run(["ip", "netns", "del", ag.ns], stderr=subprocess.DEVNULL)


def set_link(ag, up):
    sh("ip", "link", "set", f"{tag}c{ag.k + 1}", "up" if up else "down")


def make_certs():
    hostfile = os.path.join(work, "certs.txt")
    with open(hostfile, "w") as f:
        for ag in agents:
            f.write(f"a{ag.k} {ag.host}\n")
    sh(bins.lockstep, "certs", "init", "--dir", pki, "--controller", "controller",
       "--hostfile", hostfile)


def plan():
    return (f'[run]\nname = "chaos-{a.agents}"\nrepetitions = {a.phases}\n'
            f'lease_ms = {a.lease_ms}\non_agent_loss = "continue"\ncache = "clients"\n'
            f'connect_timeout_ms = 20000\n\n'
            + benchlib.agent_tables([ag.address for ag in agents])
            + '[[phase]]\nname = "w"\nkind = "write"\ndir = "data"\nfile_per_process = true\n'
              'transfer_size = "64k"\nblock_size = "1m"\n')


class Controller:
    """`lockstep run` with its stdout lines timestamped as they come."""

    def __init__(self, plan_path, out):
        self.proc = subprocess.Popen([bins.lockstep, "run", "--tls_dir", pki, "--out", out,
                                      "--history=false", plan_path],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = []  # (time_ns, line)
        self.out = out
        self.journal = None  # its path, once the run directory exists
        self.journal_offset = 0
        self.journal_errors = []  # (when first seen, a failed phase's error)
        self.lock = threading.Lock()
        self.err = ""
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            with self.lock:
                self.lines.append((time.time_ns(), line))

    def _read_err(self):
        self.err = self.proc.stderr.read()

    def loss_reported(self, address, since):
        """When the loss of `address` was first seen: the failed phase in the
        journal (written as the phase ends, before the survivors' cleanup),
        or the "continuing without it" note, or its "agent A lost too" line
        for a further agent (losses in Cleanup are not journaled)."""
        self._scan_journal()
        with self.lock:
            for t, line in self.lines[since:]:
                # "... continuing without it", or in a note of several
                # losses one "agent A lost too: ..." line per further agent.
                if re.search(re.escape(address) + r"(?!\d)", line) and (
                        "continuing without it" in line or re.search(
                            r"agent " + re.escape(address) + r"(?!\d) lost too", line)):
                    seen = t
                    break
            else:
                seen = None
        pattern = re.compile(re.escape(address) + r"(?!\d)")
        j = next((t for t, err in self.journal_errors if pattern.search(err)), None)
        if j is not None:
            seen = j if seen is None else min(seen, j)
        return seen

    def _scan_journal(self):
        if self.journal is None and os.path.isdir(self.out):
            for d in os.listdir(self.out):
                if os.path.exists(os.path.join(self.out, d, "journal.jsonl")):
                    self.journal = os.path.join(self.out, d, "journal.jsonl")
        if self.journal is None:
            return
        now = time.time_ns()
        with open(self.journal, "rb") as f:
            f.seek(self.journal_offset)
            data = f.read()
        end = data.rfind(b"\n") + 1
        self.journal_offset += end
        for line in data[:end].splitlines():
            try:
                err = json.loads(line).get("error", "")
            except ValueError:
                continue
            if err:
                self.journal_errors.append((now, err))

    def line_count(self):
        with self.lock:
            return len(self.lines)

    def running(self):
        return self.proc.poll() is None


def wait_for_hook(ag, call, before, ctl, timeout_s=30):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and ctl.running():
        if ag.hook_lines(call) > before:
            return True
        time.sleep(0.003)
    return False


def inject(ag, kind):
    if kind == "kill":
        os.kill(ag.pid, signal.SIGKILL)
        ag.state = "killed"
    elif kind == "stop":
        os.kill(ag.pid, signal.SIGSTOP)
        ag.state = "stopped"
    else:
        set_link(ag, False)
        ag.state = "cut"


def aim(ag, stage, ctl):
    """Waits until `ag` is in (or about to be in) `stage`; False if the run ended."""
    hold_s = a.hold_ms / 1000
    if stage in ("prepare", "cache", "cleanup"):
        if not wait_for_hook(ag, stage, ag.hook_lines(stage), ctl):
            return False
        time.sleep(rng.uniform(0, hold_s * 0.6))
        return True
    if stage == "start":
        # The barrier is two held calls (sync, then drop caches); the start
        # instant follows the second by the lead (7 ms to a few 100 ms).
        before = ag.hook_lines("cache")
        if not wait_for_hook(ag, "cache", before + 1, ctl):
            return False
        time.sleep(hold_s + 0.003)
        return True
    # io: once the victim's task created its file; collect: once it wrote
    # all of it (its result is on its way).
    data = os.path.join(ag.root, "data")
    size = lambda: sum(os.path.getsize(os.path.join(data, n)) for n in os.listdir(data))
    deadline = time.monotonic() + 60
    while os.listdir(data) and time.monotonic() < deadline and ctl.running():
        time.sleep(0.002)  # the previous repetition's file, until removed
    want = (lambda: os.listdir(data)) if stage == "io" else (lambda: size() >= 1 << 20)
    while time.monotonic() < deadline and ctl.running():
        try:
            if want():
                break
        except OSError:
            pass
        time.sleep(0.002)
    else:
        return False
    if stage == "io":
        time.sleep(rng.uniform(0, 0.15))
    return True


def landed_stage(rec, t_ns):
    """The stage of the repetition running at t_ns (the last one Prepared by
    then), from run.json's timestamps."""
    g = lambda p, k: int(p.get(k, 0) or 0)
    started = [p for p in benchlib.phases(rec) if 0 < g(p, "prepare_sent_unix_ns") <= t_ns]
    if not started:
        return "before the first Prepare"
    p = max(started, key=lambda p: g(p, "prepare_sent_unix_ns"))
    prepared, start_at = g(p, "prepared_unix_ns"), g(p, "start_at_unix_ns")
    if prepared and t_ns < prepared:
        return "prepare"
    if not start_at:
        return "cache"
    first_io = min(benchlib.first_io_unix_ns(p) or [start_at])
    closes = [int(t.get("close_stop_unix_ns", 0)) for ag in p.get("agents", [])
              for t in ag.get("tasks", [])]
    last_close = max(closes or [g(p, "results_unix_ns") or start_at])
    if t_ns < start_at - g(p, "lead_ns"):
        return "cache"
    if t_ns < first_io:
        return "start"
    if t_ns < last_close:
        return "io"
    if g(p, "reduced_unix_ns") and t_ns < g(p, "reduced_unix_ns"):
        return "collect"
    return "cleanup"  # after its results, before the next Prepare


agents = [Agent(k) for k in range(a.agents)]
result = {"agents": a.agents, "phases": a.phases, "seed": a.seed, "lease_ms": a.lease_ms,
          "netns_agents": netns, "hold_ms": a.hold_ms}
ctl = None
try:
    if netns:
        make_network()
    make_certs()
    for ag in agents:
        ag.start()
    plan_path = os.path.join(work, "plan.toml")
    with open(plan_path, "w") as f:
        f.write(plan())
    t_run = time.monotonic()
    ctl = Controller(plan_path, os.path.join(work, "out"))
    kinds = ["kill", "stop"] + (["cut"] if netns else [])
    faults = []
    for n in range(n_faults):
        if not ctl.running():
            break
        kind = rng.choice(kinds)
        pool = [ag for ag in agents if ag.state == "ok" and (kind == "cut") == bool(ag.ns)]
        if not pool:
            kind = rng.choice(["kill", "stop"])
            pool = [ag for ag in agents if ag.state == "ok" and not ag.ns]
        if len([ag for ag in agents if ag.state == "ok"]) <= 2 or not pool:
            break
        ag = rng.choice(pool)
        stage = rng.choice(STAGES)
        since = ctl.line_count()
        if not aim(ag, stage, ctl):
            break
        t_inj = time.time_ns()
        inject(ag, kind)
        f = {"agent": ag.k, "kind": kind, "aimed": stage, "t_ns": t_inj}
        faults.append(f)
        # The next fault once this one was reported (or the run ended);
        # looked at every 5 ms.
        bound = time.monotonic() + a.lease_ms / 1000 + 30
        while time.monotonic() < bound and ctl.running():
            t_seen = ctl.loss_reported(ag.address, since)
            if t_seen:
                f["detect_ms"] = round((t_seen - t_inj) / 1e6, 1)
                break
            time.sleep(0.005)
        if "detect_ms" not in f:
            t_seen = ctl.loss_reported(ag.address, since)
            if t_seen:
                f["detect_ms"] = round((t_seen - t_inj) / 1e6, 1)
    # The rest of the run; a controller that does not end is a hang.
    budget_s = 120 + a.phases * (3 * a.hold_ms / 1000 + 1.5) + n_faults * (2 * a.lease_ms / 1000 + 5)
    try:
        ctl.proc.wait(max(budget_s - (time.monotonic() - t_run), 30))
        hangs = 0
    except subprocess.TimeoutExpired:
        hangs = 1
        ctl.proc.kill()
        ctl.proc.wait()
    whole_s = time.monotonic() - t_run
    time.sleep(0.2)  # the reader threads' last lines
    m = re.search(r"^#?\s*Results\s+: (.*?)/?$", "".join(l for _, l in ctl.lines), re.M)
    rec = {}
    if m and os.path.exists(os.path.join(m.group(1), "run.json")):
        with open(os.path.join(m.group(1), "run.json")) as fh:
            rec = json.load(fh)
    # Resume and reconnect, let the leases run out, then look for files.
    for ag in agents:
        if ag.state == "stopped":
            os.kill(ag.pid, signal.SIGCONT)
        elif ag.state == "cut":
            set_link(ag, True)
    deadline = time.monotonic() + a.lease_ms / 1000 + 10
    def leftovers(ags):
        return sum(len(os.listdir(os.path.join(ag.root, "data"))) for ag in ags)
    live = [ag for ag in agents if ag.state != "killed"]
    while leftovers(live) and time.monotonic() < deadline:
        time.sleep(0.05)
    rows = list(benchlib.phases(rec))
    lease_plus = a.lease_ms + 1000
    for f in faults:
        f["landed"] = landed_stage(rec, f["t_ns"]) if rec else "?"
    detects = [f["detect_ms"] for f in faults if "detect_ms" in f]
    by = lambda key: {v: sum(1 for f in faults if f[key] == v) for v in sorted({f[key] for f in faults})}
    result.update({
        "faults_injected": len(faults),
        "by_kind": by("kind"), "aimed": by("aimed"), "landed": by("landed"),
        "detected": sum(1 for d in detects if d <= lease_plus),
        "detected_late": sum(1 for d in detects if d > lease_plus),
        "undetected": len(faults) - len(detects),
        "max_detect_ms": max(detects) if detects else None,
        "detect_ms": detects,
        "faults": [{k: f.get(k) for k in ("agent", "kind", "aimed", "landed", "detect_ms")}
                   for f in faults],
        "files_left_behind": leftovers(live),
        "files_of_killed_agents": leftovers([ag for ag in agents if ag.state == "killed"]),
        "controller_hangs": hangs,
        "controller_exit": ctl.proc.returncode,
        "run_status": rec.get("status"),
        "lost_agents": sum(1 for ag in rec.get("agents", []) if ag.get("status") == "lost"),
        "partial_rows": sum(1 for p in rows if p.get("partial")),
        "rows": len(rows),
        "whole_run_s": round(whole_s, 1),
    })
    if os.environ.get("CHAOS_VERBOSE"):
        print(json.dumps(faults), file=sys.stderr)
        for p in rows:
            print(p.get("phase_id"), {k: p.get(k) for k in ("prepare_sent_unix_ns", "prepared_unix_ns", "start_at_unix_ns", "lead_ns", "results_unix_ns", "reduced_unix_ns", "error")}, file=sys.stderr)
        print(ctl.err[-2000:], file=sys.stderr)
    for f in faults:
        f.pop("t_ns")
    print(json.dumps(result), flush=True)
finally:
    if ctl is not None and ctl.running():
        ctl.proc.kill()
    for ag in agents:
        if getattr(ag, "listener", None) is None:
            continue
        if ag.state == "stopped":
            try:
                os.kill(ag.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        ag.listener.stop()
    if netns:
        remove_network()
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(shm, ignore_errors=True)
PY
