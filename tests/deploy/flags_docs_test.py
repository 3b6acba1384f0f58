#!/usr/bin/env python3
"""The flag tables document every flag the binaries define, as the sources are now.

    flags_docs_test.py SOURCE_DIR

Every ABSL_FLAG of wsched-server (server/main.cc, and any library under
server/ but the agent's and the CLI's) must be in the table of
docs/operations.md, section "wsched-server flags", and every ABSL_FLAG of
wsched-agent (server/agent/, main.cc) in the table of docs/agent.md, section
"Flags". A documented flag the binary
does not define fails too. Where a table row names one flag and its default
cell is a value (`10s`, `/`, 64, off) rather than words ("(required)", "root's
hostname"), it must be the flag's default in the source, as written on the
command line (durations `10s`, `5m`; booleans false/off, true/on).
"""
import pathlib
import re
import sys

# (binary, sources whose flags it has, doc, section). wsched-server links
# everything under server/ but the agent and the CLI; a flag defined in a
# library there is a server flag too.
TABLES = [
    ("wsched-server", lambda p: not p.startswith(("server/agent/", "server/cli/")),
     "docs/operations.md", "wsched-server flags"),
    ("wsched-agent", lambda p: p.startswith("server/agent/"), "docs/agent.md", "Flags"),
]
UNITS = {"Nanoseconds": "ns", "Microseconds": "us", "Milliseconds": "ms", "Seconds": "s",
         "Minutes": "m", "Hours": "h"}


def split_args(text):
    """Top-level comma-separated arguments of a macro call body."""
    args, depth, cur, quote = [], 0, "", False
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            cur += c
            if c == "\\":
                cur += text[i + 1]
                i += 1
            elif c == '"':
                quote = False
        elif c == '"':
            quote, cur = True, cur + c
        elif c in "({[":
            depth, cur = depth + 1, cur + c
        elif c in ")}]":
            depth, cur = depth - 1, cur + c
        elif c == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += c
        i += 1
    args.append(cur.strip())
    return args


def strip_comments(text):
    """C++ source without // and /* */ comments; string literals kept intact."""
    return re.sub(r'("(?:[^"\\\n]|\\.)*")|//[^\n]*|/\*.*?\*/',
                  lambda m: m.group(1) or "", text, flags=re.S)


def source_flags(path):
    text = strip_comments(path.read_text())
    flags = {}
    for m in re.finditer(r"\bABSL_FLAG\s*\(", text):
        depth, i = 1, m.end()
        while depth:
            if text[i] == '"':
                i += 1
                while text[i] != '"':
                    i += 2 if text[i] == "\\" else 1
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        args = split_args(text[m.end():i - 1])
        flags[args[1]] = default_text(args[2])
    return flags


def default_text(expr):
    """The default as it would be written on the command line, or None if unsure."""
    expr = expr.strip()
    if m := re.fullmatch(r'"((?:[^"\\]|\\.)*)"', expr):
        return m.group(1)
    if expr in ("{}", "std::vector<std::string>{}"):
        return ""
    if expr in ("true", "false"):
        return expr
    if m := re.fullmatch(r"absl::(\w+)\((\d+)\)", expr):
        return m.group(2) + UNITS[m.group(1)] if m.group(1) in UNITS else None
    if re.fullmatch(r"[\d\s<>*+()-]+", expr):
        return str(eval(expr, {"__builtins__": {}}))  # integer arithmetic only
    return None


def documented_flags(doc_path, heading):
    lines = doc_path.read_text().split("\n")
    try:
        start = next(i for i, l in enumerate(lines) if re.fullmatch(r"#+\s+" + re.escape(heading), l.strip()))
    except StopIteration:
        sys.exit(f"flags_docs_test: {doc_path.name} has no section {heading!r}")
    rows = {}
    multi = set()
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        names = re.findall(r"`--(\w+)`", cells[0])
        for name in names:
            rows.setdefault(name, []).append(cells[1] if len(cells) > 1 else "")
            if len(names) > 1:
                multi.add(name)
    return rows, multi


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: flags_docs_test.py SOURCE_DIR")
    src = pathlib.Path(sys.argv[1])
    errors, checked = [], 0
    for binary, belongs, doc, heading in TABLES:
        defined, origin = {}, {}
        for path in sorted((src / "server").rglob("*.cc")):
            rel = path.relative_to(src).as_posix()
            if not belongs(rel) or rel.endswith("_test.cc") or "/fuzz/" in rel:
                continue
            for name, default in source_flags(path).items():
                defined[name], origin[name] = default, rel
        if not defined:
            sys.exit(f"flags_docs_test: found no ABSL_FLAG for {binary}")
        rows, multi = documented_flags(src / doc, heading)
        where = f'{doc} "{heading}"'
        for name, default in sorted(defined.items()):
            checked += 1
            if name not in rows:
                errors.append(f"--{name} ({origin[name]}) is missing from the table in {where}")
                continue
            if len(rows[name]) > 1:
                errors.append(f"--{name} has {len(rows[name])} rows in {where}")
            cell = rows[name][0]
            written = re.fullmatch(r"`([^`]*)`", cell) or re.fullmatch(r"([\w.:/-]+)", cell)
            value = written and {"off": "false", "on": "true"}.get(written.group(1), written.group(1))
            if name not in multi and written and default is not None and value != default:
                errors.append(f"--{name}: {where} says default {cell}, {origin[name]} has {default!r}")
        for name in sorted(set(rows) - set(defined)):
            errors.append(f"--{name} is in the table in {where} but {binary} does not define it")
    for e in errors:
        print(f"flags_docs_test: {e}", file=sys.stderr)
    print(f"flags_docs_test: {checked} flags checked, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
