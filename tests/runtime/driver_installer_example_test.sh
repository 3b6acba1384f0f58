#!/usr/bin/env bash
# The example driver installer (deploy/driver-installer/install.sh) run for
# real against fake node trees:
#   driver_installer_example_test.sh SOURCE_DIR
#
# Everything install.sh does runs, except what needs a GPU and NVIDIA's
# files: NVIDIA's .run installer is a small shell script here (served from a
# file:// URL or a path) that "builds" modules naming their version and
# kernel and writes user-space files and firmware where the real one's
# options tell it to; modprobe, depmod, modinfo, apt-get and aws are
# stand-ins that act on the fake tree (modprobe "loads" by writing the
# tree's sys/module/nvidia/version from the installed .ko that depmod
# listed). Checked:
#   - a first node misses, builds (NVIDIA's installer with the contract's
#     kernel, its headers, --no-questions --ui=none), fills the cache, loads;
#   - a second node with the same key hits: no build, no headers, no
#     download; a different kernel misses; two nodes missing at once build
#     once (the lock), the other hits;
#   - a failing build exits non-zero with its output's tail and stores
#     nothing; a driver of another version after the load fails; so do a
#     build of the wrong version, an old driver in use, a timeout, a bad
#     checksum, missing headers apt-get cannot install;
#   - a damaged cache entry is built again; headers missing on a miss come
#     from apt-get; an s3:// cache through the aws CLI; no cache at all.
# The Containerfile is checked for what it must (not) hold. Needs bash,
# coreutils, util-linux (flock) and curl; no root, no podman, no GPU.
set -euo pipefail

SRC=${1:?usage: driver_installer_example_test.sh SOURCE_DIR}
INSTALL=$SRC/deploy/driver-installer/install.sh
CONTAINERFILE=$SRC/deploy/driver-installer/Containerfile
DRIVER=550.54.15
K1=6.1.0-18-amd64
K2=6.1.0-20-amd64
OS=debian12

WORK=$(mktemp -d /tmp/wsched-driver-installer-test-XXXXXX)
trap '[[ -n "${KEEP:-}" ]] || rm -rf "$WORK"' EXIT
passed=0
failed=0
pass() {
  echo "ok: $1"
  passed=$((passed + 1))
}
fail() {
  echo "FAIL: $1" >&2
  failed=$((failed + 1))
}
expect() { # expect DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}

# --- stand-ins --------------------------------------------------------------------------
BIN=$WORK/bin
mkdir -p "$BIN" "$WORK/firmware-source"
CALLS=$WORK/calls # one line per stand-in call

# NVIDIA's installer: parses the options install.sh passes, fails as the
# real one does without a kernel source tree, then writes what it builds.
# FAKE_BUILD_FAIL=1: a compile error; FAKE_BUILD_VERSION: builds another
# version; FAKE_BUILD_SLEEP: seconds the "build" takes.
cat >"$WORK/NVIDIA-Linux-x86_64-$DRIVER.run" <<'EOF_RUN'
#!/bin/sh
set -eu
version=550.54.15
echo "build $* " >>"$FAKE_CALLS"
src= modules= uprefix= ulibdir=lib log= kname=
for arg; do
  case $arg in
    --kernel-source-path=*) src=${arg#*=} ;;
    --kernel-install-path=*) modules=${arg#*=} ;;
    --utility-prefix=*) uprefix=${arg#*=} ;;
    --utility-libdir=*) ulibdir=${arg#*=} ;;
    --log-file-name=*) log=${arg#*=} ;;
    --kernel-name=*) kname=${arg#*=} ;;
  esac
done
echo "Verifying archive integrity... OK"
echo "nvidia-installer: building kernel modules for $kname"
[ -n "$log" ] && echo "nvidia-installer log: building for $kname from $src" >"$log"
if [ ! -f "$src/Makefile" ]; then
  echo "ERROR: Unable to find the kernel source tree for the currently running kernel."
  exit 1
fi
sleep "${FAKE_BUILD_SLEEP:-0}"
if [ "${FAKE_BUILD_FAIL:-0}" = 1 ]; then
  echo "  CC [M]  nvidia/nv.o" | tee -a "$log"
  echo "nvidia/nv.c:1234: error: implicit declaration of function 'drm_gem_object_free'" | tee -a "$log"
  echo "make[1]: *** [scripts/Makefile.build:250: nvidia/nv.o] Error 1" >>"$log"
  echo "ERROR: An error occurred while performing the step: \"Building kernel modules\"."
  exit 1
fi
v=${FAKE_BUILD_VERSION:-$version}
mkdir -p "$modules" "$uprefix/bin" "$uprefix/$ulibdir" "$FAKE_FIRMWARE/$v"
for m in nvidia nvidia-uvm nvidia-modeset nvidia-drm; do
  printf 'fake %s.ko\nversion=%s\nvermagic=%s\n' "$m" "$v" "$kname" >"$modules/$m.ko"
done
printf '#!/bin/sh\necho "NVIDIA-SMI %s"\n' "$v" >"$uprefix/bin/nvidia-smi"
chmod 755 "$uprefix/bin/nvidia-smi"
echo "libcuda $v" >"$uprefix/$ulibdir/libcuda.so.$v"
ln -sf "libcuda.so.$v" "$uprefix/$ulibdir/libcuda.so.1"
echo "gsp $v" >"$FAKE_FIRMWARE/$v/gsp_ga10x.bin"
echo "Installation of the NVIDIA Accelerated Graphics Driver for Linux-x86_64 (version: $v) is now complete."
EOF_RUN

# modprobe [-d ROOT] [-S KERNEL] NAME | [-d ROOT] -r NAME...: loads what
# modules.dep lists below ROOT (a module built for another kernel is
# refused), as the kernel would, into ROOT/sys/module. FAKE_IN_USE=1: -r
# fails; FAKE_LOADS=VERSION: the kernel ends up with that version instead.
cat >"$BIN/modprobe" <<'EOF_SH'
#!/bin/bash
set -euo pipefail
root= kernel=$(uname -r) remove=0
while [[ $# -gt 0 ]]; do
  case $1 in
    -d) root=$2; shift 2 ;;
    -S) kernel=$2; shift 2 ;;
    -r) remove=1; shift ;;
    *) break ;;
  esac
