#!/usr/bin/env bash
# The controller's own cost per agent: one run of a write phase on N agents.
#
#   tests/bench/scale.sh --agents N [--swarm] [--tasks-per-agent T] [--phases P]
#                        [--block 256k] [--build DIR] [--lockstep BIN]
#                        [--swarm-processes K] [--swarm-threads 2] [--telemetry on|off]
#                        [--telemetry-processes on|off (real agents: per-process CPU;
#                         each of N agents on this one host scans every process)]
#                        [--telemetry-interval-ms MS (swarm; default 10 ms per agent, >= 10 s)]
#                        [--lease-ms MS] [--connect-timeout-ms MS] [--keep] [--tls]
#                        [--phase-keys 'delay_seconds = 8' (more lines of the phase, ';' between them)]
#                        [--controller-env MALLOC_ARENA_MAX=16 (repeatable: the controller's
#                         environment, for an A/B of one binary; README section 26)]
#
# Agents: real `lockstep-agent` processes on loopback (one per agent), or with
# --swarm one `tests/agent_swarm` process hosting N complete agents (see
# tests/bench/README.md, "Scale", for what the swarm shares). Files go to
# /dev/shm. The plan has one write phase (file per process, 256 KiB per task)
# repeated P times, with [[agent]] tables for the addresses. Plaintext on
# loopback (--insecure), or with --tls mutual TLS as every remote agent is
# reached: `lockstep certs init` makes a CA, the controller's certificate and
# one agent certificate for 127.0.0.1 that every agent serves, and the run
# is given --tls_dir.
#
# Prints one JSON line per run:
#   agents, tasks, phases,
#   prepare_round_ms       median over phases of prepared − prepare_sent
#   start_dispatch_ms      median of start_last_sent − start_first_sent
#   collect_ms             median of reduced − last task's close
#   results_to_reduced_ms  median of reduced − last result received (the controller alone)
#   lead_ms, start_margin_ms (the slowest agent's; negative = late),
#   barrier_round_ms       median of prepare_sent → last task released
#   release_skew_ms        median of run.json release_skew_ns
#   whole_run_s            wall time of `lockstep run`
#   controller_rss_mb      peak RSS of the `lockstep run` process (getrusage)
#   controller_cpu_s       its user + system CPU, whole run (set-up included)
#   controller_cpu_s_per_phase
#   agents_cpu_ms_per_agent_phase  the agents' user + system CPU during the run
#                          (the swarm processes' with --swarm) / (agents × phases)
#   run_json_bytes_per_agent_phase  run.json size / (agents × phases)
#   telemetry_gz_bytes     the side file telemetry.pb.gz (earlier versions: .jsonl.gz)
#   controller_threads_max, controller_fds_max  sampled every 100 ms (/proc)
#   lost_agents            agents not "ok" in run.json
#   controller_cpu_s_setup, controller_cpu_s_per_phase_steady
#                          CPU until the first Prepare; CPU from the first Prepare
#                          to the last reduction / phases (sampled from /proc)
#   controller_rss_mb_after_1, controller_rss_mb_after_last  VmRSS after the
#                          first and the last phase
#   swarm_calls, heartbeats_per_agent_s  (--swarm) the calls the swarm served by
#                          method; Heartbeat calls / agents / whole_run_s
# Fields a controller of an earlier version does not record are null.
source "$(dirname "$0")/lib.sh"
bench_args scale "$@"
bench_python - <<'PY'
import argparse, json, os, re, resource, select, shutil, subprocess, sys, tempfile, threading, time
import benchlib

