#!/usr/bin/env python3
"""Checks the shape limits of ARCHITECTURE.md on Lockstep's own sources.

  code_shape.py [--report [--by-folder]] SRC_DIR

No source file in controller/, agent/ or common/ may be over 600 lines, no
function over 120 lines, and no function of the run path (controller/run/)
over 80. Function extents come from Universal Ctags (`end:` field), so a
lambda counts toward the function that holds it. --report prints the largest
file and function of each top folder and exits 0; with --by-folder, of each
directory (agent/, agent/fs/, agent/workloads/, ...).
"""
import os
import subprocess
import sys

FILE_LIMIT = 600
FUNCTION_LIMIT = 120
RUN_PATH_LIMIT = 80
FOLDERS = ("controller", "agent", "common")


def sources(root):
    for folder in FOLDERS:
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for name in sorted(names):
                if name.endswith((".cc", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def functions(root, files):
    try:
        version = subprocess.run(["ctags", "--version"], capture_output=True, text=True).stdout
    except FileNotFoundError:
        version = ""
    if "Universal Ctags" not in version:
        sys.exit("code_shape.py needs Universal Ctags (`ctags` with end: fields): "
                 "apt-get install universal-ctags (deploy/test.sh installs it)")
    out = subprocess.run(
        ["ctags", "--fields=+ne", "--c++-kinds=f", "--language-force=C++", "-o", "-"]
        + list(files), cwd=root, check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        cols = line.split("\t")
        fields = dict(c.split(":", 1) for c in cols[3:] if ":" in c)
        if "line" in fields and "end" in fields:
            scope = fields.get("class", "").split("::")[-1]
            name = f"{scope}::{cols[0]}" if scope and not scope.startswith("__anon") else cols[0]
            yield cols[1], name, int(fields["line"]), int(fields["end"]) - int(fields["line"]) + 1


def main(argv):
    report = "--report" in argv
    by_folder = "--by-folder" in argv
    group = (lambda path: os.path.dirname(path)) if by_folder else (lambda path: path.split(os.sep)[0])
    root = [a for a in argv[1:] if not a.startswith("--")][0]
    files = list(sources(root))
    problems = []
    largest_file = {}
    largest_function = {}
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            n = sum(1 for _ in f)
        top = group(path)
        if n > largest_file.get(top, (0, ""))[0]:
            largest_file[top] = (n, path)
        if n > FILE_LIMIT:
            problems.append(f"{path}: {n} lines; the limit is {FILE_LIMIT}: split it by role")
    for path, name, line, n in functions(root, files):
        top = group(path)
        if n > largest_function.get(top, (0, ""))[0]:
            largest_function[top] = (n, f"{path}:{line} {name}")
        run_path = path.startswith(os.path.join("controller", "run") + os.sep)
        limit = RUN_PATH_LIMIT if run_path else FUNCTION_LIMIT
        if n > limit:
            problems.append(f"{path}:{line}: {name} is {n} lines; the limit here is {limit}: "
                            "give its steps names of their own")
    if report:
        for top in (sorted(largest_file) if by_folder else FOLDERS):
            print(f"{top}: largest file {largest_file.get(top)}, "
                  f"largest function {largest_function.get(top)}")
        print(f"{len(problems)} over the limits")
        for p in problems:
            print("  " + p)
        return 0
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
