"""Shared helpers for tests/bench/*.sh (python3 standard library only).

Starting processes that print "listening on HOST:PORT", running `lockstep run`
and reading its run.json, medians.
"""
import json
import os
import re
import select
import signal
import statistics
import subprocess
import tempfile
import time


class Bins:
    def __init__(self, build):
        self.build = build
        self.lockstep = os.path.join(build, "lockstep")
        self.agent = os.path.join(build, "lockstep-agent")
        self.relay = os.path.join(build, "tests", "latency_relay")
        for p in (self.lockstep, self.agent):
            if not os.access(p, os.X_OK):
                raise SystemExit(f"{p} is not built; build first (cmake --build {build})")


class Listener:
    """A child that prints 'listening on ADDR' on stdout; stopped by stop()."""

    def __init__(self, argv, log_path, timeout=15.0, preexec=None):
        self.argv = argv
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.log,
                                     stdin=subprocess.DEVNULL, preexec_fn=preexec)
        self.address = self._read_address(timeout, log_path)

    def _read_address(self, timeout, log_path):
        deadline = time.monotonic() + timeout
        buf = b""
        fd = self.proc.stdout.fileno()
        while time.monotonic() < deadline:
            left = deadline - time.monotonic()
            r, _, _ = select.select([fd], [], [], max(left, 0))
            if not r:
                break
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            buf += chunk
            m = re.search(rb"listening on (\S+)\n", buf)
            if m:
                return m.group(1).decode()
        self.stop()
        raise RuntimeError(f"{self.argv[0]} did not print 'listening on' within {timeout}s "
                           f"(stdout {buf!r}; log {log_path})")

    @property
    def pid(self):
        return self.proc.pid

    def stop(self, grace=5.0):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def start_agent(bins, root, log_dir, extra=(), preexec=None):
    """An insecure loopback agent; LOCKSTEP_BENCH_AGENT_FLAGS (split on spaces) adds flags
    to every agent a bench starts, e.g. "--start_spin never" for an A/B of the start."""
    os.makedirs(root, exist_ok=True)
    n = len([f for f in os.listdir(log_dir) if f.startswith("agent-")])
    more = os.environ.get("LOCKSTEP_BENCH_AGENT_FLAGS", "").split()
    return Listener([bins.agent, "--listen", "127.0.0.1:0", "--root", root, "--insecure",
                     *extra, *more], os.path.join(log_dir, f"agent-{n}.log"), preexec=preexec)


def start_relay(bins, target, log_dir, delay_ms, jitter_ms):
    n = len([f for f in os.listdir(log_dir) if f.startswith("relay-")])
    return Listener([bins.relay, "--target", target, "--delay_ms", str(delay_ms),
                     "--jitter_ms", str(jitter_ms), "--lifetime_s", "3600"],
                    os.path.join(log_dir, f"relay-{n}.log"))


def agent_tables(addresses):
    return "".join(f'[[agent]]\naddress = "{a}"\n\n' for a in addresses)


def write_plan(addresses, name, repetitions, tasks_per_agent, block, run_keys="", phase_keys=""):
    """A plan of one file-per-process write phase `w` of `block` per task on `addresses`,
    repeated `repetitions` times; transfer 1m, or the block when it is given in k.
    `run_keys`, `phase_keys`: more "key = value" lines of [run] and of the phase."""
    xfer = block if block.lower().endswith("k") else "1m"
    return (f'[run]\nname = "{name}"\nrepetitions = {repetitions}\n{run_keys}\n'
            + agent_tables(addresses)
            + f'''[[phase]]
name = "w"
kind = "write"
dir = "."
file_per_process = true
tasks_per_agent = {tasks_per_agent}
transfer_size = "{xfer}"
block_size = "{block}"
{phase_keys}''')


def run_lockstep(bins, plan_text, out_dir, extra=(), timeout=900):
    """Writes the plan, runs `lockstep run --insecure`, returns (run.json dict, stdout)."""
    os.makedirs(out_dir, exist_ok=True)
    fd, plan = tempfile.mkstemp(suffix=".toml", dir=out_dir)
    with os.fdopen(fd, "w") as f:
        f.write(plan_text)
    cmd = [bins.lockstep, "run", "--insecure", "--out", out_dir, *extra, plan]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    m = re.search(r"^#? ?Results\s+: (.*?)/?$", r.stdout, re.M)  # "# Results : DIR/" since 2026-11-30
    if r.returncode != 0 or not m:
        raise RuntimeError(f"{' '.join(cmd)} failed (exit {r.returncode}):\n{r.stdout}\n{r.stderr}")
    with open(os.path.join(m.group(1), "run.json")) as f:
        return json.load(f), r.stdout


def phases(record):
    for t in record.get("tests", []):
        for p in t.get("phases", []):
            yield p


def first_io_unix_ns(phase):
    return [int(t["first_io_unix_ns"]) for a in phase.get("agents", []) for t in a.get("tasks", [])
            if int(t.get("first_io_unix_ns", 0)) != 0]


def cpu_s(pid):
    """User + system CPU seconds of process `pid` so far (/proc/PID/stat);
    raises OSError once it is gone."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def median(xs):
    return statistics.median(xs) if xs else float("nan")
