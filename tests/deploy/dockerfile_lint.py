#!/usr/bin/env python3
"""Lints deploy/container/Dockerfile without a container engine.

    dockerfile_lint.py SOURCE_DIR [BIN_DIR]

Checks: every stage starts FROM Debian bookworm (or an earlier stage); the
build stage copies every directory the CMake project reads and builds the
three binaries that the runtime stage copies; files copied from the source
tree exist; runtime stages install no -dev package or build tool; the
images run as a numeric non-root USER; the server image exposes the ports
of wsched-server's default --listen and --metrics_listen flags and its
entrypoint is a copied binary. With BIN_DIR (the built binaries) and apt's
package lists, it also checks that every shared library the binaries need
comes from a package the runtime stage installs (or their dependencies, or
the slim base image).
"""
import glob
import os
import re
import shlex
import subprocess
import sys

SRC = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
BIN = sys.argv[2] if len(sys.argv) > 2 else ""
DOCKERFILE = os.path.join(SRC, "deploy/container/Dockerfile")
BINARIES = ["wsched-server", "wsched-agent", "wschedctl", "wsched-cdi-hook"]
# In debian:bookworm-slim: libc6, and what apt itself needs.
SLIM_BASE = {"libc6", "libgcc-s1", "libstdc++6", "zlib1g"}
BUILD_TOOLS = {"build-essential", "cmake", "gcc", "g++", "clang", "make", "ccache",
               "protobuf-compiler", "protobuf-compiler-grpc", "pkg-config", "git"}

failures, passes = [], 0


def check(ok, what):
    global passes
    if ok:
        passes += 1
    else:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def instructions(path):
    """[(INSTRUCTION, args)] with continuation lines joined, comments dropped."""
    out, cur = [], ""
    with open(path) as f:
        for line in f:
            s = line.rstrip("\n")
            if not cur and (not s.strip() or s.lstrip().startswith("#")):
                continue
            if s.lstrip().startswith("#"):
                continue  # a comment inside a continued instruction
            if s.endswith("\\"):
                cur += s[:-1] + " "
                continue
            cur += s
            word, _, rest = cur.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
            cur = ""
    return out


def stages(instrs):
    result = []
    for word, args in instrs:
        if word == "FROM":
            parts = args.split()
            name = parts[2] if len(parts) == 3 and parts[1].upper() == "AS" else None
            result.append({"base": parts[0], "name": name, "instrs": []})
        else:
            check(bool(result), f"{word} before the first FROM")
            if result:
                result[-1]["instrs"].append((word, args))
    return result


def copy_args(args):
    words = shlex.split(args)
    flags = {w.split("=", 1)[0]: (w.split("=", 1) + [""])[1] for w in words if w.startswith("--")}
    paths = [w for w in words if not w.startswith("--")]
    return flags, paths[:-1], paths[-1]


def apt_packages(stage):
    pkgs = []
    for word, args in stage["instrs"]:
        if word == "RUN" and "apt-get install" in args:
            seg = args.split("apt-get install", 1)[1].split("&&")[0]
            pkgs += [w for w in seg.split() if not w.startswith("-")]
    return pkgs


def effective(stage, by_name, key):
    """USER or ENTRYPOINT of a stage, inherited through FROM <stage>."""
    value = None
    for word, args in stage["instrs"]:
        if word == key:
            value = args
    if value is None and stage["base"] in by_name:
        return effective(by_name[stage["base"]], by_name, key)
    return value


def flag_default(source, flag, options):
    """A string flag's default: its literal in main.cc, or, where main.cc
    reads it from the composition root (kDefaults.FIELD), that field's
    initializer in root/server.h."""
    m = re.search(r'ABSL_FLAG\(std::string,\s*%s,\s*"([^"]*)"' % flag, source)
    if m:
        return m.group(1)
    m = re.search(r'ABSL_FLAG\(std::string,\s*%s,\s*kDefaults\.(\w+)' % flag, source)
    if not m:
        return None
    field = re.search(r'std::string\s+%s\s*=\s*"([^"]*)"' % m.group(1), options)
    return field.group(1) if field else None


