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
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
