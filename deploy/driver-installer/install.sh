#!/usr/bin/env bash
# wsched's example NVIDIA driver installer: the default command of the image
# deploy/driver-installer/Containerfile makes, run under the installer
# contract (docs/agent.md "The installer contract") by the node's agent
# (podman) or by a Kubernetes Job (deploy/actuators/driver-install-kubernetes-job.sh).
#
# It builds the kernel modules on the node, from the distribution's kernel
# headers and NVIDIA's own installer (the .run file, downloaded at run time
# from WSCHED_NVIDIA_INSTALLER_URL: NVIDIA's licence does not allow shipping
# its binaries in an image), and keeps what it built in the driver cache,
# keyed by driver, kernel and OS:
#
#   $WSCHED_DRIVER_CACHE/<driver>/<kernel>/<os>/
#     modules/     nvidia.ko, nvidia-uvm.ko, nvidia-modeset.ko, ...
#     userspace/   what NVIDIA's installer put below its prefix (bin/, lib64/)
#     firmware/    the GSP firmware (lib/firmware/nvidia/<driver>/)
#     info         who built it, when, from which installer
#     SHA256SUMS   every file above, checked before each use
#
# A hit installs that (no headers, no download, no compiler) and says
# "wsched-driver-cache: hit"; a miss builds it, stores it and says
# "wsched-driver-cache: miss". Either way it then loads the modules and exits
# 0 only when /sys/module/nvidia/version is WSCHED_DRIVER_VERSION.
#
# The cache is
#   - a directory (the contract's default: the host's --driver_cache, shared by
#     the pool's nodes over NFS or the like): an entry appears whole, by a
#     rename of a finished temporary directory beside it, and a lock file
#     (flock; on NFS that needs working locks, NFSv4 or lockd) keeps two nodes
#     from building the same key at once: the second waits and then finds the
#     first one's entry;
#   - an s3:// URL, with the aws CLI (optional: not in the image unless built
#     with --build-arg WITH_AWSCLI=1): one object <url>/<driver>/<kernel>/<os>.tar.gz
#     per key, read whole and written with one PUT, which S3 makes appear
#     whole; S3 has no lock, so two nodes that miss together both build, and
#     the last upload stays (both are complete). Another object store: put its
#     CLI where `aws s3 cp` is (WSCHED_AWS) or mount it as a directory;
#   - empty: no cache, every run builds (and says miss).
# A cache that cannot be written is not an error: the node still gets its
# driver, and the log says why nothing was stored.
#
# Settings (environment), beyond the contract's WSCHED_NODE, WSCHED_KERNEL,
# WSCHED_OS (or WSCHED_OS_ID + WSCHED_OS_VERSION), WSCHED_DRIVER_VERSION,
# WSCHED_DRIVER_CACHE and WSCHED_TIMEOUT_SECONDS:
#   WSCHED_NVIDIA_INSTALLER_URL     where to get NVIDIA's .run installer, needed
#                                   on a miss: https://, file:// or a path; "{version}"
#                                   is replaced by WSCHED_DRIVER_VERSION
#   WSCHED_NVIDIA_INSTALLER_SHA256  its sha256, checked when set
#   WSCHED_NVIDIA_INSTALLER_ARGS    more arguments for it, e.g. --kernel-module-type=open
#   WSCHED_NVIDIA_MODULES           modules to load, in order (default: nvidia nvidia-uvm nvidia-modeset)
#   WSCHED_NVIDIA_PREFIX            the host directory for the user-space files
#                                   (default /usr/local/nvidia, whose bin/ and lib64/
#                                   the agent's CDI spec reads)
#   WSCHED_HOST_ROOT                where the host's tree is (default /): /lib/modules,
#                                   /usr/src, /lib/firmware, the prefix and /sys are
#                                   below it (tests point it at a fake node's tree)
#   WSCHED_KERNEL_HEADERS           the headers' directory (default
#                                   <root>/usr/src/linux-headers-<kernel>); when missing,
#                                   linux-headers-<kernel> is installed with apt-get
#                                   on Debian and Ubuntu
#   WSCHED_MODPROBE, WSCHED_DEPMOD, WSCHED_MODINFO, WSCHED_APT_GET, WSCHED_AWS
#                                   the commands used (tests put stand-ins there)
# The host's /lib/modules and /usr/src are the contract's mounts; this
# installer also writes the host's /lib/firmware (the GSP firmware the module
# loads) and the prefix: mount both from the host too (docs/agent.md).
set -euo pipefail

