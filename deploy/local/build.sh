#!/usr/bin/env bash
# Installs what is missing and builds into build/ (ccache-backed):
#   build.sh             everything: tests, fuzzers, tools (deploy/local/test.sh)
#   build.sh TARGET...   only those targets and what they need (deploy/local/run.sh)
# The compiler's output goes to build/build.log; it is shown when a build fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/deploy/local/install-deps.sh"
mkdir -p "$root/build"
log="$root/build/build.log"
targets=()
for target in "$@"; do targets+=(--target "$target"); done
# ccache hashes paths relative to the checkout and not the working directory,
# so two clones (or a clone moved elsewhere) share cache hits. Debug info
# keeps the first clone's directory; that is all it costs.
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=true
echo "building wsched${*:+ ($*)} (log: build/build.log) ..."
if ! { cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
         -DWSCHED_SKIP_DIRS="${WSCHED_SKIP_DIRS:-}" \
         -DTEST_PG_PORT="${WSCHED_TEST_PG_PORT:-55433}" &&
       cmake --build "$root/build" -j "${WSCHED_JOBS:-2}" "${targets[@]}"; } >"$log" 2>&1; then
  grep -E 'error|Error' "$log" | head -n 40 >&2 || tail -n 40 "$log" >&2
  echo "build failed; see build/build.log" >&2
  exit 1
fi