def main():
    st = stages(instructions(DOCKERFILE))
    by_name = {}
    for i, s in enumerate(st):
        known = s["base"] in by_name
        check(known or re.fullmatch(r"debian:(bookworm|12)(-slim)?", s["base"]),
              f"stage {i} FROM {s['base']}: want debian:bookworm[-slim] or an earlier stage")
        if s["name"]:
            by_name[s["name"]] = s
    build = st[0]
    final = st[-1]
    print(f"dockerfile_lint: {len(st)} stages: " + ", ".join(s["name"] or "?" for s in st))

    # Everything COPY'd from the context exists; --from names an earlier stage.
    built_paths = []
    for s in st:
        for word, args in s["instrs"]:
            check(word != "ADD", f"ADD in stage {s['name']}: use COPY")
            if word != "COPY":
                continue
            flags, sources, dest = copy_args(args)
            if "--from" in flags:
                check(flags["--from"] in by_name and by_name[flags["--from"]] is not s,
                      f"COPY --from={flags['--from']}: no such earlier stage")
                built_paths += sources
                continue
            for src in sources:
                hits = glob.glob(os.path.join(SRC, src.rstrip("/")))
                check(bool(hits), f"COPY {src}: not in the source tree")

    # The build stage copies every directory CMake reads.
    copied = set()
    for word, args in build["instrs"]:
        if word == "COPY":
            _, sources, _ = copy_args(args)
            copied.update(p.rstrip("/") for p in sources)
    with open(os.path.join(SRC, "CMakeLists.txt")) as f:
        subdirs = re.findall(r"add_subdirectory\((\w+)\)", f.read())
    for d in subdirs + ["migrations", "CMakeLists.txt", "deploy/local/install-deps.sh"]:
        check(d in copied, f"build stage does not copy {d}")

    # It builds exactly what the runtime copies, and the runtime copies all three.
    build_run = " ".join(a for w, a in build["instrs"] if w == "RUN")
    targets = re.search(r"--target\s+([\w\- ]+)", build_run)
    targets = set(targets.group(1).split()) if targets else set()
    copied_bins = {os.path.basename(p) for p in built_paths}
    check(targets == set(BINARIES), f"build targets {sorted(targets)}: want {BINARIES}")
    check(copied_bins == set(BINARIES), f"runtime copies {sorted(copied_bins)}: want {BINARIES}")

    # Runtime stages: no build tools, numeric non-root user.
    runtime = [s for s in st if s is not build]
    for s in runtime:
        pkgs = apt_packages(s)
        bad = [p for p in pkgs if p.endswith("-dev") or p in BUILD_TOOLS]
        check(not bad, f"stage {s['name']} installs build-time packages {bad}")
        user = effective(s, by_name, "USER")
        uid = (user or "").split(":")[0]
        check(uid.isdigit() and int(uid) != 0,
              f"stage {s['name']}: USER {user!r}: want a numeric non-root uid")

    # The server image: ports of the flag defaults, entrypoint a copied binary.
    with open(os.path.join(SRC, "server/main.cc")) as f:
        main_cc = f.read()
    with open(os.path.join(SRC, "server/root/server.h")) as f:
        options = f.read()
    want_ports = {flag_default(main_cc, "listen", options).rsplit(":", 1)[1],
                  flag_default(main_cc, "metrics_listen", options).rsplit(":", 1)[1]}
    exposed = set()
    for word, args in final["instrs"]:
        if word == "EXPOSE":
            exposed.update(p.split("/")[0] for p in args.split())
    check(exposed == want_ports, f"final stage EXPOSE {sorted(exposed)}: want {sorted(want_ports)}")
    entry = effective(final, by_name, "ENTRYPOINT") or ""
    check(entry.startswith("[") and "/usr/local/bin/wsched-server" in entry,
          f"final stage ENTRYPOINT {entry!r}: want the exec form of /usr/local/bin/wsched-server")
    agent = by_name.get("agent")
    check(agent is not None and "/usr/local/bin/wsched-agent" in (effective(agent, by_name, "ENTRYPOINT") or ""),
          "an 'agent' stage with ENTRYPOINT wsched-agent")

    # Actuator scripts the chart may run are in the image, and kubectl with them.
    image_files = set()
    for s in runtime:
        for word, args in s["instrs"]:
            if word == "COPY" and "--from" not in args:
                _, sources, dest = copy_args(args)
                image_files.update(os.path.join(dest, os.path.basename(x)) for x in sources)
    check("/usr/local/lib/wsched/actuators/kubernetes-cluster-autoscaler.sh" in image_files,
          "the image holds the cluster-autoscaler actuator the Helm chart runs")
    check("/usr/local/lib/wsched/actuators/driver-install-kubernetes-job.sh" in image_files,
          "the image holds the driver install Job command the Helm chart runs")
    check("kubernetes-client" in apt_packages(by_name.get("runtime", final)),
          "the runtime installs kubernetes-client (kubectl) for that actuator")

    runtime_libs(apt_packages(by_name.get("runtime", final)))


def runtime_libs(pkgs):
    """Every NEEDED library of the built binaries comes from a runtime package."""
    if not BIN or not all(os.path.exists(os.path.join(BIN, b)) for b in BINARIES):
        print("dockerfile_lint: binaries not built; library check skipped")
        return
    try:
        closure = subprocess.run(
            ["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
             "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances"] + pkgs,
            capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        print("dockerfile_lint: apt-cache has no package lists; library check skipped")
        return
    have = set(pkgs) | SLIM_BASE
    have.update(re.findall(r"^\s*(?:\|)?Depends: <?([\w.+-]+)", closure, re.M))
    have.update(l.strip() for l in closure.splitlines() if l and not l[0].isspace())
    libs = {}  # binary -> [(soname, path)]
    for b in BINARIES:
        # ldd lists every library loaded, direct or not, with its path.
        out = subprocess.run(["ldd", os.path.join(BIN, b)], capture_output=True, text=True).stdout
        libs[b] = re.findall(r"^\s*(\S+) => (/\S+)", out, re.M)
    # dpkg knows a file by the path its package ships, which on a merged-/usr
    # system may be the /lib or the /usr/lib spelling: ask for all at once.
    candidates = {}
    for entries in libs.values():
        for _, path in entries:
            real = os.path.realpath(path)
            candidates[path] = [path, real, re.sub(r"^/usr/", "/", real), "/usr" + real]
    asked = sorted({c for cs in candidates.values() for c in cs})
    out = subprocess.run(["dpkg", "-S", *asked], capture_output=True, text=True).stdout
    owner_of = {}
    for line in out.splitlines():
        pkg, _, path = line.partition(": ")
        owner_of[path.strip()] = pkg.split(":")[0]
    for b, entries in libs.items():
        for lib, path in entries:
            owner = next((owner_of[c] for c in candidates[path] if c in owner_of), None)
            check(owner is not None, f"{b}: {lib} belongs to no Debian package")
            if owner:
                check(owner in have, f"{b}: {lib} comes from {owner}, which the runtime stage lacks")

if __name__ == "__main__":
    main()
    print(f"dockerfile_lint: {passes} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)