prog=wsched-driver-install
say() { echo "$prog: $*"; }
die() {
  echo "$prog: error: $*" >&2
  exit 1
}

# --- the timeout: this script runs again below `timeout`, which ends its
# whole process group (the build included) a little before the runtime
# kills the container, so that the log says what happened.
if [[ -n "${WSCHED_TIMEOUT_SECONDS:-}" && -z "${WSCHED_INSTALL_DEADLINE:-}" ]]; then
  [[ "$WSCHED_TIMEOUT_SECONDS" =~ ^[1-9][0-9]*$ ]] ||
    die "WSCHED_TIMEOUT_SECONDS=$WSCHED_TIMEOUT_SECONDS is not a number of seconds"
  total=$WSCHED_TIMEOUT_SECONDS
  margin=$((total / 10 < 30 ? total / 10 : 30))
  own=$((total - margin))
  WSCHED_INSTALL_DEADLINE=$(($(date +%s) + own))
  export WSCHED_INSTALL_DEADLINE
  rc=0
  timeout --kill-after=5 "$own" "$BASH" "$0" "$@" || rc=$?
  if ((rc == 124 || rc == 137)); then
    echo "$prog: error: timed out after ${own}s (WSCHED_TIMEOUT_SECONDS=$total, less a margin to report it)" >&2
  fi
  exit "$rc"
fi
# Seconds left before the deadline (a day when there is none), at least 1.
remaining() {
  if [[ -z "${WSCHED_INSTALL_DEADLINE:-}" ]]; then
    echo 86400
    return
  fi
  local left=$((WSCHED_INSTALL_DEADLINE - $(date +%s)))
  echo $((left > 1 ? left : 1))
}

# --- the contract's environment ---------------------------------------------------------
: "${WSCHED_KERNEL:?not set: run this under the installer contract (docs/agent.md)}"
: "${WSCHED_DRIVER_VERSION:?not set: run this under the installer contract (docs/agent.md)}"
KERNEL=$WSCHED_KERNEL
VERSION=$WSCHED_DRIVER_VERSION
OS=${WSCHED_OS:-${WSCHED_OS_ID:-}${WSCHED_OS_VERSION:-}}
[[ -n "$OS" ]] || die "WSCHED_OS (or WSCHED_OS_ID and WSCHED_OS_VERSION) is not set"
NODE=${WSCHED_NODE:-$(hostname)}
CACHE=${WSCHED_DRIVER_CACHE:-}
# Each is a path component of the cache key.
for part in "$KERNEL" "$VERSION" "$OS"; do
  [[ "$part" =~ ^[A-Za-z0-9][A-Za-z0-9._+~-]*$ ]] || die "'$part' cannot be part of a cache key"
