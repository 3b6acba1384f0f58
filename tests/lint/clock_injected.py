#!/usr/bin/env python3
"""The server reads the wall clock in one place (server/core/clock.h,
docs/architecture.md "Time"): a part that decides by time takes a Clock, so
its tests can set the time, and an absl::Now() beside that clock would mix
the two (a timer on the wall clock, a timestamp from a fake one). Waits are
bounded by timeouts, which need no reading of the clock at all.

  tests/lint/clock_injected.py SOURCE_DIR

Reads every .h and .cc under server/ (tests and their helpers left out) and
fails listing each line that calls absl::Now() outside the clock
implementation and the edges in EDGES, each of which measures or stamps real
time on purpose (a log line's time, a child process's deadline) or is a
binary of its own. A file leaves EDGES when it takes a clock.
"""
import os
import re
import sys

CLOCK = "server/core/clock.cc"
# File or folder (ending in /) -> why it reads the wall clock itself.
EDGES = {
    "server/agent/": "wsched-agent, a binary of its own: its host's time",
    "server/cli/": "wschedctl, a binary of its own: its user's time",
    "server/log/log.cc": "a log line is stamped with the wall time",
    "server/metrics/metrics.cc": "a timestamp exported to Prometheus is wall time",
    "server/process/process_runner.cc": "a child process's deadline and run time",
    "server/grpc/metrics_interceptor.cc": "measures a call's latency",
    "server/grpc/placement_forwarder.cc": "measures a forwarded call's latency",
    "server/scaling/exec_actuator.cc": "measures an actuator command's run time",
    "server/store/commit_batcher.cc": "measures a batch's queueing and commit latency",
    "server/store/call_watchdog.cc": "bounds a real socket's wait on the database",
    "server/store/change_feed.cc": "paces the listener's ping of a real connection",
    "server/store/database.cc": "how long the real writer has failed to commit, for health",
    # To take core::WallClock() when the composition root leaves grpc/ (issue 32).
    "server/root/server.cc": "the composition root hands the wall clock to the health "
                             "reporter and the rate limiter",
}
NOW = re.compile(r"\babsl::Now\s*\(")
COMMENT = re.compile(r"//.*$")


def is_test(name):
    return (name.endswith("_test.cc") or name.endswith("_test_util.h")
            or name.startswith("test_"))


def allowed(relative):
    if relative == CLOCK:
        return True
    return any(relative == edge or (edge.endswith("/") and relative.startswith(edge))
               for edge in EDGES)


def violations(root):
    for directory, dirs, files in os.walk(os.path.join(root, "server")):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith((".h", ".cc")) or is_test(name):
                continue
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, root)
            if allowed(relative):
                continue
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if NOW.search(COMMENT.sub("", line)):
                        yield f"{relative}:{number}: {line.strip()}"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    missing = [p for p in [CLOCK] + list(EDGES) if not os.path.exists(os.path.join(root, p))]
    if missing:
        sys.exit("named but not found (mend EDGES): " + ", ".join(missing))
    found = list(violations(root))
    for finding in found:
        print(finding)
    print(f"clock injected: {len(found)} call(s) of absl::Now() outside {CLOCK} and the edges; "
          "take a core::Clock, or a timeout for a wait")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
