"""The independent start-skew probe (python3 standard library and bpftrace).

bpftrace traces the entry of write(2) and pwrite64(2) of transfer-sized
writes (`count` equal to the transfer size) by every thread of processes whose
main thread is named one of `comms` (`lockstep-agent`, `ior`), and keeps the
first per thread since its last openat(2): every Lockstep phase has new task
threads, and an IOR rank opens its file before each repetition's first write.
Times are the kernel's nsecs (CLOCK_MONOTONIC, the same clock as Python's
time.monotonic_ns()), one clock for every process on the host: no offsets.

A run is a window of that clock [begin, end]; its events, in time order, in
groups of `tasks` (one phase or repetition each), give one skew per group:
last first write - first first write.
"""
import os
import shutil
import signal
import statistics
import subprocess
import time


def usable():
    """'' when the probe can run here, else why not."""
    if os.geteuid() != 0:
        return "not root"
    if not shutil.which("bpftrace"):
        return "bpftrace not installed (apt-get install bpftrace)"
    if not os.path.isdir("/sys/kernel/tracing/events"):
        r = subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return f"tracefs not mounted and cannot be: {r.stderr.strip()}"
    return ""


def start_bpftrace(prog, out_path):
    """Starts `bpftrace -e prog` writing to out_path (stderr to out_path.err) and returns
    it once it has attached: `prog` must print "ready" in its BEGIN block. Raises
    RuntimeError with bpftrace's stderr when it exits or does not attach within 60 s."""
    err_path = out_path + ".err"
    proc = subprocess.Popen(["bpftrace", "-e", prog], stdout=open(out_path, "w"),
                            stderr=open(err_path, "w"))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("bpftrace exited: " + open(err_path).read())
        with open(out_path) as f:
            if "ready" in f.read():
                return proc
        time.sleep(0.1)  # polling a file another process writes; bounded by the deadline
    proc.kill()
    proc.wait()
    raise RuntimeError("bpftrace did not attach within 60 s: " + open(err_path).read())


class Probe:
    def __init__(self, comms, transfer_bytes, out_path):
        who = " || ".join(f'curtask->group_leader->comm == "{c}"' for c in comms)
        prog = ('BEGIN { printf("ready\\n"); } '
                f'tracepoint:syscalls:sys_enter_openat /{who}/ {{ @seen[tid] = 0; }} '
                'tracepoint:syscalls:sys_enter_write, tracepoint:syscalls:sys_enter_pwrite64 '
                f'/({who}) && args->count == {transfer_bytes} && @seen[tid] == 0/ '
                '{ @seen[tid] = 1; printf("E %s %d %d %llu %d %d\\n", curtask->group_leader->comm, '
                'pid, tid, nsecs, curtask->group_leader->real_parent->tgid, '
                'curtask->group_leader->real_parent->real_parent->tgid); } '
                'END { clear(@seen); }')
        self.out_path = out_path
        self.proc = start_bpftrace(prog, out_path)

    def events(self, comm, begin_ns, end_ns, ancestor=0):
        """(nsecs, pid, tid) of `comm`'s first writes inside [begin_ns, end_ns], in time order;
        with `ancestor`, only of processes whose parent or grandparent it is (other users of
        the machine run agents and IOR too)."""
        out = []
        with open(self.out_path) as f:
            for line in f:
                p = line.split()
                if len(p) == 7 and p[0] == "E" and p[1] == comm:
                    ns = int(p[4])
                    if ancestor and ancestor not in (int(p[5]), int(p[6])):
                        continue
                    if begin_ns <= ns <= end_ns:
                        out.append((ns, int(p[2]), int(p[3])))
        return sorted(out)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def skews_us(events, tasks):
    """One skew (µs) per complete group of `tasks` events; (skews, complete?)."""
    groups = [events[i:i + tasks] for i in range(0, len(events), tasks)]
    return [(g[-1][0] - g[0][0]) / 1e3 for g in groups if len(g) == tasks], len(events) % tasks == 0


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])
