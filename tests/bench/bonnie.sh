#!/usr/bin/env bash
# Lockstep vs bonnie++ on the same directory, side by side, alternating A/B
# (round 1: bonnie++ then Lockstep, round 2: Lockstep then bonnie++, ...).
#
#   tests/bench/bonnie.sh [--build DIR] [--rounds N] [--dir DIR] [--size_mib N]
#                         [--seeks N] [--files_k N] [--json OUT.json]
#
# The same sizes on both sides (defaults: a 768 MiB file, 8 KiB chunks, 3
# seekers, 300000 seeks in all, 64 × 1024 empty files in one directory, on
# /dev/shm so that a run takes seconds):
#   bonnie++ -d DIR/bonnie -s 768:8k:300000:3 -r 384 -n 64:0:0:1 -f -q -x 1 [-u root]
#     (-r 384: says RAM is 384 MiB, so that -s may be 2 × that; -f: no per-char
#     tests; -u root when run as root, as bonnie++ demands)
#   Lockstep, one loopback agent with its root at DIR: a plan of
#     write   1 task, transfer 8k, block 768m, fsync       (bonnie++'s block write)
#     rewrite 1 task, transfer 8k, block 768m, fsync       (its Rewrite)
#     seeks   3 tasks, transfer 8k, block 256m, 100000 seeks each, 10% rewritten,
#             fsync at the end                            (its Random Seeks)
#     mdtest  tree_create, file_create 65536 items (empty files, one directory),
#             file_remove, tree_remove                    (its Sequential Create/Delete)
# bonnie++'s default of 8000 (1.03) or 8192 (2.00) seeks finishes in a few ms on
# a cached file, below its 500 ms floor ("+++++"), hence 300000.
#
# Prints the median over the rounds of each figure, both sides, and the
# ratio Lockstep / bonnie++: seeks/s, rewrite MiB/s, creates/s (and the
# block write and deletes for context).
source "$(dirname "$0")/lib.sh"
bench_args bonnie.sh "$@"
# What this bench installs (Debian): bonnie++.
bench_need bonnie++ bonnie++
bench_python - <<'PY'
import argparse, json, os, shutil, subprocess, sys, tempfile
import benchlib

ap = argparse.ArgumentParser(prog="bonnie.sh")
ap.add_argument("--build", required=True)
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--dir", default="/dev/shm/lockstep-bonnie")
ap.add_argument("--size_mib", type=int, default=768)   # a multiple of 3 × 8 KiB
ap.add_argument("--seeks", type=int, default=300000)   # in all, over 3 seekers
ap.add_argument("--files_k", type=int, default=64)     # × 1024 files
ap.add_argument("--json", default="")
a = ap.parse_args()
if a.rounds < 1 or a.size_mib % 3 or a.seeks % 3:
    sys.exit("--rounds >= 1; --size_mib and --seeks must be multiples of 3 (3 seekers)")
bins = benchlib.Bins(os.path.abspath(a.build))
SEEKERS = 3
files = a.files_k * 1024

work = tempfile.mkdtemp(prefix="lockstep-bonnie-")
logs = os.path.join(work, "logs"); os.makedirs(logs)
bonnie_dir = os.path.join(a.dir, "bonnie")
os.makedirs(bonnie_dir, exist_ok=True)
agent = benchlib.start_agent(bins, a.dir, logs)