ap = argparse.ArgumentParser(prog="scale.sh")
ap.add_argument("--build", required=True)
ap.add_argument("--agents", type=int, required=True)
ap.add_argument("--swarm", action="store_true")
ap.add_argument("--tasks-per-agent", type=int, default=1)
ap.add_argument("--phases", type=int, default=3)
ap.add_argument("--block", default="256k")
ap.add_argument("--phase-keys", default="", help="more key = value lines of the phase")
ap.add_argument("--lockstep", default="", help="controller binary (default: BUILD/lockstep)")
ap.add_argument("--swarm-processes", type=int, default=0,
                help="agent_swarm processes (0: as few as RLIMIT_NOFILE allows)")
ap.add_argument("--swarm-threads", type=int, default=2, help="agent_swarm --threads (completion queues)")
ap.add_argument("--telemetry", default="on", choices=["on", "off"])
ap.add_argument("--telemetry-processes", default="on", choices=["on", "off"])
ap.add_argument("--telemetry-interval-ms", type=int, default=0,
                help="the swarm's sampling interval (0: 10 ms per agent, at least 10 s: "
                     "10,000 agents sampling every 10 s took most of the machine)")
ap.add_argument("--lease-ms", type=int, default=0, help="[run] lease_ms (0: the default)")
ap.add_argument("--connect-timeout-ms", type=int, default=0,
                help="[run] connect_timeout_ms (0: the default); 10,000 agents connecting at once need more")
ap.add_argument("--keep", action="store_true")
ap.add_argument("--tls", action="store_true", help="mutual TLS instead of --insecure")
ap.add_argument("--controller-env", action="append", default=[],
                help="NAME=VALUE added to the controller's environment (repeatable)")
a = ap.parse_args()
controller_env = dict(os.environ)
for kv in a.controller_env:
    name, sep, value = kv.partition("=")
    if not sep or not name:
        sys.exit(f"scale.sh: --controller-env {kv!r}: give NAME=VALUE")
    controller_env[name] = value
build = os.path.abspath(a.build)
lockstep = a.lockstep or os.path.join(build, "lockstep")
work = tempfile.mkdtemp(prefix="lockstep-scale-")
shm = tempfile.mkdtemp(prefix="lockstep-scale-", dir="/dev/shm")
logs = os.path.join(work, "logs"); os.makedirs(logs)
tls_dir = os.path.join(work, "tls")
if a.tls:  # the build's own lockstep: --lockstep may be a wrapper (perf) or an older binary
    subprocess.run([os.path.join(build, "lockstep"), "certs", "init", "--dir", tls_dir,
                    "--agent", "bench,127.0.0.1"], check=True, stdout=subprocess.DEVNULL)
# How an agent serves: the agent certificate of 127.0.0.1, or plaintext.
agent_tls = (["--tls_ca", os.path.join(tls_dir, "ca.pem"),
              "--tls_cert", os.path.join(tls_dir, "agent-bench.pem"),
              "--tls_key", os.path.join(tls_dir, "agent-bench.key")] if a.tls else [])


