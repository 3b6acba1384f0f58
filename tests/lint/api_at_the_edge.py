#!/usr/bin/env python3
"""The wsched.v1 API stays at the edge (docs/architecture.md, "Layout"):
under server/ only the transport (grpc/), the mapping (convert/) and the
two clients (cli/, agent/) include a generated API header or name a v1::
type. The scheduler, the engines and the store trade in core types, so an
API change touches the mapping and the handlers, never a decision.

  tests/lint/api_at_the_edge.py SOURCE_DIR

Reads every .h and .cc under server/ outside EDGE, comments left out, and
fails listing each line that includes wsched/v1/... or names v1::.
"""
import os
import re
import sys

EDGE = ("grpc", "convert", "cli", "agent")
API = re.compile(r'#\s*include\s*["<]wsched/v1/|\bv1::')
COMMENT = re.compile(r"//.*$")


def violations(root):
    server = os.path.join(root, "server")
    for directory, dirs, files in os.walk(server):
        dirs.sort()
        if directory == server:
            dirs[:] = [d for d in dirs if d not in EDGE]
        for name in sorted(files):
            if not name.endswith((".h", ".cc")):
                continue
            path = os.path.join(directory, name)
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if API.search(COMMENT.sub("", line)):
                        yield f"{os.path.relpath(path, root)}:{number}: {line.strip()}"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    for folder in EDGE:
        if not os.path.isdir(os.path.join(root, "server", folder)):
            sys.exit(f"server/{folder} is not a folder under {root}")
    found = list(violations(root))
    for finding in found:
        print(finding)
    print(f"api at the edge: {len(found)} use(s) of wsched.v1 outside "
          + ", ".join(f"server/{e}/" for e in EDGE))
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
