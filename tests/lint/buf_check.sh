#!/usr/bin/env bash
# buf lint (api/buf.yaml: STANDARD rules and their listed exceptions) and
# buf breaking (FILE rules) of api/ against the previous commit's api/.
#
# The previous commit comes from git (git archive HEAD~1 api). Without
# git, outside a git checkout, in a repository with a single commit, or in
# a shallow clone that lacks HEAD~1 (CI checkouts often are: fetch with
# --depth=2 or more to have it), the breaking check cannot run: the test
# says which of these it is and passes for that reason only; lint runs
# regardless. A previous commit without api/wsched/v1 has nothing to break.
#
# usage: buf_check.sh REPO_ROOT
set -euo pipefail

root=${1:?usage: buf_check.sh REPO_ROOT}
api="$root/api"
buf=${WSCHED_BUF:-buf}

if ! command -v "$buf" >/dev/null 2>&1; then
  echo "buf_check: no buf on PATH (deploy/local/install-deps.sh installs it)" >&2
  exit 1
fi
echo "buf_check: $("$buf" --version 2>&1 | head -1) on $api"

# Run from inside the module so buf takes api/buf.yaml as the module's
# configuration (a path below the working directory would be read as a
# subdirectory of a module rooted there).
cd "$api"
"$buf" lint
echo "buf_check: lint passed"

skip_breaking() {
  echo "buf_check: buf breaking NOT run: $1"
  exit 0
}

command -v git >/dev/null 2>&1 || skip_breaking "git is not installed"
git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
  skip_breaking "$root is not a git checkout"
if ! git -C "$root" rev-parse --verify --quiet 'HEAD~1^{commit}' >/dev/null; then
  if [ "$(git -C "$root" rev-parse --is-shallow-repository)" = true ]; then
    skip_breaking "shallow clone without HEAD~1 (clone or fetch with --depth=2 or more)"
  fi
  skip_breaking "HEAD is the repository's first commit"
fi
previous=$(git -C "$root" rev-parse --short HEAD~1)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$root" archive HEAD~1 api | tar -x -C "$work"
[ -d "$work/api/wsched/v1" ] || skip_breaking "commit $previous has no api/wsched/v1"

# The previous commit is read with today's buf.yaml, so both sides have the
# same module layout (api/grpc/ excluded) even before buf.yaml existed.
"$buf" breaking --against "$work/api" --against-config buf.yaml
echo "buf_check: no breaking change against $previous"
