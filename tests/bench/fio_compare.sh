#!/usr/bin/env bash
# Lockstep vs fio, side by side, alternating A/B (A/B, then B/A, ...) per case.
#
#   tests/bench/fio_compare.sh [--build DIR] [--reps N] [--shm DIR] [--disk DIR]
#                              [--cases shm,disk,4k] [--json OUT.json]
#
# --cases shm16 (not in the default): 8 and 16 tasks of 512 MiB each on tmpfs, for
# a 16-core host (tests/bench/device_issue43.sh).
#
# Cases: sequential write and read, 1 MiB transfers, 1 and 2 tasks, file per
# process, on tmpfs (/dev/shm: CPU-bound) and on a disk directory with
# O_DIRECT; and 4 KiB reads (sequential: Lockstep has no random-offset option
# yet). fio runs with the same parameters: psync, bs = transfer, size = block,
# numjobs = tasks, fallocate=none (fresh files are allocated inside the timed
# window, as IOR and Lockstep do), end_fsync=1 for fsync = true, direct=1 for
# direct = true, group_reporting. fio runs twice per repetition: as processes
# (its default) and with --thread (jobs as threads of one process, which is
# how Lockstep runs its tasks; on a loaded machine the two differ, see tests/bench/README.md).
#
# Prints, per case and operation, the median over the repetitions of
#   ratio(IOR bw)  = Lockstep bw (bytes / open-to-close time, IOR's definition) / fio bw_bytes
#   ratio(wrrd bw) = Lockstep bytes / wrrd time (I/O only, like fio's)        / fio bw_bytes
#   ratio(wrrd bw) / fio --thread bw_bytes
# plus the medians themselves. Lockstep's agent is one loopback agent started
# here (the same binary and flags `--local` uses; `--local` cannot place its
# root on /dev/shm or a chosen disk directory).
source "$(dirname "$0")/lib.sh"
bench_args fio_compare "$@"
command -v fio >/dev/null || { echo "fio_compare: fio is not installed (apt-get install fio)" >&2; exit 2; }
bench_python - <<'PY'
import argparse, json, os, shutil, subprocess, sys, tempfile, time
import benchlib

ap = argparse.ArgumentParser(prog="fio_compare.sh")
ap.add_argument("--build", required=True)
ap.add_argument("--reps", type=int, default=5)
ap.add_argument("--shm", default="/dev/shm/lockstep-fio-compare")
ap.add_argument("--disk", default="/var/tmp/lockstep-fio-compare")
ap.add_argument("--cases", default="shm,disk,4k")
ap.add_argument("--json", default="")
a = ap.parse_args()
if a.reps < 1:
    sys.exit("--reps must be >= 1")
bins = benchlib.Bins(os.path.abspath(a.build))
M = 1 << 20

# (label, file system, direct, transfer, tasks, block per task, operations)
CASES = []
wanted = set(a.cases.split(","))
if "shm" in wanted:
    CASES += [("shm seq 1MiB", "shm", False, M, 1, 1024 * M, ("write", "read")),
              ("shm seq 1MiB", "shm", False, M, 2, 512 * M, ("write", "read"))]
if "disk" in wanted:
    CASES += [("disk O_DIRECT seq 1MiB", "disk", True, M, 1, 512 * M, ("write", "read")),
              ("disk O_DIRECT seq 1MiB", "disk", True, M, 2, 256 * M, ("write", "read"))]
if "shm16" in wanted:  # a task per core of a 16-core host (issue 43 item 2), 512 MiB each
    CASES += [("shm seq 1MiB", "shm", False, M, 8, 512 * M, ("write", "read")),
              ("shm seq 1MiB", "shm", False, M, 16, 512 * M, ("write", "read"))]
if "4k" in wanted:
    CASES += [("shm seq 4KiB (no random_offsets yet)", "shm", False, 4096, 1, 256 * M, ("read",)),
              ("disk O_DIRECT seq 4KiB (no random_offsets yet)", "disk", True, 4096, 1, 32 * M,
               ("read",))]

work = tempfile.mkdtemp(prefix="lockstep-fio-compare-")
logs = os.path.join(work, "logs"); os.makedirs(logs)
roots = {"shm": a.shm, "disk": a.disk}
agents = {}
for fs, root in roots.items():
    if any(c[1] == fs for c in CASES):
        for sub in ("lockstep", "fio"):
            os.makedirs(os.path.join(root, sub), exist_ok=True)
        agents[fs] = benchlib.start_agent(bins, root, logs)


def fs_type(path):
    r = subprocess.run(["stat", "-f", "-c", "%T", path], capture_output=True, text=True)
    return r.stdout.strip()


def clean(d):
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))


def lockstep_case(fs, direct, xfer, tasks, block, ops):
    # Reads with a transfer other than the write's reuse the same layout (one
    # segment: offset = j × transfer), so a 4 KiB read follows a 1 MiB write.
    wx = M if xfer < M else xfer
    phase = lambda name, kind, x, extra: f'''
[[phase]]
name = "{name}"
kind = "{kind}"
dir = "lockstep"
file_per_process = true
tasks_per_agent = {tasks}
transfer_size = {x}
block_size = {block}
direct = {"true" if direct else "false"}
{extra}'''
    plan = (f'[run]\nname = "fio-compare"\nrepetitions = 1\n\n'
            + benchlib.agent_tables([agents[fs].address])
            + phase("write", "write", wx, "fsync = true\n")
            + phase("read", "read", xfer, ""))
    rec, _ = benchlib.run_lockstep(bins, plan, os.path.join(work, "results"))
    out = {}
    for p in benchlib.phases(rec):
        kind = "write" if p["kind"] == "WRITE" else "read"
        if kind not in ops:
            continue
        row = p["row"]
        nbytes = int(row["bytes"])
        out[kind] = {"ior_bw": float(row["bw_mib"]),
                     "wrrd_bw": nbytes / float(row["wrrd_s"]) / M,
                     "bytes": nbytes}
    return out