done
echo "modprobe root=$root kernel=$kernel remove=$remove $*" >>"$FAKE_CALLS"
sys=$root/sys/module
if ((remove)); then
  [[ "${FAKE_IN_USE:-0}" == 1 ]] && { echo "modprobe: FATAL: Module nvidia is in use." >&2; exit 1; }
  for m; do rm -rf "${sys:?}/$m"; done
  exit 0
fi
name=$1
dep=$root/lib/modules/$kernel/modules.dep
path=$(grep -E "(^|/)$name\.ko:" "$dep" 2>/dev/null | head -n 1 | cut -d: -f1) || true
[[ -n "$path" ]] || { echo "modprobe: FATAL: Module $name not found in directory $root/lib/modules/$kernel" >&2; exit 1; }
ko=$root/lib/modules/$kernel/$path
grep -qx "vermagic=$kernel" "$ko" || { echo "modprobe: ERROR: could not insert '$name': Exec format error" >&2; exit 1; }
mod=${name//-/_}
mkdir -p "$sys/$mod"
if [[ $mod == nvidia ]]; then
  [[ -f "$sys/nvidia/version" ]] && exit 0  # already loaded: modprobe does nothing
  version=$(sed -n 's/^version=//p' "$ko")
  echo "${FAKE_LOADS:-$version}" >"$sys/nvidia/version"
fi
EOF_SH
# depmod [-b ROOT] KERNEL: modules.dep of ROOT/lib/modules/KERNEL.
cat >"$BIN/depmod" <<'EOF_SH'
#!/bin/bash
set -euo pipefail
root=
[[ $1 == -b ]] && { root=$2; shift 2; }
echo "depmod root=$root $*" >>"$FAKE_CALLS"
cd "$root/lib/modules/$1"
find . -name '*.ko' | sed 's|^\./||; s|$|:|' | sort >modules.dep
EOF_SH
# modinfo -F version FILE.
cat >"$BIN/modinfo" <<'EOF_SH'
#!/bin/bash
[[ $1 == -F && $2 == version ]] || exit 2
sed -n 's/^version=//p' "$3"
EOF_SH
# apt-get update | install ... linux-headers-K: the headers appear below
# WSCHED_HOST_ROOT when K is in FAKE_APT_HEADERS.
cat >"$BIN/apt-get" <<'EOF_SH'
#!/bin/bash
echo "apt-get $*" >>"$FAKE_CALLS"
[[ " $* " == *" update "* ]] && exit 0
pkg=${*: -1}
kernel=${pkg#linux-headers-}
if [[ " ${FAKE_APT_HEADERS:-} " == *" $kernel "* ]]; then
  mkdir -p "$WSCHED_HOST_ROOT/usr/src/$pkg"
  echo "obj-m := fake" >"$WSCHED_HOST_ROOT/usr/src/$pkg/Makefile"
  echo "Setting up $pkg ..."
  exit 0
fi
echo "E: Unable to locate package $pkg" >&2
exit 100
EOF_SH
# aws s3 cp [--only-show-errors] SRC DST, with s3://BUCKET/KEY below $FAKE_S3.
cat >"$BIN/aws" <<'EOF_SH'
#!/bin/bash
set -euo pipefail
echo "aws $*" >>"$FAKE_CALLS"
[[ $1 == s3 && $2 == cp ]] || exit 2
shift 2
[[ $1 == --only-show-errors ]] && shift
src=$1 dst=$2
if [[ $src == s3://* ]]; then
  f=$FAKE_S3/${src#s3://}
  [[ -f $f ]] || { echo "fatal error: An error occurred (404) when calling the HeadObject operation: Key \"${src#s3://*/}\" does not exist" >&2; exit 1; }
  cp "$f" "$dst"
else
  f=$FAKE_S3/${dst#s3://}
  mkdir -p "$(dirname "$f")"
  cp "$src" "$f.part" && mv "$f.part" "$f"
fi
EOF_SH
chmod 755 "$BIN"/*

export FAKE_CALLS=$CALLS FAKE_FIRMWARE=$WORK/firmware-source FAKE_S3=$WORK/s3
touch "$CALLS"
builds() { grep -c '^build ' "$CALLS" || true; }

# node NAME KERNEL [noheaders]: a fake node tree with that kernel's modules
# directory and (unless noheaders) its headers.
node() {
  local tree=$WORK/nodes/$1
  mkdir -p "$tree/lib/modules/$2/kernel" "$tree/sys/module" "$tree/usr/src"
  if [[ "${3:-}" != noheaders ]]; then
    mkdir -p "$tree/usr/src/linux-headers-$2"
    echo "obj-m := fake" >"$tree/usr/src/linux-headers-$2/Makefile"
  fi
  echo "$tree"
}
CACHE=$WORK/cache
# run NAME KERNEL [VAR=VALUE...]: install.sh for node NAME; its output in
# $WORK/NAME.out, its exit status in $WORK/NAME.rc.
run() {
  local name=$1 kernel=$2 tree=$WORK/nodes/$1 rc=0
  shift 2
  env PATH="$BIN:$PATH" WSCHED_NODE="$name" WSCHED_KERNEL="$kernel" WSCHED_OS="$OS" \
    WSCHED_OS_ID=debian WSCHED_OS_VERSION=12 WSCHED_DRIVER_VERSION="$DRIVER" \
    WSCHED_IMAGE="localhost/driver:550-$kernel-$OS" WSCHED_DRIVER_CACHE="$CACHE" \
    WSCHED_TIMEOUT_SECONDS=120 WSCHED_HOST_ROOT="$tree" \
    WSCHED_NVIDIA_INSTALLER_URL="file://$WORK/NVIDIA-Linux-x86_64-{version}.run" \
    WSCHED_NVIDIA_FIRMWARE_SOURCE="$FAKE_FIRMWARE" "$@" \
    bash "$INSTALL" >"$WORK/$name.out" 2>&1 || rc=$?
  echo "$rc" >"$WORK/$name.rc"
  return 0
}
rc_of() { cat "$WORK/$1.rc"; }
said() { grep -qF -- "$2" "$WORK/$1.out"; }
cache_lines() { grep -c '^wsched-driver-cache: ' "$WORK/$1.out" || true; }
loaded() { cat "$WORK/nodes/$1/sys/module/nvidia/version" 2>/dev/null || true; }
show() { sed 's/^/    | /' "$WORK/$1.out" >&2; }
# succeeded NAME hit|miss: exit 0, one cache line saying so, the driver loaded.
succeeded() {
  local name=$1 want=$2
  if [[ $(rc_of "$name") == 0 && $(cache_lines "$name") == 1 ]] &&
    said "$name" "wsched-driver-cache: $want" && [[ $(loaded "$name") == "$DRIVER" ]]; then
    pass "$name: exit 0, cache $want, driver $DRIVER loaded"
  else
    fail "$name: want exit 0, cache $want and driver $DRIVER loaded; exit $(rc_of "$name"), loaded '$(loaded "$name")'"
    show "$name"
  fi
}
# failed NAME MESSAGE: a non-zero exit whose output says MESSAGE.
failed() {
  if [[ $(rc_of "$1") != 0 ]] && said "$1" "$2"; then
    pass "$1: fails with '$2'"
  else
    fail "$1: want a failure saying '$2'; exit $(rc_of "$1")"
    show "$1"
  fi
}
entry_valid() { [[ -f "$1/SHA256SUMS" ]] && (cd "$1" && sha256sum --quiet --strict -c SHA256SUMS); }
no_leftovers() { [[ -z "$(find "$CACHE" -name '.tmp-*' -o -name '.stale-*' 2>/dev/null)" ]]; }

# --- 1. the first node misses and builds ------------------------------------------------
tree_a=$(node node-a "$K1")
run node-a "$K1"
succeeded node-a miss
expect "node-a: NVIDIA's installer ran once" [ "$(builds)" == 1 ]
build_args=$(grep '^build ' "$CALLS" | head -n 1)
for arg in --accept-license --no-questions --ui=none "--kernel-name=$K1" \
  "--kernel-source-path=$tree_a/usr/src/linux-headers-$K1" --skip-module-load; do
  expect "node-a: NVIDIA's installer got $arg" grep -qF -- " $arg " <<<"$build_args"
done
entry=$CACHE/$DRIVER/$K1/$OS
expect "node-a: the cache holds $DRIVER/$K1/$OS, whole" entry_valid "$entry"
expect "node-a: the entry has the modules, user-space files and firmware" \
  test -f "$entry/modules/nvidia.ko" -a -f "$entry/modules/nvidia-uvm.ko" \
  -a -x "$entry/userspace/bin/nvidia-smi" -a -f "$entry/userspace/lib64/libcuda.so.$DRIVER" \
  -a -f "$entry/firmware/gsp_ga10x.bin"
expect "node-a: the entry says who built it" grep -qx "built_on: node-a" "$entry/info"
expect "node-a: installed below the node's /lib/modules, /usr/local/nvidia, /lib/firmware" \
  test -f "$tree_a/lib/modules/$K1/updates/nvidia/nvidia.ko" \
  -a -x "$tree_a/usr/local/nvidia/bin/nvidia-smi" -a -L "$tree_a/usr/local/nvidia/lib64/libcuda.so.1" \
  -a -f "$tree_a/lib/firmware/nvidia/$DRIVER/gsp_ga10x.bin"
expect "node-a: depmod ran for $K1 below the node's root" grep -qx "depmod root=$tree_a $K1" "$CALLS"
expect "node-a: nvidia, nvidia-uvm and nvidia-modeset loaded" \
  test -d "$tree_a/sys/module/nvidia_uvm" -a -d "$tree_a/sys/module/nvidia_modeset"
expect "node-a: no temporary directory left in the cache" no_leftovers

# --- 2. the same key on another node hits: no build, no headers, no download --------------
node node-b "$K1" noheaders >/dev/null
run node-b "$K1" WSCHED_NVIDIA_INSTALLER_URL=
succeeded node-b hit
expect "node-b: NVIDIA's installer did not run" [ "$(builds)" == 1 ]
expect "node-b: no apt-get (a hit needs no headers)" bash -c "! grep -q '^apt-get' '$CALLS'"
expect "node-b: installed from the cache" \
  cmp -s "$entry/modules/nvidia.ko" "$WORK/nodes/node-b/lib/modules/$K1/updates/nvidia/nvidia.ko"

# --- 3. a different kernel misses -------------------------------------------------------
node node-c "$K2" >/dev/null
run node-c "$K2" WSCHED_NVIDIA_INSTALLER_URL="$WORK/NVIDIA-Linux-x86_64-{version}.run"
succeeded node-c miss
expect "node-c: built for $K2 (a path as the installer's URL)" [ "$(builds)" == 2 ]
expect "node-c: its own cache entry" entry_valid "$CACHE/$DRIVER/$K2/$OS"

# --- 4. a failing build -----------------------------------------------------------------
K3=6.1.0-21-amd64
node node-d "$K3" >/dev/null
run node-d "$K3" FAKE_BUILD_FAIL=1
failed node-d "NVIDIA's installer failed (exit status 1)"
expect "node-d: the output has the build's own error" \
  said node-d "implicit declaration of function 'drm_gem_object_free'"
expect "node-d: the output has the tail of NVIDIA's installer log" \
  said node-d "make[1]: *** [scripts/Makefile.build:250: nvidia/nv.o] Error 1"
expect "node-d: it said miss" said node-d "wsched-driver-cache: miss"
expect "node-d: nothing cached for $K3" test ! -e "$CACHE/$DRIVER/$K3/$OS"
expect "node-d: no driver loaded" [ -z "$(loaded node-d)" ]
expect "node-d: no temporary directory left in the cache" no_leftovers
if tail -n 1 "$WORK/node-d.out" | grep -q "error: NVIDIA's installer failed"; then
  pass "node-d: the last line says what failed"
else
  fail "node-d: last line: $(tail -n 1 "$WORK/node-d.out")"
fi

# --- 5. the wrong driver after the load -------------------------------------------------
node node-e "$K1" >/dev/null
run node-e "$K1" FAKE_LOADS=535.104.05
failed node-e "the loaded driver is 535.104.05, not $DRIVER"
# An older driver loaded and in use.
node node-e2 "$K1" >/dev/null
mkdir -p "$WORK/nodes/node-e2/sys/module/nvidia" && echo 535.104.05 >"$WORK/nodes/node-e2/sys/module/nvidia/version"
run node-e2 "$K1" FAKE_IN_USE=1
failed node-e2 "driver 535.104.05 is loaded and in use"
# The same, not in use: unloaded, then the new one loaded.
node node-e3 "$K1" >/dev/null
mkdir -p "$WORK/nodes/node-e3/sys/module/nvidia" && echo 535.104.05 >"$WORK/nodes/node-e3/sys/module/nvidia/version"
run node-e3 "$K1"
succeeded node-e3 hit
expect "node-e3: the old driver was unloaded first" grep -q "modprobe root=$WORK/nodes/node-e3 .* remove=1 nvidia" "$CALLS"
# A build that makes another version is not cached.
K4=6.1.0-22-amd64
node node-e4 "$K4" >/dev/null
run node-e4 "$K4" FAKE_BUILD_VERSION=550.40.07
failed node-e4 "NVIDIA's installer built driver 550.40.07, not $DRIVER"
expect "node-e4: nothing cached" test ! -e "$CACHE/$DRIVER/$K4/$OS"

# --- 6. two nodes missing at once build once --------------------------------------------
K5=6.1.0-23-amd64
node node-f "$K5" >/dev/null
node node-g "$K5" >/dev/null
before=$(builds)
run node-f "$K5" FAKE_BUILD_SLEEP=3 &
first=$!
sleep 1
run node-g "$K5" FAKE_BUILD_SLEEP=3
wait "$first"
expect "node-f, node-g: one build for both" [ "$(($(builds) - before))" == 1 ]
if [[ $(rc_of node-f) == 0 && $(rc_of node-g) == 0 ]] &&
  [[ "$(cat "$WORK/node-f.out" "$WORK/node-g.out" | grep '^wsched-driver-cache:' | sort | tr '\n' ' ')" == \
    "wsched-driver-cache: hit wsched-driver-cache: miss " ]]; then
  pass "node-f, node-g: one miss, one hit, both installed"
else
  fail "node-f, node-g: want one miss and one hit"
  show node-f
  show node-g
fi
expect "node-g: waited for the other build" said node-g "another node builds $DRIVER/$K5/$OS"
expect "node-f, node-g: both loaded $DRIVER" [ "$(loaded node-f)$(loaded node-g)" == "$DRIVER$DRIVER" ]

# --- 7. a damaged entry is built again --------------------------------------------------
echo "damaged" >>"$entry/modules/nvidia-uvm.ko"
node node-h "$K1" >/dev/null
before=$(builds)
run node-h "$K1"
succeeded node-h miss
expect "node-h: the damaged entry was rebuilt" [ "$(($(builds) - before))" == 1 ]
expect "node-h: said so" said node-h "is incomplete or damaged: building it again"
expect "node-h: the entry is whole again" entry_valid "$entry"
expect "node-h: no stale directory left" no_leftovers

# --- 8. the timeout ---------------------------------------------------------------------
K6=6.1.0-24-amd64
node node-i "$K6" >/dev/null
start=$(date +%s)
run node-i "$K6" WSCHED_TIMEOUT_SECONDS=3 FAKE_BUILD_SLEEP=60
took=$(($(date +%s) - start))
failed node-i "timed out after 3s"
expect "node-i: ended within 10 s of a 3 s timeout (took ${took}s)" [ "$took" -le 10 ]
expect "node-i: nothing cached" test ! -e "$CACHE/$DRIVER/$K6/$OS"
# The lock was released with the killed build: the next node builds.
node node-i2 "$K6" >/dev/null
run node-i2 "$K6" WSCHED_TIMEOUT_SECONDS=20
succeeded node-i2 miss

# --- 9. headers: from apt-get when missing; a failure when apt-get has none --------------
K7=6.1.0-25-amd64
node node-j "$K7" noheaders >/dev/null
run node-j "$K7" FAKE_APT_HEADERS="$K7"
succeeded node-j miss
expect "node-j: apt-get installed linux-headers-$K7" grep -q "^apt-get .*install .*linux-headers-$K7" "$CALLS"
K8=6.1.0-26-amd64
node node-k "$K8" noheaders >/dev/null
run node-k "$K8"
failed node-k "apt-get could not install linux-headers-$K8"
expect "node-k: apt-get's own message is in the output" said node-k "E: Unable to locate package linux-headers-$K8"

# --- 10. the installer's checksum, the URL, the environment ------------------------------
K9=6.1.0-27-amd64
node node-l "$K9" >/dev/null
run node-l "$K9" WSCHED_NVIDIA_INSTALLER_SHA256=0000000000000000000000000000000000000000000000000000000000000000
failed node-l "does not match WSCHED_NVIDIA_INSTALLER_SHA256"
good_sum=$(sha256sum "$WORK/NVIDIA-Linux-x86_64-$DRIVER.run" | cut -d' ' -f1)
run node-l "$K9" WSCHED_NVIDIA_INSTALLER_SHA256="$good_sum"
succeeded node-l miss
node node-m "$K2" >/dev/null
run node-m "$K2" WSCHED_DRIVER_CACHE= WSCHED_NVIDIA_INSTALLER_URL=
failed node-m "WSCHED_NVIDIA_INSTALLER_URL is not set"
run node-m "$K2" WSCHED_DRIVER_VERSION=
failed node-m "WSCHED_DRIVER_VERSION: not set"
run node-m "$K2" WSCHED_DRIVER_CACHE=gs://bucket/drivers
failed node-m "is neither a directory nor an s3:// URL"
run node-m "$K2" WSCHED_KERNEL=../../etc
failed node-m "'../../etc' cannot be part of a cache key"

# --- 11. no cache: every run builds -----------------------------------------------------
before=$(builds)
run node-m "$K2" WSCHED_DRIVER_CACHE=
succeeded node-m miss
expect "node-m: built without a cache" [ "$(($(builds) - before))" == 1 ]

# --- 12. an s3:// cache -----------------------------------------------------------------
node node-n "$K1" >/dev/null
node node-o "$K1" noheaders >/dev/null
before=$(builds)
run node-n "$K1" WSCHED_DRIVER_CACHE=s3://drivers/wsched
succeeded node-n miss
expect "node-n: stored one object for the key" test -f "$FAKE_S3/drivers/wsched/$DRIVER/$K1/$OS.tar.gz"
run node-o "$K1" WSCHED_DRIVER_CACHE=s3://drivers/wsched WSCHED_NVIDIA_INSTALLER_URL=
succeeded node-o hit
expect "node-n, node-o: one build" [ "$(($(builds) - before))" == 1 ]
run node-o "$K1" WSCHED_DRIVER_CACHE=s3://drivers/wsched WSCHED_AWS=/nonexistent/aws
failed node-o "needs the aws CLI"

# --- 13. the image recipe ---------------------------------------------------------------
expect "Containerfile: a Debian base by default" grep -qx 'ARG BASE=debian:bookworm' "$CONTAINERFILE"
expect "Containerfile: the build tools and kmod" grep -qE 'build-essential kmod' "$CONTAINERFILE"
expect "Containerfile: install.sh is its command" \
  bash -c "grep -qx 'COPY install.sh /usr/local/bin/wsched-driver-install' '$CONTAINERFILE' &&
           grep -qx 'CMD \[\"/usr/local/bin/wsched-driver-install\"\]' '$CONTAINERFILE'"
expect "Containerfile: no NVIDIA file copied or downloaded into the image" \
  bash -c "! grep -vE '^\s*#' '$CONTAINERFILE' | grep -qiE '\.run\b|nvidia-linux|download\.nvidia|(^|\s)(ADD|COPY)\s.*nvidia'"
if command -v shellcheck >/dev/null; then
  expect "install.sh: shellcheck" shellcheck "$INSTALL"
fi

echo "$passed passed, $failed failed"
((failed == 0))