done
KEY=$VERSION/$KERNEL/$OS
safe_node=${NODE//[^A-Za-z0-9._-]/_}

ROOT=${WSCHED_HOST_ROOT:-/}
R=${ROOT%/} # "" for the real root, so that "$R/lib/modules" is /lib/modules.
PREFIX=${WSCHED_NVIDIA_PREFIX:-/usr/local/nvidia}
[[ "$PREFIX" == /* ]] || die "WSCHED_NVIDIA_PREFIX=$PREFIX is not an absolute path"
HEADERS=${WSCHED_KERNEL_HEADERS:-$R/usr/src/linux-headers-$KERNEL}
MODULE_DIR=$R/lib/modules/$KERNEL/updates/nvidia
FIRMWARE_DIR=$R/lib/firmware/nvidia/$VERSION
SYS_MODULE=$R/sys/module
read -r -a MODULES <<<"${WSCHED_NVIDIA_MODULES:-nvidia nvidia-uvm nvidia-modeset}"
read -r -a MODPROBE <<<"${WSCHED_MODPROBE:-modprobe}"
read -r -a DEPMOD <<<"${WSCHED_DEPMOD:-depmod}"
read -r -a MODINFO <<<"${WSCHED_MODINFO:-modinfo}"
read -r -a APT_GET <<<"${WSCHED_APT_GET:-apt-get}"
read -r -a AWS <<<"${WSCHED_AWS:-aws}"
read -r -a EXTRA_ARGS <<<"${WSCHED_NVIDIA_INSTALLER_ARGS:-}"
# Where NVIDIA's installer puts the GSP firmware (a fixed path); copied into
# the cache entry from there.
FIRMWARE_SOURCE=${WSCHED_NVIDIA_FIRMWARE_SOURCE:-/lib/firmware/nvidia}/$VERSION

WORK=$(mktemp -d "${TMPDIR:-/tmp}/$prog.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

say "node $NODE: driver $VERSION for kernel $KERNEL on $OS (cache: ${CACHE:-none})"

# --- a cache entry ------------------------------------------------------------------------

# valid DIR: DIR is a whole entry whose files match its SHA256SUMS.
valid() {
  [[ -f "$1/SHA256SUMS" && -f "$1/modules/nvidia.ko" ]] &&
    (cd "$1" && sha256sum --quiet --strict -c SHA256SUMS >/dev/null 2>&1)
}

# seal DIR: writes DIR/info and DIR/SHA256SUMS (every other file).
seal() {
  local url=${WSCHED_NVIDIA_INSTALLER_URL:-}
  {
    echo "key: $KEY"
    echo "built_on: $NODE"
    echo "built_at: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "installer: ${url%%\?*}"
    echo "prefix: $PREFIX"
  } >"$1/info"
  (cd "$1" && find . -type f ! -name SHA256SUMS -print0 | sort -z | xargs -0 sha256sum) \
    >"$WORK/SHA256SUMS"
  mv "$WORK/SHA256SUMS" "$1/SHA256SUMS"
}

# --- the build (a miss) -------------------------------------------------------------------

ensure_headers() {
  [[ -d "$HEADERS" ]] && return
  case "${WSCHED_OS_ID:-${OS%%[0-9]*}}" in
    debian | ubuntu)
      if command -v "${APT_GET[0]}" >/dev/null 2>&1; then
        say "no kernel headers at $HEADERS: installing linux-headers-$KERNEL"
        DEBIAN_FRONTEND=noninteractive "${APT_GET[@]}" -q update >/dev/null ||
          die "apt-get update failed"
        DEBIAN_FRONTEND=noninteractive "${APT_GET[@]}" -q install -y --no-install-recommends \
          "linux-headers-$KERNEL" || die "apt-get could not install linux-headers-$KERNEL"
      fi
      ;;
  esac
  [[ -d "$HEADERS" ]] || die "no kernel headers for $KERNEL at $HEADERS: install" \
    "linux-headers-$KERNEL on the node (its /usr/src is mounted) or make it installable here"
}

fetch_installer() {
  local dest=$1 url=${WSCHED_NVIDIA_INSTALLER_URL:-} placeholder='{version}'
  [[ -n "$url" ]] || die "WSCHED_NVIDIA_INSTALLER_URL is not set: a cache miss needs NVIDIA's installer"
  url=${url//"$placeholder"/$VERSION}
  say "downloading NVIDIA's installer from ${url%%\?*}"
  case "$url" in
    /*) cp -- "$url" "$dest" || die "cannot read $url" ;;
    *://*)
      curl -fsSL --retry 3 --connect-timeout 30 --max-time "$(remaining)" -o "$dest" "$url" ||
        die "cannot download ${url%%\?*}"
      ;;
    *) die "WSCHED_NVIDIA_INSTALLER_URL=$url is neither a URL nor an absolute path" ;;
  esac
  if [[ -n "${WSCHED_NVIDIA_INSTALLER_SHA256:-}" ]]; then
    echo "$WSCHED_NVIDIA_INSTALLER_SHA256  $dest" | sha256sum --quiet -c - ||
      die "NVIDIA's installer does not match WSCHED_NVIDIA_INSTALLER_SHA256"
  fi
}

# build STAGE: NVIDIA's installer builds the modules for KERNEL into
# STAGE/modules and puts its user-space files below STAGE/userspace (they
# land in the host's prefix when installed); the firmware is copied to
# STAGE/firmware.
build() {
  local stage=$1 run=$WORK/nvidia-installer.run log=$WORK/nvidia-installer.log rc=0
  ensure_headers
  fetch_installer "$run"
  mkdir -p "$stage/modules" "$stage/userspace" "$stage/firmware" "$WORK/tmp" "$WORK/discard"
  say "building driver $VERSION for kernel $KERNEL with NVIDIA's installer (headers: $HEADERS)"
  local args=(
    --accept-license --no-questions --ui=none
    --kernel-name="$KERNEL" --kernel-source-path="$HEADERS"
    --kernel-install-path="$stage/modules" --no-kernel-module-source --skip-module-load
    --utility-prefix="$stage/userspace" --utility-libdir=lib64
    --opengl-prefix="$stage/userspace" --opengl-libdir=lib64
    --installer-prefix="$WORK/discard" --documentation-prefix="$WORK/discard"
    --x-prefix="$WORK/discard"
    --no-nouveau-check --no-x-check --no-systemd --no-distro-scripts --no-rpms --no-backup
    --no-check-for-alternate-installs --no-install-compat32-libs
    --log-file-name="$log" --tmpdir="$WORK/tmp"
  )
  sh "$run" "${args[@]}" "${EXTRA_ARGS[@]}" || rc=$?
  if ((rc != 0)); then
    if [[ -s "$log" ]]; then
      echo "--- the last 30 lines of NVIDIA's installer log:"
      tail -n 30 "$log"
    fi
    die "NVIDIA's installer failed (exit status $rc) building driver $VERSION for kernel $KERNEL"
  fi
  [[ -f "$stage/modules/nvidia.ko" ]] || die "NVIDIA's installer built no nvidia.ko in $stage/modules"
  # What goes into the cache must be what the key says.
  local built
  built=$("${MODINFO[@]}" -F version "$stage/modules/nvidia.ko") || die "modinfo cannot read the built nvidia.ko"
  [[ "$built" == "$VERSION" ]] || die "NVIDIA's installer built driver $built, not $VERSION"
  if [[ -d "$FIRMWARE_SOURCE" ]]; then
    cp -a "$FIRMWARE_SOURCE/." "$stage/firmware/"
  fi
  seal "$stage"
  say "built driver $VERSION for kernel $KERNEL"
}

# --- the cache ----------------------------------------------------------------------------

# dir_cache STAGE: sets SOURCE to a valid entry for KEY in the directory
# cache, building it into STAGE and storing it on a miss. Says hit or miss.
dir_cache() {
  local stage=$1 parent=$CACHE/$VERSION/$KERNEL entry=$CACHE/$KEY lock_fd
  if valid "$entry"; then
    echo "wsched-driver-cache: hit"
    SOURCE=$entry
    return
  fi
  if ! mkdir -p "$parent" 2>"$WORK/store.err" || ! { exec {lock_fd}>>"$parent/.$OS.lock"; } 2>"$WORK/store.err"; then
    say "cache $CACHE cannot be written ($(tail -n 1 "$WORK/store.err")): building without it"
    echo "wsched-driver-cache: miss"
    build "$stage"
    SOURCE=$stage
    return
  fi
  # One build per key: a node that finds the lock taken waits for it, then
  # finds the finished entry.
  if ! flock -n "$lock_fd"; then
    say "another node builds $KEY: waiting for it (at most $(remaining)s)"
    flock -w "$(remaining)" "$lock_fd" || die "waited for another node's build of $KEY until the timeout"
  fi
  if valid "$entry"; then
    flock -u "$lock_fd"
    echo "wsched-driver-cache: hit"
    SOURCE=$entry
    return
  fi
  [[ -e "$entry" ]] && say "cache entry $entry is incomplete or damaged: building it again"
  echo "wsched-driver-cache: miss"
  build "$stage"
  SOURCE=$stage
  # Stored whole or not at all: copied beside the entry, then renamed onto it.
  local tmp="$parent/.tmp-$OS-$safe_node-$$" stale="$parent/.stale-$OS-$safe_node-$$"
  if mkdir "$tmp" 2>"$WORK/store.err" && cp -a "$stage/." "$tmp/" 2>"$WORK/store.err"; then
    if [[ -e "$entry" ]]; then
      mv -T "$entry" "$stale" 2>>"$WORK/store.err" && rm -rf "$stale"
    fi
    if mv -T "$tmp" "$entry" 2>>"$WORK/store.err"; then
      say "stored in the cache: $entry"
    else
      say "not stored in the cache: $(tail -n 1 "$WORK/store.err")"
    fi
  else
    say "not stored in the cache: $(tail -n 1 "$WORK/store.err")"
  fi
  rm -rf "$tmp"
  flock -u "$lock_fd"
}

# s3_cache STAGE: the same with one object per key (the aws CLI).
s3_cache() {
  local stage=$1 object=${CACHE%/}/$KEY.tar.gz
  command -v "${AWS[0]}" >/dev/null 2>&1 ||
    die "WSCHED_DRIVER_CACHE=$CACHE needs the aws CLI (build the image with WITH_AWSCLI=1)"
  if "${AWS[@]}" s3 cp --only-show-errors "$object" "$WORK/entry.tar.gz" >"$WORK/aws.log" 2>&1; then
    mkdir -p "$WORK/entry"
    if tar -xzf "$WORK/entry.tar.gz" -C "$WORK/entry" && valid "$WORK/entry"; then
      echo "wsched-driver-cache: hit"
      SOURCE=$WORK/entry
      return
    fi
    say "cache object $object is damaged: building it again"
  elif ! grep -qiE '404|not found|does not exist|NoSuchKey' "$WORK/aws.log"; then
    say "cannot read the cache: $(tail -n 1 "$WORK/aws.log")"
  fi
  echo "wsched-driver-cache: miss"
  build "$stage"
  SOURCE=$stage
  if tar -czf "$WORK/upload.tar.gz" -C "$stage" . &&
    "${AWS[@]}" s3 cp --only-show-errors "$WORK/upload.tar.gz" "$object" >"$WORK/aws.log" 2>&1; then
    say "stored in the cache: $object"
  else
    say "not stored in the cache: $(tail -n 1 "$WORK/aws.log")"
  fi
}

# --- install and load ---------------------------------------------------------------------

# install_from ENTRY: the modules below the kernel's updates/, the user-space
# files below the prefix, the firmware; then depmod.
install_from() {
  local stage=$1 ko where="$MODULE_DIR, $R$PREFIX"
  mkdir -p "$MODULE_DIR" "$R$PREFIX"
  for ko in "$stage"/modules/*.ko; do
    # A new file, never one rewritten in place (the loaded module and
    # running programs keep theirs).
    cp --remove-destination "$ko" "$MODULE_DIR/"
  done
  cp -a --remove-destination "$stage/userspace/." "$R$PREFIX/"
  if [[ -n "$(ls -A "$stage/firmware" 2>/dev/null)" ]]; then
    mkdir -p "$FIRMWARE_DIR"
    cp -a --remove-destination "$stage/firmware/." "$FIRMWARE_DIR/"
    where+=", $FIRMWARE_DIR"
  fi
  local base=()
  [[ -n "$R" ]] && base=(-b "$R")
  "${DEPMOD[@]}" "${base[@]}" "$KERNEL" || die "depmod failed for kernel $KERNEL"
  say "installed driver $VERSION: $where"
}

loaded_version() {
  cat "$SYS_MODULE/nvidia/version" 2>/dev/null || true
}

load() {
  local loaded mod dirname=()
  [[ -n "$R" ]] && dirname=(-d "$R")
  loaded=$(loaded_version)
  if [[ -n "$loaded" && "$loaded" != "$VERSION" ]]; then
    say "driver $loaded is loaded: unloading it"
    local names=()
    for mod in nvidia_drm nvidia_peermem nvidia_modeset nvidia_uvm nvidia; do
      [[ -d "$SYS_MODULE/$mod" ]] && names+=("$mod")
    done
    "${MODPROBE[@]}" "${dirname[@]}" -r "${names[@]}" ||
      die "driver $loaded is loaded and in use: stop what uses the GPUs (nvidia-persistenced, workloads) or reboot"
  fi
  for mod in "${MODULES[@]}"; do
    "${MODPROBE[@]}" "${dirname[@]}" -S "$KERNEL" "$mod" || die "modprobe $mod failed"
  done
  loaded=$(loaded_version)
  [[ "$loaded" == "$VERSION" ]] ||
    die "the loaded driver is ${loaded:-none}, not $VERSION ($SYS_MODULE/nvidia/version)"
  say "driver $VERSION loaded for kernel $KERNEL"
}

stage=$WORK/stage
mkdir -p "$stage"
SOURCE=
case "$CACHE" in
  "")
    echo "wsched-driver-cache: miss"
    build "$stage"
    SOURCE=$stage
    ;;
  s3://*) s3_cache "$stage" ;;
  /*) dir_cache "$stage" ;;
  *) die "WSCHED_DRIVER_CACHE=$CACHE is neither a directory nor an s3:// URL" ;;
esac
install_from "$SOURCE"
load