def fio_case(fs, direct, xfer, tasks, block, ops, thread=False):
    d = os.path.join(roots[fs], "fio")
    clean(d)
    common = ["fio", "--output-format=json", f"--directory={d}", "--ioengine=psync",
              "--fallocate=none", f"--size={block}", f"--numjobs={tasks}", "--group_reporting",
              "--filename_format=fc.$jobnum", f"--direct={1 if direct else 0}"]
    if thread:
        common.append("--thread")  # jobs as threads of one process, as Lockstep's tasks are
    out = {}

    def run(name, rw, bs, extra=()):
        r = subprocess.run(common + [f"--name={name}", f"--rw={rw}", f"--bs={bs}", *extra],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"fio failed: {r.stdout}\n{r.stderr}")
        j = json.loads(r.stdout[r.stdout.index("{"):])["jobs"][0]
        return j[rw if rw in ("read", "write") else "read"]

    w = run("w", "write", M if xfer < M else xfer, ["--end_fsync=1"])
    if "write" in ops:
        out["write"] = {"bw": w["bw_bytes"] / M, "bytes": w["io_bytes"]}
    r = run("r", "read", xfer)
    out["read"] = {"bw": r["bw_bytes"] / M, "bytes": r["io_bytes"]}
    clean(d)
    return out


print(f"# fio_compare: {a.reps} alternating repetitions per case; machine: {os.cpu_count()} cores "
      f"(shared with other jobs), {os.uname().release}")
for fs, root in roots.items():
    if fs in agents:
        print(f"# {fs}: {root} ({fs_type(root)})")
results = []
try:
    for (label, fs, direct, xfer, tasks, block, ops) in CASES:
        samples = {op: {k: [] for k in ("ior", "wrrd", "fio", "fiot", "r_ior", "r_wrrd", "r_thr")}
                   for op in ops}
        for rep in range(a.reps):
            # Rotate the order (L F T, F T L, T L F, ...) so that drift in the
            # machine's load does not favour one tool.
            order = ["L", "F", "T"][rep % 3:] + ["L", "F", "T"][:rep % 3]
            got = {}
            for who in order:
                if who == "L":
                    got["L"] = lockstep_case(fs, direct, xfer, tasks, block, ops)
                elif who == "F":
                    got["F"] = fio_case(fs, direct, xfer, tasks, block, ops)
                else:
                    got["T"] = fio_case(fs, direct, xfer, tasks, block, ops, thread=True)
            for op in ops:
                L, F, T = got["L"][op], got["F"][op], got["T"][op]
                if not L["bytes"] == F["bytes"] == T["bytes"]:
                    raise RuntimeError(f"{label} {op}: Lockstep moved {L['bytes']} bytes, fio "
                                       f"{F['bytes']}, fio --thread {T['bytes']}")
                s = samples[op]
                s["ior"].append(L["ior_bw"]); s["wrrd"].append(L["wrrd_bw"])
                s["fio"].append(F["bw"]); s["fiot"].append(T["bw"])
                s["r_ior"].append(L["ior_bw"] / F["bw"]); s["r_wrrd"].append(L["wrrd_bw"] / F["bw"])
                s["r_thr"].append(L["wrrd_bw"] / T["bw"])
        for op in ops:
            s = samples[op]
            results.append({"case": label, "tasks": tasks, "op": op, "transfer": xfer,
                            "block": block, "direct": direct, **{k: v for k, v in s.items()},
                            "median": {k: benchlib.median(v) for k, v in s.items()}})
            m = results[-1]["median"]
            print(f"{label:48s} t={tasks} {op:5s}  L(IOR) {m['ior']:8.0f}  L(wrrd) {m['wrrd']:8.0f}  "
                  f"fio {m['fio']:8.0f}  fio-thread {m['fiot']:8.0f} MiB/s   ratio IOR {m['r_ior']:.2f}  "
                  f"wrrd {m['r_wrrd']:.2f}  wrrd/fio-thread {m['r_thr']:.2f}",
                  flush=True)
finally:
    for ag in agents.values():
        ag.stop()
    for fs in agents:
        for sub in ("lockstep", "fio"):
            shutil.rmtree(os.path.join(roots[fs], sub), ignore_errors=True)
        try:
            os.rmdir(roots[fs])  # only if empty: never what was there before
        except OSError:
            pass

print()
print("| case | tasks | op | Lockstep MiB/s (IOR: open→close) | Lockstep MiB/s (bytes/wrrd) | fio bw MiB/s "
      "| fio --thread bw MiB/s | ratio IOR/fio | ratio wrrd/fio (min–max) | ratio wrrd/fio --thread (min–max) |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in results:
    m = r["median"]
    print(f"| {r['case']} | {r['tasks']} | {r['op']} | {m['ior']:.0f} | {m['wrrd']:.0f} | {m['fio']:.0f} "
          f"| {m['fiot']:.0f} | {m['r_ior']:.2f} | {m['r_wrrd']:.2f} ({min(r['r_wrrd']):.2f}–{max(r['r_wrrd']):.2f}) "
          f"| {m['r_thr']:.2f} ({min(r['r_thr']):.2f}–{max(r['r_thr']):.2f}) |")
if a.json:
    with open(a.json, "w") as f:
        json.dump(results, f, indent=1)
shutil.rmtree(work, ignore_errors=True)
PY
