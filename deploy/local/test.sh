#!/usr/bin/env bash
# The README's test command: install, build, run the whole suite (ctest).
# PostgreSQL-backed tests start their own private server (tests/CMakeLists.txt).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/deploy/local/build.sh"
cd "$root/build"
ctest --output-on-failure -j "${WSCHED_JOBS:-2}" "$@"
