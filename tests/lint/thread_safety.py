#!/usr/bin/env python3
"""Clang's thread-safety analysis over every server source: ABSL_GUARDED_BY
and friends become rules, not comments (-Wthread-safety -Werror).

  tests/lint/thread_safety.py BUILD_DIR [JOBS]

Reads BUILD_DIR/compile_commands.json (the GCC build's flags), re-runs each
server/ and loadtest/ translation unit through clang++-14 -fsyntax-only with
the analysis on, and fails listing every finding. Generated code and
third-party headers are not analysed (-isystem for them, as in the build).
"""
import concurrent.futures
import json
import os
import shlex
import shutil
import subprocess
import sys

CLANG = shutil.which("clang++-14") or shutil.which("clang++")
# Flags GCC understands and clang does not (or warns about).
GCC_ONLY = ("-fno-semantic-interposition",)
# Only the analysis: everything else is the GCC build's business. (Order
# matters: -Wno-everything first, then what is turned back on, as errors.)
ANALYSIS = ["-fsyntax-only", "-Wno-unknown-warning-option", "-Wno-everything", "-Wthread-safety",
            "-Wthread-safety-beta", "-Werror=thread-safety", "-Werror=thread-safety-beta"]


def command_for(entry):
    args = entry.get("arguments") or shlex.split(entry["command"])
    out = [CLANG]
    skip = False
    for arg in args[1:]:
        if skip:
            skip = False
            continue
        if arg in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if arg in ("-c", "-MD", "-MMD") or arg.startswith(GCC_ONLY) or arg == entry["file"]:
            continue
        out.append(arg)
    return out + ANALYSIS + [entry["file"]]


def check(entry):
    result = subprocess.run(command_for(entry), cwd=entry["directory"], capture_output=True, text=True)
    return entry["file"], result.returncode, result.stderr


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if CLANG is None:
        sys.exit("clang++ not found (Debian package clang-14)")
    build = sys.argv[1]
    jobs = int(sys.argv[2]) if len(sys.argv) > 2 else os.cpu_count() or 2
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = json.load(f)
    ours = [e for e in entries
            if e["file"].startswith(os.path.join(root, "server") + os.sep)
            or e["file"].startswith(os.path.join(root, "loadtest") + os.sep)]
    only = os.environ.get("ONLY")  # e.g. ONLY=server/scheduler: a subset while working.
    if only:
        ours = [e for e in ours if os.path.relpath(e["file"], root).startswith(only)]
    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for path, code, stderr in pool.map(check, ours):
            if code != 0:
                failures.append((path, stderr))
    for path, stderr in failures:
        print(f"--- {os.path.relpath(path, root)}\n{stderr}")
    print(f"thread-safety analysis: {len(ours)} files, {len(failures)} with findings")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
