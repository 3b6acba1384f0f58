#!/usr/bin/env python3
"""All SQL lives in server/store (docs/architecture.md, "The flow of a request"):
services and the scheduler reach PostgreSQL only through the store's
repositories and its unit of work, so a transaction's guards and its
change-log entry are written in one place. A pqxx::work opened in a gRPC
handler would bypass both.

  tests/lint/sql_in_store.py SOURCE_DIR

Reads every file under server/ outside server/store/ and fails listing each
line that mentions pqxx (a type, a call, an #include <pqxx/...>), and each
include of a store header that reaches <pqxx/...> through the store's own
includes: the store links libpqxx privately, so the headers it offers above
it must not need it.
"""
import os
import re
import sys

ALLOWED = os.path.join("server", "store")
PQXX = re.compile(r"pqxx", re.IGNORECASE)
STORE_INCLUDE = re.compile(r'^\s*#\s*include\s+"(server/store/[^"]+)"', re.MULTILINE)
PQXX_INCLUDE = re.compile(r"^\s*#\s*include\s+<pqxx/", re.MULTILINE)


def pqxx_path(root, header, seen=None):
    """The chain of store headers from `header` to one that includes
    <pqxx/...>, or None."""
    seen = set() if seen is None else seen
    if header in seen:
        return None
    seen.add(header)
    try:
        with open(os.path.join(root, header), encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    if PQXX_INCLUDE.search(text):
        return [header]
    for included in STORE_INCLUDE.findall(text):
        chain = pqxx_path(root, included, seen)
        if chain:
            return [header] + chain
    return None


def violations(root):
    server = os.path.join(root, "server")
    for directory, dirs, files in os.walk(server):
        dirs.sort()
        relative = os.path.relpath(directory, root)
        if relative == ALLOWED or relative.startswith(ALLOWED + os.sep):
            dirs.clear()
            continue
        for name in sorted(files):
            path = os.path.join(directory, name)
            try:
                with open(path, encoding="utf-8") as f:
                    lines = f.readlines()
            except UnicodeDecodeError:
                continue  # Not source.
            for number, line in enumerate(lines, 1):
                if PQXX.search(line):
                    yield f"{os.path.relpath(path, root)}:{number}: {line.strip()}"
                    continue
                included = STORE_INCLUDE.match(line)
                chain = included and pqxx_path(root, included.group(1))
                if chain:
                    yield (f"{os.path.relpath(path, root)}:{number}: includes "
                           + " -> ".join(chain) + " -> <pqxx/...>")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    if not os.path.isdir(os.path.join(root, ALLOWED)):
        sys.exit(f"{ALLOWED} is not a folder under {root}")
    found = list(violations(root))
    for finding in found:
        print(finding)
    print(f"sql in store: {len(found)} use(s) of pqxx outside {ALLOWED}/")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
