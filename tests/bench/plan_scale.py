#!/usr/bin/env python3
"""How the controller's plan handling scales with the plan (issue 39 item 9).

Writes plans with N sweep values or N phases and times `lockstep run
--dry-run --local 2` on each, and (--first-output) the time until a real
`--local 2` run prints its first line, then SIGTERM and the time until it
exits. Prints a table; never fails on a figure (timings go in README.md, the
suite checks linearity structurally: tests/unit/plan_scale_test.cc).

  tests/bench/plan_scale.py --lockstep build/test/lockstep --sweep 1000 3000 10000
  tests/bench/plan_scale.py --lockstep build/test/lockstep --phases 1000 10000 --first-output
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time


def sweep_plan(n, d):
    values = ", ".join(str(i + 1) for i in range(n))
    return (f'[[phase]]\nname = "w"\nkind = "write"\ndir = "{d}"\n'
            f'block_size = "4k"\ntransfer_size = "4k"\nsegments = [{values}]\n')


def phases_plan(n, d):
    return "".join(f'[[phase]]\nname = "p{i}"\nkind = "write"\ndir = "{d}"\n'
                   f'block_size = "4k"\ntransfer_size = "4k"\n' for i in range(n))


def timed(cmd, limit_s):
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=limit_s)
        return time.monotonic() - t0, r.returncode
    except subprocess.TimeoutExpired:
        return float("inf"), None


def first_output_and_term(cmd, limit_s):
    """Seconds to the first byte of output; then SIGTERM and seconds to exit."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    t0 = time.monotonic()
    os.set_blocking(p.stdout.fileno(), False)
    first = None
    while time.monotonic() - t0 < limit_s and p.poll() is None:
        if p.stdout.read(1):
            first = time.monotonic() - t0
            break
        time.sleep(0.01)
    p.send_signal(signal.SIGTERM)
    t1 = time.monotonic()
    try:
        p.wait(timeout=120)
        gone = time.monotonic() - t1
    except subprocess.TimeoutExpired:
        p.kill()
        gone = float("inf")
    return first, gone, p.returncode


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lockstep", required=True)
    ap.add_argument("--sweep", type=int, nargs="*", default=[])
    ap.add_argument("--phases", type=int, nargs="*", default=[])
    ap.add_argument("--first-output", action="store_true")
    ap.add_argument("--limit-s", type=float, default=120)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data")
        os.mkdir(data)
        rows = [("sweep", n, sweep_plan(n, data)) for n in a.sweep]
        rows += [("phases", n, phases_plan(n, data)) for n in a.phases]
        print(f"{'plan':8} {'N':>7} {'dry-run s':>10} {'first output s':>15} {'SIGTERM→exit s':>15}")
        for kind, n, text in rows:
            path = os.path.join(tmp, f"{kind}-{n}.toml")
            with open(path, "w") as f:
                f.write(text)
            dry, rc = timed([a.lockstep, "run", "--dry-run", "--local", "2", path], a.limit_s)
            first = gone = None
            if a.first_output:
                first, gone, _ = first_output_and_term(
                    [a.lockstep, "run", "--local", "2", "--out", os.path.join(tmp, "out"), path],
                    a.limit_s)
            fmt = lambda v: "-" if v is None else f"{v:.2f}"
            print(f"{kind:8} {n:>7} {fmt(dry):>10} {fmt(first):>15} {fmt(gone):>15}  rc={rc}",
                  flush=True)


if __name__ == "__main__":
    sys.exit(main())
