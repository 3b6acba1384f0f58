#!/usr/bin/env python3
"""Every folder under server/ includes only what is below it
(docs/architecture.md, "Layout"): a catalog rule that reached into
server/scaling, or a placement filter that included a gRPC header, would
drag I/O and threads into code that is tested as string in, value out; a
store row that named a scaling type would tie the schema to that library;
the scheduler reaching into the transport would tie decisions to the API.

  tests/lint/include_layers.py SOURCE_DIR

Reads every .h and .cc under the folders named in ALLOWED and fails listing
each `#include "server/<folder>/..."` of a folder not allowed there, with
why where WHY says it. Tests (*_test.cc) are left out: a test may check a
rule against its callers.
"""
import os
import re
import sys

# Folder -> the server/ folders its sources may include (its own included).
ALLOWED = {
    "server/core": {"core"},
    "server/catalog": {"catalog", "core"},
    "server/placement": {"placement", "core"},
    "server/simulate": {"simulate", "scaling", "placement", "catalog", "core"},
    # The CDI hook runs alone on the host: nothing of the server links into it.
    "server/cdi_hook": {"cdi_hook"},
    # Not pure, but below every stateful part: its rows are its own types.
    "server/store": {"store", "core"},
    "server/log": {"log"},
    "server/metrics": {"metrics"},
    "server/process": {"process"},
    "server/scaling": {"scaling", "placement", "process", "core"},
    "server/convert": {"convert", "catalog", "scaling", "core"},
    # The stateful centre, part by part, each below the ones that use it;
    # engines and the store below all of them, never the transport.
    "server/usage": {"usage", "core"},
    "server/replica": {"replica", "usage", "placement", "scaling", "store", "metrics", "log", "core"},
    "server/inventory": {"inventory", "replica", "usage", "placement", "store", "metrics", "log",
                         "core"},
    "server/pipeline": {"pipeline", "inventory", "replica", "placement", "store", "metrics", "log",
                        "core"},
    "server/idle": {"idle", "pipeline", "replica", "usage", "store", "log", "core"},
    # WatchWorkspaces below the transport: the change log's history, fanned out.
    "server/watch": {"watch", "store", "log", "core"},
    # The replica's root and the scaling leader, over every part.
    "server/scheduler": {"scheduler", "watch", "idle", "pipeline", "inventory", "replica", "usage",
                         "placement", "scaling", "store", "metrics", "process", "log", "core"},
    # Application rules, below the transport that calls them.
    "server/app": {"app", "scheduler", "watch", "idle", "pipeline", "inventory", "replica", "usage", "catalog",
                   "store", "metrics", "log", "core"},
    # The transport: decode, authorize, call app/ and the scheduler, encode.
    "server/grpc": {"grpc", "app", "scheduler", "watch", "idle", "pipeline", "inventory", "replica", "usage",
                    "convert", "catalog", "metrics", "log", "core"},
    # The composition root: wires the transport to the application.
    "server/root": {"root", "app", "grpc", "scheduler", "watch", "idle", "pipeline", "inventory", "replica",
                    "usage", "store", "metrics", "log", "process", "core"},
    # The clients: the agent and wschedctl speak the API through grpc/'s
    # client parts.
    "server/agent": {"agent", "grpc", "convert", "process", "core"},
    "server/cli": {"cli", "grpc", "simulate", "catalog", "core"},
}
# (folder, included folder) -> why that include is refused, for the
# boundaries someone is most likely to cross on purpose.
WHY = {
    ("server/grpc", "store"):
        "the transport reaches PostgreSQL only through server/app/ (a rule, a "
        "transaction, a query: an operation in app/ that the handler calls) or the "
        "scheduler; store types stay below app/ (docs/architecture.md, \"Layout\")",
}
INCLUDE = re.compile(r'^\s*#\s*include\s*["<]server/([a-z_]+)/', re.MULTILINE)


def violations(root):
    for folder, allowed in sorted(ALLOWED.items()):
        for directory, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if not name.endswith((".h", ".cc")) or name.endswith("_test.cc"):
                    continue
                path = os.path.join(directory, name)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                for match in INCLUDE.finditer(text):
                    included = match.group(1)
                    if included not in allowed:
                        line = text.count("\n", 0, match.start()) + 1
                        why = WHY.get((folder, included)) or (
                            f"{folder} may include only "
                            + ", ".join(f"server/{a}/" for a in sorted(allowed)))
                        yield (f"{os.path.relpath(path, root)}:{line}: includes server/"
                               f"{included}/, but {why}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    for folder in ALLOWED:
        if not os.path.isdir(os.path.join(root, folder)):
            sys.exit(f"{folder} is not a folder under {root}")
    # Every folder is listed: a new one says what it may include.
    for name in sorted(os.listdir(os.path.join(root, "server"))):
        if os.path.isdir(os.path.join(root, "server", name)) and f"server/{name}" not in ALLOWED:
            sys.exit(f"server/{name} is not listed in ALLOWED ({__file__}): say what it may include")
    found = list(violations(root))
    for finding in found:
        print(finding)
    print(f"include layers: {len(found)} include(s) pointing up")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
