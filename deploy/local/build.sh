#!/usr/bin/env bash
# Installs what is missing and builds everything into build/ (ccache-backed).
# The compiler's output goes to build/build.log; it is shown when a build fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/deploy/local/install-deps.sh"
mkdir -p "$root/build"
log="$root/build/build.log"
echo "building wsched (log: build/build.log) ..."
if ! { cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
         -DWSCHED_SKIP_DIRS="${WSCHED_SKIP_DIRS:-}" &&
       cmake --build "$root/build" -j "${WSCHED_JOBS:-2}"; } >"$log" 2>&1; then
  grep -E 'error|Error' "$log" | head -n 40 >&2 || tail -n 40 "$log" >&2
  echo "build failed; see build/build.log" >&2
  exit 1
fi