def start_swarm():
    """agent_swarm processes (one unless the fd limit needs more: each agent
    takes a listening socket and the controller's connection); returns
    ([processes], addresses)."""
    swarm = os.path.join(build, "tests", "agent_swarm")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    per = max(1, (hard - 1024) // 3)  # agent_swarm asks for 3 per agent + 1024
    count = a.swarm_processes or -(-a.agents // per)
    procs, addresses = [], []
    for k in range(count):
        n = a.agents // count + (1 if k < a.agents % count else 0)
        addr_file = os.path.join(work, f"addresses-{k}")
        root = os.path.join(shm, f"s{k}")
        os.makedirs(root)
        log = open(os.path.join(logs, f"swarm-{k}.log"), "wb")
        p = subprocess.Popen([swarm, "--agents", str(n), "--root", root, "--addresses", addr_file,
                              "--threads", str(a.swarm_threads), "--telemetry", a.telemetry,
                              "--telemetry_interval_ms",
                              str(a.telemetry_interval_ms or max(10000, 10 * a.agents))]
                             + agent_tls,
                             stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL)
        procs.append(p)
        deadline = time.monotonic() + 120 + n / 50
        buf = b""
        while b"listening on" not in buf:
            if time.monotonic() > deadline or p.poll() is not None:
                for q in procs:
                    q.kill()
                raise SystemExit(f"agent_swarm did not start (log {logs}/swarm-{k}.log)")
            r, _, _ = select.select([p.stdout], [], [], 1.0)
            if r:
                buf += os.read(p.stdout.fileno(), 4096)
        with open(addr_file) as f:
            addresses += [line.strip() for line in f if line.strip()]
    return procs, addresses


class Agent:
    """One lockstep-agent process (benchlib.Listener uses select(), which
    stops at fd 1024: too few for 512 agents)."""

    def __init__(self, agent_bin, root):
        os.makedirs(root, exist_ok=True)
        self.log = open(os.path.join(logs, f"agent-{os.path.basename(root)}.log"), "wb")
        self.proc = subprocess.Popen([agent_bin, "--listen", "127.0.0.1:0", "--root", root,
                                      "--telemetry_processes="
                                      + ("true" if a.telemetry_processes == "on" else "false")]
                                     + (agent_tls or ["--insecure"]),
                                     stdout=subprocess.PIPE, stderr=self.log,
                                     stdin=subprocess.DEVNULL)
        line = self.proc.stdout.readline().decode()  # EOF if it exits
        m = re.match(r"listening on (\S+)", line)
        if not m:
            raise SystemExit(f"agent for {root} did not start: {line!r}")
        self.address = m.group(1)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def start_processes():
    bins = benchlib.Bins(build)
    agents = [Agent(bins.agent, os.path.join(shm, f"a{k}")) for k in range(a.agents)]
    return agents, [x.address for x in agents]


def plan(addresses):
    lease = f"lease_ms = {a.lease_ms}\n" if a.lease_ms else ""
    if a.connect_timeout_ms:
        lease += f"connect_timeout_ms = {a.connect_timeout_ms}\n"
    return benchlib.write_plan(addresses, f"scale-{a.agents}", a.phases, a.tasks_per_agent,
                               a.block, run_keys=lease,
                               phase_keys=a.phase_keys.replace(";", "\n") + "\n" if a.phase_keys else "")


def run_controller(plan_text):
    out = os.path.join(work, "out")
    os.makedirs(out, exist_ok=True)
    plan_path = os.path.join(work, "plan.toml")
    with open(plan_path, "w") as f:
        f.write(plan_text)
    t0 = time.monotonic()
    transport = ["--tls_dir", tls_dir] if a.tls else ["--insecure"]
    p = subprocess.Popen([lockstep, "run", *transport, "--out", out, plan_path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=controller_env)
    peak = {"threads": 0, "fds": 0}
    stop = threading.Event()
    run_controller.samples = samples = []  # (unix ns, cpu s, rss MB)

    def sample():  # the controller's threads, open files, CPU and RSS, every 100 ms
        while not stop.wait(0.1):
            try:
                with open(f"/proc/{p.pid}/status") as f:
                    status = f.read()
                m2 = re.search(r"^Threads:\s+(\d+)", status, re.M)
                peak["threads"] = max(peak["threads"], int(m2.group(1)))
                peak["fds"] = max(peak["fds"], len(os.listdir(f"/proc/{p.pid}/fd")))
                rss = re.search(r"^VmRSS:\s+(\d+)", status, re.M)
                samples.append((time.time_ns(), benchlib.cpu_s(p.pid),
                                int(rss.group(1)) / 1024 if rss else None))
            except (OSError, AttributeError, IndexError, ValueError):
                pass

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = p.communicate()
    stop.set()
    sampler.join()
    run_controller.peak = peak
    # The child is reaped by communicate: its rusage is in RUSAGE_CHILDREN
    # (this process has no other reaped children that count: agents still run).
    wall = time.monotonic() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    m = re.search(r"^#?\s*Results\s+: (.*?)/?$", stdout, re.M)
    if not m:
        raise SystemExit(f"lockstep run failed (exit {p.returncode}):\n{stdout[-3000:]}\n{stderr[-3000:]}")
    return m.group(1), wall, ru, p.returncode


def median_of(phases, fn):
    xs = []
    for p in phases:
        try:
            v = fn(p)
        except (KeyError, ValueError, TypeError):
            v = None
        if v is not None:
            xs.append(v)
    return round(benchlib.median(xs), 3) if xs else None


def ns(p, key):
    v = int(p.get(key, 0))
    if v == 0:
        raise KeyError(key)
    return v


agents_handle = None
swarm_calls = {}


def stop_swarm():
    """Stops the swarm processes; adds up the calls they served (their
    "agent_swarm calls:" line at exit)."""
    global agents_handle
    if not a.swarm or agents_handle is None:
        return
    for q in agents_handle:
        q.terminate()
    for q in agents_handle:
        try:
            q.wait(60)
        except subprocess.TimeoutExpired:
            q.kill()
            q.wait()
    for k in range(len(agents_handle)):
        try:
            with open(os.path.join(logs, f"swarm-{k}.log")) as f:
                for line in f:
                    if line.startswith("agent_swarm calls: "):
                        for name, n in json.loads(line[len("agent_swarm calls: "):]).items():
                            swarm_calls[name] = swarm_calls.get(name, 0) + n
        except (OSError, ValueError):
            pass
    agents_handle = None


def agents_cpu_s(pids):
    """User + system CPU of the agent processes so far (gone ones: 0)."""
    total = 0.0
    for pid in pids:
        try:
            total += benchlib.cpu_s(pid)
        except (OSError, IndexError, ValueError):
            pass
    return total


try:
    if a.swarm:
        agents_handle, addresses = start_swarm()
    else:
        agents_handle, addresses = start_processes()
    agent_pids = [q.pid for q in agents_handle] if a.swarm else [x.proc.pid for x in agents_handle]
    agents_cpu_before = agents_cpu_s(agent_pids)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run_dir, wall, ru, rc = run_controller(plan(addresses))
    agents_cpu = agents_cpu_s(agent_pids) - agents_cpu_before
    with open(os.path.join(run_dir, "run.json")) as f:
        rec = json.load(f)
    phases = [p for p in benchlib.phases(rec)]
    size = os.path.getsize(os.path.join(run_dir, "run.json"))
    # telemetry.pb.gz; controllers of earlier versions wrote telemetry.jsonl.gz.
    gz = next((os.path.join(run_dir, n) for n in ("telemetry.pb.gz", "telemetry.jsonl.gz")
               if os.path.exists(os.path.join(run_dir, n))), "")
    cpu = (ru.ru_utime - before.ru_utime) + (ru.ru_stime - before.ru_stime)

    def last_close(p):
        return max(int(t["close_stop_unix_ns"]) for ag in p["agents"] for t in ag.get("tasks", []))

    def last_release(p):
        return max(int(t.get("release_unix_ns", 0)) for ag in p["agents"] for t in ag.get("tasks", []))

    swarm_processes = len(agents_handle) if a.swarm else 0
    stop_swarm()  # its call counts (heartbeats) come at its exit
    out = {
        "agents": a.agents, "swarm": a.swarm, "tls": a.tls,
        "swarm_processes": swarm_processes,
        "telemetry_processes": a.telemetry_processes if not a.swarm else None,
        "tasks": a.agents * a.tasks_per_agent, "phases": len(phases), "exit": rc,
        "prepare_round_ms": median_of(phases, lambda p: (ns(p, "prepared_unix_ns") - ns(p, "prepare_sent_unix_ns")) / 1e6),
        "start_dispatch_ms": median_of(phases, lambda p: (ns(p, "start_last_sent_unix_ns") - ns(p, "start_first_sent_unix_ns")) / 1e6),
        "collect_ms": median_of(phases, lambda p: (ns(p, "reduced_unix_ns") - last_close(p)) / 1e6),
        # Earlier versions do not record the lead: start_at − prepared (the
        # instant is chosen right after Prepare when there is no cache barrier).
        "results_to_reduced_ms": median_of(phases, lambda p: (ns(p, "reduced_unix_ns") - ns(p, "results_unix_ns")) / 1e6),
        "lead_ms": median_of(phases, lambda p: (int(p.get("lead_ns", 0)) or (ns(p, "start_at_unix_ns") - ns(p, "prepared_unix_ns"))) / 1e6),
        "lead_ms_max": max([int(p.get("lead_ns", 0)) / 1e6 for p in phases] or [0]) or None,
        "start_margin_ms": median_of(phases, lambda p: ns(p, "lead_ns") and int(p["start_margin_ns"]) / 1e6),
        "start_margin_ms_min": min([int(p["start_margin_ns"]) / 1e6 for p in phases if int(p.get("lead_ns", 0))] or [float("nan")]),
        "barrier_round_ms": median_of(phases, lambda p: (last_release(p) - ns(p, "prepare_sent_unix_ns")) / 1e6),
        "release_skew_ms": median_of(phases, lambda p: int(p["release_skew_ns"]) / 1e6),
        "whole_run_s": round(wall, 2),
        "controller_rss_mb": round((ru.ru_maxrss) / 1024, 1),
        "controller_cpu_s": round(cpu, 2),
        "controller_cpu_s_per_phase": round(cpu / max(len(phases), 1), 3),
        "agents_cpu_ms_per_agent_phase": round(agents_cpu * 1000 / max(a.agents * max(len(phases), 1), 1), 3),
        "run_json_bytes": size,
        "run_json_bytes_per_agent_phase": round(size / max(a.agents * max(len(phases), 1), 1)),
        "telemetry_gz_bytes": os.path.getsize(gz) if os.path.exists(gz) else None,
        "controller_threads_max": run_controller.peak["threads"],
        "controller_fds_max": run_controller.peak["fds"],
        "lost_agents": sum(1 for ag in rec.get("agents", []) if ag.get("status") != "ok"),
        "error": rec.get("error", "")[:300],
        "controller": lockstep,
    }
    # CPU of the phases alone (set-up and teardown left out) and RSS after
    # the first and the last phase, from the /proc samples.
    samples = run_controller.samples

    def at(unix_ns):  # the last sample at or before unix_ns
        xs = [x for x in samples if x[0] <= unix_ns]
        return xs[-1] if xs else None

    if phases and samples:
        first = at(int(phases[0].get("prepare_sent_unix_ns", 0)))
        last = at(int(phases[-1].get("reduced_unix_ns", 0)))
        one = at(int(phases[0].get("reduced_unix_ns", 0)) + 150_000_000)
        if first and last and len(phases) > 1:
            out["controller_cpu_s_per_phase_steady"] = round((last[1] - first[1]) / len(phases), 3)
            out["controller_cpu_s_setup"] = round(first[1], 2)
        out["controller_rss_mb_after_1"] = one[2] if one else None
        out["controller_rss_mb_after_last"] = last[2] if last else None
    if a.swarm and swarm_calls:
        out["swarm_calls"] = swarm_calls
        hb = swarm_calls.get("Heartbeat", 0)
        out["heartbeats_per_agent_s"] = round(hb / a.agents / max(wall, 1e-9), 3)
    if out["start_margin_ms_min"] != out["start_margin_ms_min"]:
        out["start_margin_ms_min"] = None
    print(json.dumps(out), flush=True)
finally:
    stop_swarm()
    if not a.swarm and agents_handle:
        for x in agents_handle:
            x.proc.terminate()
        for x in agents_handle:
            x.stop()
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(shm, ignore_errors=True)
PY
