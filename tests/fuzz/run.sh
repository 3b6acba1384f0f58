#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, AddressSanitizer) in build-fuzz/
# and runs each for a while.
#   tests/fuzz/run.sh                      # every target, 60 s each
#   tests/fuzz/run.sh --seconds=300 catalog agent_tree
#   tests/fuzz/run.sh --build-only | --no-build
# New inputs libFuzzer finds go to build-fuzz/corpus/<target>/ (the seeds
# in tests/fuzz/corpus/<target>/ are only read); a crash leaves its input in
# build-fuzz/artifacts/<target>/ and fails the run. To keep one as a
# regression, fix the bug and copy the input into tests/fuzz/corpus/<target>/.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
BUILD=${WSCHED_FUZZ_BUILD:-$SRC/build-fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-60}
ALL=(catalog agent_parsers agent_tree requests tokens)
build=1
run=1
targets=()
for arg in "$@"; do
  case $arg in
    --seconds=*) SECONDS_EACH=${arg#--seconds=} ;;
    --build-only) run=0 ;;
    --no-build) build=0 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $arg" >&2; exit 2 ;;
    *) targets+=("$arg") ;;
  esac
done
[[ ${#targets[@]} -gt 0 ]] || targets=("${ALL[@]}")

# The build machine is shared: builds take the same lock as the main tree.
locked() {
  if command -v flock >/dev/null; then flock /tmp/wsched-build.lock "$@"; else "$@"; fi
}

if [[ $build -eq 1 ]]; then
  command -v clang++-14 >/dev/null || { echo "run.sh: clang++-14 missing (deploy/local/install-deps.sh)" >&2; exit 2; }
  if [[ ! -f $BUILD/CMakeCache.txt ]]; then
    locked cmake -S "$SRC" -B "$BUILD" -DWSCHED_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_COMPILER=clang++-14 \
      "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
      "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" >/dev/null
  fi
  fuzzers=()
  for t in "${targets[@]}"; do fuzzers+=("fuzz_$t"); done
  locked cmake --build "$BUILD" -j2 --target "${fuzzers[@]}" 2>&1 | grep -E "error|warning:|^\[100%\]" || true
  for t in "${targets[@]}"; do
    [[ -x $BUILD/bin/fuzz_$t ]] || { echo "run.sh: fuzz_$t did not build" >&2; exit 1; }
  done
fi
[[ $run -eq 1 ]] || exit 0

failed=()
for t in "${targets[@]}"; do
  corpus=$BUILD/corpus/$t
  artifacts=$BUILD/artifacts/$t
  mkdir -p "$corpus" "$artifacts"
  echo "== fuzz_$t: ${SECONDS_EACH}s"
  if ! "$BUILD/bin/fuzz_$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" "$HERE/corpus/$t" \
      >"$BUILD/fuzz_$t.log" 2>&1; then
    failed+=("$t")
    tail -40 "$BUILD/fuzz_$t.log" >&2
  else
    grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|Done [0-9]+ runs" "$BUILD/fuzz_$t.log" || true
  fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "run.sh: crashes in ${failed[*]}; inputs under $BUILD/artifacts/" >&2
  exit 1
fi
echo "run.sh: ${#targets[@]} targets ran clean for ${SECONDS_EACH}s each"
