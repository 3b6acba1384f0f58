#!/usr/bin/env bash
# The README's test command: install, build, run the whole suite (ctest).
# PostgreSQL-backed tests start their own private server (tests/CMakeLists.txt).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# WSCHED_TEST_PG_PORT: the test PostgreSQL's port (55433), for the build and
# the shell tests alike; set it to run a second checkout's suite beside one.
export WSCHED_TEST_PG_PORT=${WSCHED_TEST_PG_PORT:-55433}
"$root/deploy/local/build.sh"
cd "$root/build"
ctest --output-on-failure -j "${WSCHED_JOBS:-2}" "$@"