BONNIE = ["bonnie++", "-d", bonnie_dir, "-s", f"{a.size_mib}:8k:{a.seeks}:{SEEKERS}",
          "-r", str(a.size_mib // 2), "-n", f"{a.files_k}:0:0:1", "-f", "-q", "-x", "1",
          "-m", "lockstep-bench"]
if os.geteuid() == 0:
    BONNIE += ["-u", "root"]


def num(field):
    return float("nan") if field in ("", "+++++", "+++") else float(field)


def run_bonnie():
    r = subprocess.run(BONNIE, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(BONNIE)} failed: {r.stdout}\n{r.stderr}")
    # bonnie++ 2.00's CSV (format 1.98): 11 put_block, 13 rewrite (KiB/s), 19
    # seeks (/s), 26 seq_create, 30 seq_del (/s); latencies from 38 on.
    f = r.stdout.strip().splitlines()[-1].split(",")
    return {"write_mib_s": num(f[11]) / 1024, "rewrite_mib_s": num(f[13]) / 1024,
            "seeks_s": num(f[19]), "creates_s": num(f[26]), "deletes_s": num(f[30]),
            "seek_latency_max_us": f[43]}


def phase(name, kind, extra):
    return f'\n[[phase]]\nname = "{name}"\nkind = "{kind}"\n{extra}'


PLAN = ('[run]\nname = "bonnie-compare"\nrepetitions = 1\n\n'
        + benchlib.agent_tables([agent.address])
        + phase("write", "write", f'dir = "lockstep"\ntransfer_size = "8k"\n'
                f'block_size = "{a.size_mib}m"\nfsync = true\n')
        + phase("rewrite", "rewrite", f'dir = "lockstep"\ntransfer_size = "8k"\n'
                f'block_size = "{a.size_mib}m"\nfsync = true\n')
        + phase("seeks", "seeks", f'dir = "lockstep"\ntasks_per_agent = {SEEKERS}\n'
                f'block_size = "{a.size_mib // SEEKERS}m"\nseeks = {a.seeks // SEEKERS}\n'
                'seek_rewrite_pct = 10\nfsync = true\n')
        + "".join(phase(f"md_{op}", "mdtest", f'dir = "lockstep/md"\nmd_op = "{op}"\n'
                        f'md_items = {files}\n')
                  for op in ("tree_create", "file_create", "file_remove", "tree_remove")))


def run_lockstep():
    os.makedirs(os.path.join(a.dir, "lockstep"), exist_ok=True)  # the agent creates no phase dirs
    rec, out = benchlib.run_lockstep(bins, PLAN, os.path.join(work, "results"))
    got = {}
    for p in benchlib.phases(rec):
        row = p.get("row", {})
        name = p.get("phase")
        if name == "write":
            got["write_mib_s"] = float(row.get("bw_mib", "nan"))
        elif name == "rewrite":
            got["rewrite_mib_s"] = float(row.get("bw_mib", "nan"))
        elif name == "seeks":
            got["seeks_s"] = float(row.get("iops", "nan"))
            got["seek_latency_max_us"] = p.get("latency", {}).get("max_us", "")
        elif name == "md_file_create":
            got["creates_s"] = float(p.get("md_rate", "nan"))
        elif name == "md_file_remove":
            got["deletes_s"] = float(p.get("md_rate", "nan"))
    return got


rounds = []
try:
    for i in range(a.rounds):
        order = ("bonnie", "lockstep") if i % 2 == 0 else ("lockstep", "bonnie")
        r = {}
        for side in order:
            r[side] = run_bonnie() if side == "bonnie" else run_lockstep()
        rounds.append(r)
        print(f"round {i + 1} ({order[0]} first): bonnie++ {r['bonnie']}\n"
              f"                          lockstep {r['lockstep']}", flush=True)
finally:
    agent.stop()
    shutil.rmtree(bonnie_dir, ignore_errors=True)
    shutil.rmtree(os.path.join(a.dir, "lockstep"), ignore_errors=True)

print(f"\nbonnie++ {' '.join(BONNIE[1:])}\nLockstep plan:\n{PLAN}")
print(f"{'figure':<16} {'bonnie++':>12} {'Lockstep':>12} {'Lockstep/bonnie++':>18}  (medians of {a.rounds})")
summary = {}
for key, label in (("seeks_s", "seeks/s"), ("rewrite_mib_s", "rewrite MiB/s"),
                   ("creates_s", "creates/s"), ("deletes_s", "deletes/s"),
                   ("write_mib_s", "write MiB/s")):
    b = benchlib.median([r["bonnie"][key] for r in rounds if r["bonnie"][key] == r["bonnie"][key]])
    l = benchlib.median([r["lockstep"][key] for r in rounds if key in r["lockstep"]])
    ratio = l / b if b == b and b > 0 else float("nan")
    summary[key] = {"bonnie": b, "lockstep": l, "ratio": ratio}
    print(f"{label:<16} {b:>12.1f} {l:>12.1f} {ratio:>18.2f}")
if a.json:
    with open(a.json, "w") as f:
        json.dump({"rounds": rounds, "summary": summary, "bonnie_cmd": BONNIE, "plan": PLAN}, f,
                  indent=1)
PY
