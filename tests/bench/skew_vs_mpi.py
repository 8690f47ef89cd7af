"""start_skew.sh --mpi: Lockstep's start skew against IOR + MPI, alternated, same probe.

Per case (N tasks) and alternation, one run of
    lockstep ior -w -F -b BLOCK -t XFER -i REPS --local AGENTS -N N -o DIR/lockstep/testFile
and one of
    mpirun --allow-run-as-root --oversubscribe -np N IOR -w -F -b BLOCK -t XFER -i REPS -o DIR/mpi/testFile
in alternating order (L M, M L, ...), both traced by one bpftrace session
(skewprobe.Probe). Each repetition (Lockstep: phase) gives one skew; the table
shows the median and range over all of them, and the ratio of the medians
(Lockstep / MPI: below 1 is Lockstep ahead).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import skewprobe


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="start_skew.sh --mpi")
    ap.add_argument("--build", required=True)
    ap.add_argument("--tasks", default="2,4,32", help="cases: total tasks, comma separated")
    ap.add_argument("--agents", type=int, default=2, help="Lockstep --local agents")
    ap.add_argument("--alternations", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3, help="IOR -i per run")
    ap.add_argument("--block", default="16m")
    ap.add_argument("--xfer", default="1m")
    ap.add_argument("--ior", default="/opt/ior/bin/ior")
    ap.add_argument("--dir", default="/dev/shm", help="parent of the test files (tmpfs: no disk time)")
    ap.add_argument("--no-mpi", action="store_true", help="Lockstep only (e.g. for a bisect step)")
    ap.add_argument("--base", default="",
                    help="other Lockstep builds (before a change), comma separated, alternated too")
    ap.add_argument("--json", default="")
    return ap.parse_args(argv)


def size_bytes(text):
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.lower()
    return int(t[:-1]) * mult[t[-1]] if t[-1] in mult else int(t)


def run_timed(cmd, cwd, timeout=900):
    """Runs cmd; (begin, end) in CLOCK_MONOTONIC ns and its pid."""
    begin = time.monotonic_ns()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=timeout)
    end = time.monotonic_ns()
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed (exit {p.returncode}):\n{out[-3000:]}\n"
                           f"{err[-3000:]}")
    return begin, end, p.pid


def fmt(xs):
    if not xs:
        return "n/a"
    return f"{skewprobe.median(xs):.1f} ({min(xs):.1f}-{max(xs):.1f})"


def main(argv):
    a = parse_args(argv)
    lockstep = os.path.join(os.path.abspath(a.build), "lockstep")
    for b in [lockstep] + [os.path.join(b, "lockstep") for b in a.base.split(",") if b]:
        if not os.access(b, os.X_OK):
            raise SystemExit(f"{b} is not built")
    mpi = not a.no_mpi and os.access(a.ior, os.X_OK) and shutil.which("mpirun")
    if not a.no_mpi and not mpi:
        print(f"# IOR + MPI: {a.ior} or mpirun missing (tests/bench/build_ior.sh); Lockstep only")
    why = skewprobe.usable()
    if why:
        raise SystemExit(f"start_skew --mpi needs the probe: {why}")
    work = tempfile.mkdtemp(prefix="lockstep-skew-mpi-")
    data = tempfile.mkdtemp(prefix="skew-", dir=a.dir)
    probe = skewprobe.Probe(["lockstep-agent", "ior"], size_bytes(a.xfer), os.path.join(work, "bpf.txt"))
    cases = [int(n) for n in a.tasks.split(",")]
    bases = [os.path.join(os.path.abspath(b), "lockstep") for b in a.base.split(",") if b]
    base_names = [f"base{k}" for k in range(len(bases))]
    got = {(n, side): [] for n in cases for side in ["lockstep", "mpi"] + base_names}
    loads = []
    common = ["-w", "-F", "-b", a.block, "-t", a.xfer, "-i", str(a.reps)]
    print(f"# start_skew --mpi: {os.cpu_count()} cores, load {skewprobe.loadavg()}, "
          f"{a.alternations} alternations x {a.reps} repetitions, block {a.block}, files in {data}")
    try:
        for i in range(a.alternations):
            for n in cases:
                sides = ["lockstep"] + base_names + (["mpi"] if mpi else [])
                sides = sides[i % len(sides):] + sides[:i % len(sides)]  # rotate the order
                for side in sides:
                    d = os.path.join(data, side)
                    os.makedirs(d, exist_ok=True)
                    if side != "mpi":
                        binary = lockstep if side == "lockstep" else bases[base_names.index(side)]
                        cmd = [binary, "ior", *common, "--local", str(a.agents), "-N", str(n),
                               "-o", os.path.join(d, "testFile")]
                        comm = "lockstep-agent"
                    else:
                        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(n),
                               a.ior, *common, "-o", os.path.join(d, "testFile")]
                        comm = "ior"
                    loads.append(skewprobe.loadavg())
                    begin, end, pid = run_timed(cmd, work)
                    # The agents are the controller's children, the ranks mpirun's.
                    skews, whole = skewprobe.skews_us(probe.events(comm, begin, end, pid), n)
                    if not whole or len(skews) != a.reps:
                        print(f"# {side} {n} tasks, alternation {i}: {len(skews)} groups of {n} "
                              f"first writes, expected {a.reps}; grouping may be off")
                    got[(n, side)] += skews
                    print(f"# alt {i} {side:8s} {n:3d} tasks: "
                          + " ".join(f"{s:.1f}" for s in skews) + f" us (load {loads[-1]})",
                          flush=True)
    finally:
        probe.stop()
        shutil.rmtree(data, ignore_errors=True)
    print()
    print(f"load averages seen: {loads[0]} .. {loads[-1]} (max 1-min {max(float(l.split()[0]) for l in loads):.2f})")
    for name, b in zip(base_names, bases):
        print(f"# {name}: {b}")
    print("| tasks | Lockstep skew us, median (range) | IOR + MPI skew us, median (range) | Lockstep / MPI |"
          + "".join(f" {name} skew us | {name} / MPI |" for name in base_names))
    print("|---|---|---|---|" + "---|---|" * len(bases))
    rows = []

    def ratio(xs, ys):
        return skewprobe.median(xs) / skewprobe.median(ys) if xs and ys and skewprobe.median(ys) > 0 else float("nan")

    for n in cases:
        ls, mp = got[(n, "lockstep")], got[(n, "mpi")]
        print(f"| {n} | {fmt(ls)} | {fmt(mp)} | {ratio(ls, mp):.2f} |"
              + "".join(f" {fmt(got[(n, b)])} | {ratio(got[(n, b)], mp):.2f} |" for b in base_names))
        rows.append({"tasks": n, "lockstep_us": ls, "mpi_us": mp, "ratio": ratio(ls, mp),
                     **{f"{b}_us": got[(n, b)] for b in base_names}})
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": rows, "loads": loads}, f, indent=1)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
