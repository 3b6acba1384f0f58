#!/usr/bin/env bash
# GPU workspaces started by a real container runtime from wsched's answers.
#   runtime_test.sh WSCHEDCTL WSCHED_SERVER WSCHED_AGENT SOURCE_DIR WSCHED_CDI_HOOK
#
# Fake GPU nodes (copies of tests/sysfs/h100-8gpu with mknod-made device
# nodes, driver libraries built here as real shared objects, and the real
# wsched-cdi-hook), the real agent writing the node's CDI spec into
# /var/run/cdi, the real server placing workspaces on them, and podman (runc)
# starting each container with exactly the --device/--env arguments of the
# answer. Inside, the test looks for the workspace's own /dev/nvidiaN and no
# other GPU's, the control nodes, /dev/fuse, nvidia-smi,
# NVIDIA_VISIBLE_DEVICES, and asks the image's own dynamic linker for
# libcuda.so.1 and libnvidia-ml.so.1 by name (as CUDA programs do).
# The images carry the host's glibc in Debian's layout (/lib/<triplet>) or
# RHEL's (/usr/lib64), each with its own ld.so.cache; the nodes are laid out
# like Ubuntu (/usr/lib/<triplet>) or like Rocky 9 with multilib packages
# (64-bit libraries in /usr/lib64 and /usr/lib64/nvidia, 32-bit copies of the
# same names in /usr/lib and /usr/lib/nvidia).
# Also: NVIDIA's spec already on the node (wsched answers with its names and
# writes no second GPU spec), the CDI JSON schema, a driver upgrade, a node
# whose libraries belong to another driver (no workspace, the reason), and a
# node with MIG slices (tests/sysfs/h200-mig with the fake nvidia-smi), where
# a container started with one slice's CDI device, named as the node reports
# it, sees that slice's GPU and only that slice's two capability nodes; so
# does one started from a slice class's placement answer.
#
# Needs root (mknod, /var/run/cdi), podman and runc (deploy/local/install-deps.sh), gcc,
# and the test PostgreSQL on 127.0.0.1:55433 (the ctest "pg" fixture).
# Exits 77 (skipped) only where podman cannot run at all.
set -euo pipefail

CTL=${1:?usage: runtime_test.sh WSCHEDCTL WSCHED_SERVER WSCHED_AGENT SOURCE_DIR WSCHED_CDI_HOOK}
SERVER=${2:?wsched-server binary required}
AGENT=${3:?wsched-agent binary required}
SRC=${4:?source dir required}
HOOK=${5:?wsched-cdi-hook binary required}
# shellcheck source=../support/start_server.sh
source "$SRC/tests/support/start_server.sh"
PG=postgresql://postgres@127.0.0.1:${WSCHED_TEST_PG_PORT:-55433}
DB=runtime_test_$$
PY=/usr/bin/python3
SCHEMA=/usr/share/gocode/src/github.com/container-orchestrated-devices/container-device-interface/schema
CDI_DIR=/var/run/cdi
NVIDIA_SPEC=/etc/cdi/wsched-runtime-test-nvidia.yaml
OLD=550.54.15
NEW=560.35.03
LIB=usr/lib/x86_64-linux-gnu
IMAGE=localhost/wsched-runtime-test:debian-layout
IMAGE_LIB64=localhost/wsched-runtime-test:lib64-layout
ROCKY_KERNEL=5.14.0-427.13.1.el9_4.x86_64

ADMIN=admin-token-0123456789abcdef
CP=control-plane-token-0123456789
AGENT_TOKEN=agent-token-0123456789abcdef

skip() { echo "SKIPPED: $1" >&2; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "needs root: mknod for device nodes and the node's CDI directory $CDI_DIR"
command -v podman >/dev/null || skip "podman is not installed (deploy/local/install-deps.sh installs it)"
command -v runc >/dev/null || skip "runc is not installed"
[[ -x /bin/busybox ]] || skip "busybox-static is not installed (the container image is made from it)"
command -v gcc >/dev/null || skip "gcc is not installed (the driver libraries and the probe are built here)"

WORK=$(mktemp -d /tmp/wsched-runtime-test-XXXXXX)
export CONTAINERS_CONF=$WORK/containers.conf
PODMAN=(podman --root "$WORK/storage" --runroot "$WORK/run" --storage-driver vfs
        --runtime runc --cgroup-manager cgroupfs)
passed=0
failed=0
server_pid=

cleanup() {
  local rc=$?
  if [[ -n $server_pid ]]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -f "$CDI_DIR/wsched-gpu.json" "$CDI_DIR/wsched-device.json" "$NVIDIA_SPEC"
  wsched_end_test runtime_test "$rc"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pass() { echo "ok: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1" >&2; failed=$((failed + 1)); }
# expect NAME FILE TEXT: FILE contains the line TEXT.
expect() { if grep -qxF -- "$3" "$2"; then pass "$1"; else fail "$1: no line \"$3\" in $2"; sed 's/^/    | /' "$2" >&2; fi; }
# refute NAME FILE TEXT: no line of FILE contains TEXT.
refute() { if grep -qF -- "$3" "$2"; then fail "$1: \"$3\" in $2"; sed 's/^/    | /' "$2" >&2; else pass "$1"; fi; }
ctl() { local token=$1; shift; WSCHED_TOKEN=$token "$CTL" --server="$ADDR" "$@"; }

# --- real ELF files: the driver's libraries and a probe of the dynamic linker ---------
cat >"$WORK/fake-library.c" <<'EOF_C'
const char *wsched_fake_library(void) { return MARKER; }
EOF_C
cat >"$WORK/probe.c" <<'EOF_C'
/* probe NAME...: asks the dynamic linker for each library by name, as a CUDA
   program asks for libcuda.so.1, and prints where it was found and what it is. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    void *handle = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
      printf("unresolved %s: %s\n", argv[i], dlerror());
      continue;
    }
    struct link_map *map = NULL;
    char real[PATH_MAX];
    dlinfo(handle, RTLD_DI_LINKMAP, &map);
    const char *(*marker)(void) = (const char *(*)(void))dlsym(handle, "wsched_fake_library");
    printf("resolved %s %s -> %s: %s\n", argv[i], map->l_name,
           realpath(map->l_name, real) ? real : "?", marker ? marker() : "no marker");
  }
  return 0;
}
EOF_C
gcc -O1 -o "$WORK/probe" "$WORK/probe.c" || { echo "FAIL: building the probe" >&2; exit 1; }

# soname_of STEM: the soname of a driver library (server/agent/driver_files.cc).
soname_of() {
  case $1 in
    libcuda.so | libnvidia-ml.so | libnvidia-cfg.so | libnvidia-ptxjitcompiler.so) echo "$1.1" ;;
    libnvidia-nvvm.so) echo "$1.4" ;;
    libGLX_nvidia.so) echo "$1.0" ;;
    *) echo "" ;;
  esac
}
# make_lib FILE STEM VERSION [MARKER]: a real 64-bit shared object with the
# library's soname whose wsched_fake_library() returns MARKER.
make_lib() {
  local soname
  soname=$(soname_of "$2")
  gcc -shared -fPIC -O1 -Wl,-soname,"${soname:-$2.$3}" -DMARKER="\"${4:-fake $2 $3 64-bit}\"" \
    -o "$1" "$WORK/fake-library.c"
}
# make_lib32 FILE STEM VERSION: the same, marked as a 32-bit i386 file in its
# ELF header (class 1, machine 3), as a multilib node's copy would be.
make_lib32() {
  make_lib "$1" "$2" "$3" "fake $2 $3 32-bit copy"
  printf '\001' | dd of="$1" bs=1 seek=4 conv=notrunc status=none
  printf '\003\000' | dd of="$1" bs=1 seek=18 conv=notrunc status=none
}
# real_libs DIR VERSION: every fake library of VERSION in DIR becomes a real one.
real_libs() {
  local f stem
  for f in "$1"/*."$2"; do
    stem=$(basename "$f" ".$2")
    make_lib "$f" "$stem" "$2"
  done
}

# --- podman: images with glibc in both layouts, no network, no registry --------------
printf '[containers]\ndefault_ulimits = []\n' >"$CONTAINERS_CONF"
# glibc_image DIR LIBDIR: busybox, the host's glibc in LIBDIR (the linker
# reached through /lib64 as on both distributions), the probe, and the
# image's own ld.so.conf and ld.so.cache.
glibc_image() {
  local dir=$1 libdir=$2
  mkdir -p "$dir/bin" "$dir/etc/ld.so.conf.d" "$dir/tmp" "$dir$libdir" "$dir/lib64" "$dir/usr/local/bin"
  cp /bin/busybox "$dir/bin/"
  for tool in sh ls cat echo test true grep sed; do ln -s busybox "$dir/bin/$tool"; done
  cp -L /lib/x86_64-linux-gnu/libc.so.6 "$dir$libdir/"
  cp -L /lib64/ld-linux-x86-64.so.2 "$dir$libdir/"
  [[ $libdir == /lib64 ]] || ln -sf "$libdir/ld-linux-x86-64.so.2" "$dir/lib64/ld-linux-x86-64.so.2"
  echo 'include /etc/ld.so.conf.d/*.conf' >"$dir/etc/ld.so.conf"
  echo "$libdir" >"$dir/etc/ld.so.conf.d/libc.conf"
  cp "$WORK/probe" "$dir/usr/local/bin/probe"
  ldconfig -r "$dir"
}
glibc_image "$WORK/image" /lib/x86_64-linux-gnu
glibc_image "$WORK/image-lib64" /usr/lib64
if ! tar -C "$WORK/image" -c . | "${PODMAN[@]}" import - "$IMAGE" >"$WORK/podman-import.log" 2>&1 ||
   ! tar -C "$WORK/image-lib64" -c . | "${PODMAN[@]}" import - "$IMAGE_LIB64" >>"$WORK/podman-import.log" 2>&1 ||
   ! "${PODMAN[@]}" run --rm --network none "$IMAGE" true >>"$WORK/podman-import.log" 2>&1; then
  cat "$WORK/podman-import.log" >&2
  skip "podman cannot run a container on this machine"
fi
pass "podman runs a container"
"${PODMAN[@]}" run --rm --network none "$IMAGE_LIB64" /usr/local/bin/probe libc.so.6 >"$WORK/lib64-image.out" 2>&1
expect "the lib64 image's linker finds its own libc through its cache" "$WORK/lib64-image.out" \
  "resolved libc.so.6 /usr/lib64/libc.so.6 -> /usr/lib64/libc.so.6: no marker"

# --- fake GPU nodes -------------------------------------------------------------------
# make_node NAME: tests/sysfs/h100-8gpu with UUIDs of its own and real device
# nodes (the runtime stats each hostPath).
make_node() {
  local root=$WORK/nodes/$1
  mkdir -p "$WORK/nodes"
  cp -r "$SRC/tests/sysfs/h100-8gpu" "$root"
  sed -i "s/GPU-/GPU-$1-/" "$root"/proc/driver/nvidia/gpus/*/information
  local uvm
  uvm=$(awk '$2 == "nvidia-uvm" {print $1}' "$root/proc/devices")
  for i in 0 1 2 3 4 5 6 7; do rm -f "$root/dev/nvidia$i"; mknod "$root/dev/nvidia$i" c 195 "$i"; done
  rm -f "$root"/dev/nvidiactl "$root"/dev/nvidia-modeset "$root"/dev/nvidia-uvm "$root"/dev/nvidia-uvm-tools
  mknod "$root/dev/nvidiactl" c 195 255
  mknod "$root/dev/nvidia-modeset" c 195 254
  mknod "$root/dev/nvidia-uvm" c "$uvm" 0
  mknod "$root/dev/nvidia-uvm-tools" c "$uvm" 1
  rm -f "$root/dev/fuse" "$root/dev/net/tun"
  mknod "$root/dev/fuse" c 10 229
  mknod "$root/dev/net/tun" c 10 200
  real_libs "$root/$LIB" "$OLD"
  cp "$HOOK" "$root/usr/local/bin/wsched-cdi-hook"
  echo "$root"
}

# agent NAME POOL [FLAGS...]: one registration of the node, CDI spec written;
# the first through the bootstrap token, later ones with the node's own
# token from its state directory (docs/agent.md, "Node identity").
agent() {
  local name=$1 pool=$2
  shift 2
  "$AGENT" --root="$WORK/nodes/$name" --server="$ADDR" --pool="$pool" \
    --bootstrap_token_file="$WORK/bootstrap-token" --state_dir="$WORK/agent-state/$name" \
    --node_name="$name" --nvidia_smi= --once --cdi_dir="$CDI_DIR" \
    --cdi_host_root="$WORK/nodes/$name" "$@" >>"$WORK/agent-$name.log" 2>&1
}

# place ID CLASS: the answer as JSON in $WORK/ID.json.
place() {
  ctl "$CP" place "$1" --org=o-1 --project=p-1 --user=u-1 --class="$2" --output=json >"$WORK/$1.json"
}

# field ID EXPR: a Python expression over the answer `w`.
field() { "$PY" -c "import json,sys; w=json.load(open('$WORK/$1.json')); print($2)"; }

# run_in ID SCRIPT [IMAGE]: podman run with the answer's arguments; output in $WORK/ID.out.
run_in() {
  local args image=${3:-$IMAGE}
  mapfile -t args < <(field "$1" "'\n'.join(w['device_spec']['cdi']['podman_args'])")
  echo "podman run ${args[*]} $image" >"$WORK/$1.cmd"
  "${PODMAN[@]}" run --rm --network none "${args[@]}" "$image" sh -c "$2" >"$WORK/$1.out" 2>&1 ||
    { fail "$1: podman run failed"; sed 's/^/    | /' "$WORK/$1.out" >&2; return 0; }
  echo "--- inside $1's container ($(cat "$WORK/$1.cmd")):"
  sed 's/^/    /' "$WORK/$1.out"
}

INSIDE='for d in /dev/nvidia[0-9]*; do echo "gpu $d"; done
for d in /dev/nvidiactl /dev/nvidia-uvm /dev/nvidia-uvm-tools /dev/fuse /dev/net/tun; do
  test -c $d && echo "device $d"; done
echo "visible $NVIDIA_VISIBLE_DEVICES"
/usr/local/bin/probe libcuda.so.1 libnvidia-ml.so.1
echo "smi $(/usr/bin/nvidia-smi)"
for f in /lib/firmware/nvidia/*/*; do echo "firmware $f"; done'

# check_container ID INDEX... : the container saw exactly these GPUs.
check_container() {
  local id=$1
  shift
  local out=$WORK/$id.out want
  for i in 0 1 2 3 4 5 6 7; do
    want=false
    for j in "$@"; do [[ $i == "$j" ]] && want=true; done
    if $want; then expect "$id sees its GPU $i" "$out" "gpu /dev/nvidia$i"
    else refute "$id does not see GPU $i" "$out" "gpu /dev/nvidia$i"; fi
  done
  expect "$id has nvidiactl" "$out" "device /dev/nvidiactl"
  expect "$id has nvidia-uvm" "$out" "device /dev/nvidia-uvm"
  expect "$id visible devices are its own" "$out" \
    "visible $(field "$id" "','.join(g['uuid'] for g in w['gpus'])")"
}

# --- server ---------------------------------------------------------------------------
psql -q -v ON_ERROR_STOP=1 "$PG/postgres" -c "CREATE DATABASE $DB" >/dev/null
cat >"$WORK/tokens.yaml" <<EOF
tokens:
  - {name: rt-admin, token: $ADMIN, role: admin}
  - {name: rt-cp, token: $CP, role: control-plane}
  - {name: rt-join, token: $AGENT_TOKEN, role: agent, pools: [rt-a, rt-b, rt-c, rt-r, rt-m], bootstrap: true}
EOF
(umask 077; echo "$AGENT_TOKEN" >"$WORK/bootstrap-token")
sed "s/@DRIVER@/$OLD/; s/@BRANCH@/${OLD%%.*}/" "$SRC/tests/runtime/catalog.yaml.in" >"$WORK/catalog.yaml"
wsched_start_server "$WORK" "$SERVER" --metrics_listen= \
  --database_url="$PG/$DB" --auth_tokens_file="$WORK/tokens.yaml" \
  --catalog="$WORK/catalog.yaml" --database_connections=4

# --- node a: wsched's own spec --------------------------------------------------------
A=$(make_node node-a)
mkdir -p "$WORK/no-nvidia-spec"
agent node-a rt-a --cdi_nvidia_spec_dirs="$WORK/no-nvidia-spec" || fail "agent on node-a"
[[ -f $CDI_DIR/wsched-gpu.json ]] && pass "agent wrote $CDI_DIR/wsched-gpu.json" ||
  fail "no $CDI_DIR/wsched-gpu.json"
if "$PY" "$SRC/tests/runtime/validate_cdi.py" "$SCHEMA" "$CDI_DIR/wsched-gpu.json" \
     "$CDI_DIR/wsched-device.json" >"$WORK/schema.out" 2>&1; then
  pass "specs valid against the CDI JSON schema"
else
  fail "specs invalid against the CDI JSON schema"
fi
cat "$WORK/schema.out"
ctl "$ADMIN" node get node-a >"$WORK/node-a.txt"
refute "node-a: no CDI problem" "$WORK/node-a.txt" "cdi problem"
grep -q "^cdi: *wsched" "$WORK/node-a.txt" && pass "node get shows the wsched mode" ||
  fail "node get lacks the wsched mode: $(grep cdi "$WORK/node-a.txt")"

place ws-one rt-gpu-1
place ws-two rt-gpu-2
for id in ws-one ws-two; do
  [[ $(field $id "w['state']") == WORKSPACE_STATE_PLACED ]] && pass "$id placed" || fail "$id not placed"
  [[ $(field $id "w['device_spec']['cdi'].get('spec_json', '')") == "" ]] &&
    pass "$id: names only, no inline spec" || fail "$id carries an inline spec"
  [[ $(field $id "w['device_spec']['cdi']['kubernetes']['node_name']") == node-a ]] &&
    pass "$id: Kubernetes node name" || fail "$id: Kubernetes node name"
  annotation=$(field $id "w['device_spec']['cdi']['kubernetes']['annotations']['cdi.k8s.io/wsched_workspace']")
  [[ $annotation == "$(field $id "','.join(w['device_spec']['cdi']['device_names'])")" ]] &&
    pass "$id: cdi.k8s.io annotation requests every device ($annotation)" ||
    fail "$id: annotation $annotation"
done
echo "--- ws-one as wschedctl prints it:"
ctl "$CP" workspace get ws-one | sed -n '/container devices/,$p' | sed 's/^/    /'

run_in ws-one "$INSIDE"
check_container ws-one $(field ws-one "' '.join(str(g['index']) for g in w['gpus'])")
expect "ws-one has /dev/fuse (its class asks)" "$WORK/ws-one.out" "device /dev/fuse"
expect "ws-one's linker finds libcuda.so.1 of the loaded driver" "$WORK/ws-one.out" \
  "resolved libcuda.so.1 /$LIB/libcuda.so.1 -> /$LIB/libcuda.so.$OLD: fake libcuda.so $OLD 64-bit"
expect "ws-one's linker finds libnvidia-ml.so.1" "$WORK/ws-one.out" \
  "resolved libnvidia-ml.so.1 /$LIB/libnvidia-ml.so.1 -> /$LIB/libnvidia-ml.so.$OLD: fake libnvidia-ml.so $OLD 64-bit"
expect "ws-one runs nvidia-smi" "$WORK/ws-one.out" "smi fake nvidia-smi $OLD"
expect "ws-one has the GSP firmware" "$WORK/ws-one.out" "firmware /lib/firmware/nvidia/$OLD/gsp_ga10x.bin"

run_in ws-two "$INSIDE"
check_container ws-two $(field ws-two "' '.join(str(g['index']) for g in w['gpus'])")
refute "ws-two has no /dev/fuse (its class does not ask)" "$WORK/ws-two.out" "device /dev/fuse"

# --- node m: each MIG slice its own CDI device ----------------------------------------
# make_mig_node NAME: tests/sysfs/h200-mig (GPU 0 in MIG mode with four slices,
# GPU 3 with one usable slice beside two unusable GPU instances) with node
# a's driver files, real device nodes, and each slice's capability node at
# the nvidia-caps major the tree's /proc/devices gives (the test's own
# number: nothing opens these nodes).
make_mig_node() {
  local root=$WORK/nodes/$1 dir caps uvm cap
  cp -r "$SRC/tests/sysfs/h200-mig" "$root"
  for dir in usr lib run etc/ld.so.conf.d; do
    mkdir -p "$root/$dir"
    cp -r "$SRC/tests/sysfs/h100-8gpu/$dir/." "$root/$dir/"
  done
  caps=$(awk '$2 == "nvidia-caps" {print $1}' "$root/proc/devices")
  uvm=$(awk '$2 == "nvidia-uvm" {print $1}' "$root/proc/devices")
  for i in 0 1 2 3; do rm -f "$root/dev/nvidia$i"; mknod "$root/dev/nvidia$i" c 195 "$i"; done
  rm -f "$root"/dev/nvidiactl "$root"/dev/nvidia-modeset "$root"/dev/nvidia-uvm "$root"/dev/nvidia-uvm-tools
  mknod "$root/dev/nvidiactl" c 195 255
  mknod "$root/dev/nvidia-modeset" c 195 254
  mknod "$root/dev/nvidia-uvm" c "$uvm" 0
  mknod "$root/dev/nvidia-uvm-tools" c "$uvm" 1
  for cap in "$root"/dev/nvidia-caps/nvidia-cap*; do
    rm -f "$cap"
    mknod "$cap" c "$caps" "${cap##*nvidia-cap}"
  done
  real_libs "$root/$LIB" "$OLD"
  cp "$HOOK" "$root/usr/local/bin/wsched-cdi-hook"
  echo "$root"
}
M=$(make_mig_node node-m)
FAKE_NVIDIA_SMI_DIR=$SRC/tests/sysfs/nvidia-smi/h200-mig agent node-m rt-m \
  --cdi_nvidia_spec_dirs="$WORK/no-nvidia-spec" --nvidia_smi="$SRC/tests/sysfs/bin/nvidia-smi" ||
  fail "agent on node-m"
if "$PY" "$SRC/tests/runtime/validate_cdi.py" "$SCHEMA" "$CDI_DIR/wsched-gpu.json" \
     >"$WORK/schema-m.out" 2>&1; then
  pass "node-m's spec with slice devices is valid against the CDI JSON schema"
else
  fail "node-m's spec invalid against the CDI JSON schema"
fi
cat "$WORK/schema-m.out"
ctl "$ADMIN" node get node-m >"$WORK/node-m.txt"
ctl "$ADMIN" node get node-m --output=json >"$WORK/node-m.json"
refute "node-m: no CDI problem" "$WORK/node-m.txt" "cdi problem"
grep -q "^gpu 0 mig on: .*(MIG-[^,]*, cdi wsched.io/gpu=MIG-" "$WORK/node-m.txt" &&
  pass "node get shows the slices' CDI devices" ||
  { fail "node get lacks the slices' CDI devices"; grep mig "$WORK/node-m.txt" >&2; }
# slices GPU: "UUID CDI-NAME GI-NODE CI-NODE" per slice of that GPU, from GetNode.
slices() {
  "$PY" - "$WORK/node-m.json" "$1" <<'EOF_PY'
import json, sys
node = json.load(open(sys.argv[1]))
gpu = [g for g in node["info"]["gpus"] if g.get("index", 0) == int(sys.argv[2])][0]
for s in gpu["mig"].get("instances", []):
    print(s.get("uuid") or "-", s.get("cdi_device") or "-",
          (s.get("gi_access") or {}).get("path") or "-", (s.get("ci_access") or {}).get("path") or "-")
EOF_PY
}
slices 0 >"$WORK/node-m-gpu0.slices"
slices 3 >"$WORK/node-m-gpu3.slices"
echo "--- node-m's slices as GetNode reports them:"
sed 's/^/    /' "$WORK/node-m-gpu0.slices" "$WORK/node-m-gpu3.slices"
[[ $(awk '$2 != "-"' "$WORK/node-m-gpu0.slices" | wc -l) -eq 4 ]] &&
  pass "GPU 0's four slices each have a CDI device" || fail "GPU 0's slices lack CDI devices"
[[ $(awk '$2 != "-"' "$WORK/node-m-gpu3.slices" | wc -l) -eq 1 ]] &&
  pass "of GPU 3's GPU instances only the usable slice has a CDI device" ||
  fail "GPU 3: $(cat "$WORK/node-m-gpu3.slices")"

INSIDE_SLICE='for d in /dev/nvidia[0-9]*; do echo "gpu $d"; done
for d in /dev/nvidia-caps/*; do test -c "$d" && echo "cap $d $(busybox stat -c %t:%T "$d")"; done
for d in /dev/nvidiactl /dev/nvidia-uvm; do test -c $d && echo "device $d"; done
echo "visible $NVIDIA_VISIBLE_DEVICES"
/usr/local/bin/probe libcuda.so.1'
caps_major=$(awk '$2 == "nvidia-caps" {print $1}' "$M/proc/devices")
# check_slice ID GPU "UUID CDI-NAME GI-NODE CI-NODE": podman run --device
# CDI-NAME; the container has /dev/nvidiaGPU and no other GPU, of the
# capability nodes exactly GI-NODE and CI-NODE (with their numbers), and
# NVIDIA_VISIBLE_DEVICES=UUID.
# With a fourth argument, "answer": the podman arguments of ID's placement
# answer ($WORK/ID.json) instead of --device CDI-NAME.
check_slice() {
  local id=$1 gpu=$2 uuid name gi ci out=$WORK/$1.out args
  read -r uuid name gi ci <<<"$3"
  args=(--device "$name")
  [[ ${4:-} == answer ]] && mapfile -t args < <(field "$id" "'\n'.join(w['device_spec']['cdi']['podman_args'])")
  echo "podman run ${args[*]} $IMAGE" >"$WORK/$id.cmd"
  "${PODMAN[@]}" run --rm --network none "${args[@]}" "$IMAGE" sh -c "$INSIDE_SLICE" \
    >"$out" 2>&1 || { fail "$id: podman run ${args[*]} failed"; sed 's/^/    | /' "$out" >&2; return 0; }
  echo "--- inside $id's container ($(cat "$WORK/$id.cmd")):"
  sed 's/^/    /' "$out"
  expect "$id sees its slice's GPU $gpu" "$out" "gpu /dev/nvidia$gpu"
  [[ $(grep -c '^gpu ' "$out") -eq 1 ]] && pass "$id sees no other GPU" || fail "$id sees other GPUs"
  # busybox stat prints the numbers in hex.
  printf 'cap %s %x:%x\ncap %s %x:%x\n' "$gi" "$caps_major" "${gi##*nvidia-cap}" \
    "$ci" "$caps_major" "${ci##*nvidia-cap}" | sort >"$WORK/$id.caps-want"
  grep '^cap ' "$out" | sort >"$WORK/$id.caps-got" || true
  if cmp -s "$WORK/$id.caps-want" "$WORK/$id.caps-got"; then
    pass "$id has exactly its own two capability nodes ($(basename "$gi"), $(basename "$ci"))"
  else
    fail "$id capability nodes: want $(cat "$WORK/$id.caps-want"), got $(cat "$WORK/$id.caps-got")"
  fi
  expect "$id's NVIDIA_VISIBLE_DEVICES is its MIG UUID alone" "$out" "visible $uuid"
  expect "$id has nvidiactl (the GPUs' shared edits)" "$out" "device /dev/nvidiactl"
  expect "$id's linker finds libcuda.so.1" "$out" \
    "resolved libcuda.so.1 /$LIB/libcuda.so.1 -> /$LIB/libcuda.so.$OLD: fake libcuda.so $OLD 64-bit"
}
check_slice slice-3g 0 "$(sed -n 1p "$WORK/node-m-gpu0.slices")"
check_slice slice-1g 0 "$(sed -n 4p "$WORK/node-m-gpu0.slices")"
check_slice slice-gpu3 3 "$(awk '$2 != "-"' "$WORK/node-m-gpu3.slices")"
# A slice class placed through the service: its answer names one slice, and
# the container started from the answer's own podman arguments is that
# slice's and nothing more.
place ws-slice rt-mig-1g
slice_uuid=$(field ws-slice "w.get('slice', {}).get('uuid', '')")
slice_gpu=$(field ws-slice "w.get('slice', {}).get('gpu', {}).get('index', 0)")
[[ $(field ws-slice "w['state']") == WORKSPACE_STATE_PLACED && $slice_uuid == MIG-* ]] &&
  pass "a slice class is placed on slice $slice_uuid (GPU $slice_gpu)" ||
  fail "slice class not placed: $(cat "$WORK/ws-slice.json")"
[[ $(field ws-slice "len(w.get('gpus', []))") == 0 ]] && pass "ws-slice holds no whole GPU" ||
  fail "ws-slice holds whole GPUs"
check_slice ws-slice "$slice_gpu" "$(grep -h "^$slice_uuid " "$WORK"/node-m-gpu*.slices)" answer

# --- driver upgrade on node a: the spec follows the loaded driver ---------------------
for f in "$A"/$LIB/*."$OLD"; do
  base=$(basename "$f" ".$OLD")
  make_lib "$A/$LIB/$base.$NEW" "$base" "$NEW"
done
ln -sf "libcuda.so.$NEW" "$A/$LIB/libcuda.so.1"
mkdir -p "$A/lib/firmware/nvidia/$NEW" && echo "fake GSP firmware $NEW" >"$A/lib/firmware/nvidia/$NEW/gsp_ga10x.bin"
echo "$NEW" >"$A/sys/module/nvidia/version"
sed "s/@DRIVER@/$NEW/; s/@BRANCH@/${NEW%%.*}/" "$SRC/tests/runtime/catalog.yaml.in" >"$WORK/catalog-new.yaml"
ctl "$ADMIN" catalog apply "$WORK/catalog-new.yaml" >"$WORK/apply.out" 2>&1 ||
  { fail "catalog apply"; cat "$WORK/apply.out" >&2; }
agent node-a rt-a --cdi_nvidia_spec_dirs="$WORK/no-nvidia-spec" || fail "agent on node-a after the upgrade"
grep -q "libcuda.so.$NEW" "$CDI_DIR/wsched-gpu.json" && ! grep -q "libcuda.so.$OLD" "$CDI_DIR/wsched-gpu.json" &&
  pass "the upgrade rewrote the spec for $NEW" || fail "spec not rewritten for $NEW"
place ws-three rt-gpu-1
run_in ws-three "$INSIDE"
expect "ws-three's linker finds the new libcuda" "$WORK/ws-three.out" \
  "resolved libcuda.so.1 /$LIB/libcuda.so.1 -> /$LIB/libcuda.so.$NEW: fake libcuda.so $NEW 64-bit"
refute "ws-three has no old libcuda" "$WORK/ws-three.out" "libcuda.so.$OLD"

# --- the reverse layouts: an Ubuntu node, an image with /usr/lib64 ---------------------
place ws-lib64 rt-gpu-1
run_in ws-lib64 "$INSIDE
grep -q /$LIB/libcuda.so.1 /etc/ld.so.cache && echo 'cache names /$LIB/libcuda.so.1'" "$IMAGE_LIB64"
expect "ws-lib64's linker finds libcuda.so.1" "$WORK/ws-lib64.out" \
  "resolved libcuda.so.1 /$LIB/libcuda.so.1 -> /$LIB/libcuda.so.$NEW: fake libcuda.so $NEW 64-bit"
expect "ws-lib64's own ld.so.cache names the node's library directory" "$WORK/ws-lib64.out" \
  "cache names /$LIB/libcuda.so.1"

# --- node r: Rocky 9 with multilib packages, an image with Debian's linker layout ------
# rocky_node ROOT VERSION: 64-bit libraries in /usr/lib64 and /usr/lib64/nvidia,
# 32-bit copies of the same names in /usr/lib and /usr/lib/nvidia, both
# nvidia directories only in ld.so.conf.d (nvidia-lib.conf sorts first).
rocky_node() {
  local root=$1 v=$2 stem
  rm -rf "${root:?}/$LIB" "$root/etc/ld.so.conf.d/x86_64-linux-gnu.conf"
  mkdir -p "$root/usr/lib64/nvidia" "$root/usr/lib/nvidia"
  echo /usr/lib/nvidia >"$root/etc/ld.so.conf.d/nvidia-lib.conf"
  echo /usr/lib64/nvidia >"$root/etc/ld.so.conf.d/nvidia-lib64.conf"
  for stem in libcuda.so libnvidia-ml.so libnvidia-ptxjitcompiler.so; do
    make_lib "$root/usr/lib64/$stem.$v" "$stem" "$v"
    make_lib32 "$root/usr/lib/$stem.$v" "$stem" "$v"
  done
  make_lib "$root/usr/lib64/nvidia/libGLX_nvidia.so.$v" libGLX_nvidia.so "$v"
  make_lib32 "$root/usr/lib/nvidia/libGLX_nvidia.so.$v" libGLX_nvidia.so "$v"
  echo "$v" >"$root/sys/module/nvidia/version"
  rm -f "$root/etc/os-release"
  printf 'NAME="Rocky Linux"\nID="rocky"\nVERSION_ID="9.4"\nPRETTY_NAME="Rocky Linux 9.4"\n' \
    >"$root/etc/os-release"
  echo "$ROCKY_KERNEL" >"$root/proc/sys/kernel/osrelease"
}
R=$(make_node node-r)
rocky_node "$R" "$NEW"
agent node-r rt-r --cdi_nvidia_spec_dirs="$WORK/no-nvidia-spec" || fail "agent on node-r"
ctl "$ADMIN" node get node-r >"$WORK/node-r.txt"
refute "node-r: no CDI problem" "$WORK/node-r.txt" "cdi problem"
refute "node-r: no 32-bit GL library in the spec" "$CDI_DIR/wsched-gpu.json" "/usr/lib/nvidia/"
refute "node-r: no 32-bit libcuda in the spec" "$CDI_DIR/wsched-gpu.json" "/usr/lib/libcuda"
grep -q "/usr/local/bin/wsched-cdi-hook" "$CDI_DIR/wsched-gpu.json" &&
  pass "node-r's spec names wsched's hook" || fail "node-r's spec lacks wsched's hook"
place ws-rocky rt-rocky-1
[[ $(field ws-rocky "w['state']") == WORKSPACE_STATE_PLACED ]] && pass "ws-rocky placed" ||
  fail "ws-rocky not placed: $(field ws-rocky "w.get('pending_reason', '')")"
run_in ws-rocky "$INSIDE
/usr/local/bin/probe libGLX_nvidia.so.0
grep -rl '32-bit copy' /lib /lib64 /usr/lib /usr/lib64 2>/dev/null | sed 's/^/32-bit file /'"
check_container ws-rocky $(field ws-rocky "' '.join(str(g['index']) for g in w['gpus'])")
expect "ws-rocky's Debian-layout linker finds libcuda.so.1 in /usr/lib64" "$WORK/ws-rocky.out" \
  "resolved libcuda.so.1 /usr/lib64/libcuda.so.1 -> /usr/lib64/libcuda.so.$NEW: fake libcuda.so $NEW 64-bit"
expect "ws-rocky's linker finds libnvidia-ml.so.1" "$WORK/ws-rocky.out" \
  "resolved libnvidia-ml.so.1 /usr/lib64/libnvidia-ml.so.1 -> /usr/lib64/libnvidia-ml.so.$NEW: fake libnvidia-ml.so $NEW 64-bit"
expect "ws-rocky's linker finds the 64-bit libGLX_nvidia" "$WORK/ws-rocky.out" \
  "resolved libGLX_nvidia.so.0 /usr/lib64/nvidia/libGLX_nvidia.so.0 -> /usr/lib64/nvidia/libGLX_nvidia.so.$NEW: fake libGLX_nvidia.so $NEW 64-bit"
refute "ws-rocky has no 32-bit file" "$WORK/ws-rocky.out" "32-bit"

# --- node c: libraries of another driver: no spec, no workspace, the reason -----------
C=$(make_node node-c)
for f in "$C"/$LIB/*."$OLD"; do mv "$f" "${f%."$OLD"}.535.104.05"; done
echo "$NEW" >"$C/sys/module/nvidia/version"
agent node-c rt-c --cdi_nvidia_spec_dirs="$WORK/no-nvidia-spec" --cdi_dir="$WORK/cdi-node-c" ||
  fail "agent on node-c"
ctl "$ADMIN" node get node-c >"$WORK/node-c.txt"
grep -q "cdi problem: *libnvidia-ml.so is 535.104.05 but the loaded driver is $NEW" "$WORK/node-c.txt" &&
  pass "node-c names the mismatch" || { fail "node-c lacks the mismatch"; cat "$WORK/node-c.txt" >&2; }
grep -q "unhealthy: CDI: libnvidia-ml.so is 535.104.05" "$WORK/node-c.txt" &&
  pass "node-c's GPUs are out of service with the reason" || fail "node-c's GPUs not out of service"
[[ ! -e $WORK/cdi-node-c/wsched-gpu.json ]] && pass "no partial spec for node-c" || fail "node-c got a GPU spec"
place ws-bad rt-mismatch-1
[[ $(field ws-bad "w['state']") == WORKSPACE_STATE_PENDING ]] && pass "ws-bad gets no GPU" ||
  fail "ws-bad was placed"
field ws-bad "w.get('pending_reason', '')" >"$WORK/ws-bad.reason"
echo "ws-bad pending: $(cat "$WORK/ws-bad.reason")"
grep -q "unhealthy and not handed out (GPU 0: CDI: libnvidia-ml.so is 535.104.05" "$WORK/ws-bad.reason" &&
  pass "ws-bad's pending reason names the library mismatch" || fail "ws-bad's reason lacks the cause"

# --- node b: NVIDIA's spec already on the node ----------------------------------------
if grep -lqs "nvidia.com/gpu" /etc/cdi/* /var/run/cdi/* 2>/dev/null; then
  echo "NOTE: this machine has its own nvidia.com/gpu spec; the NVIDIA-mode part is not run"
else
  B=$(make_node node-b)
  echo "$NEW" >"$B/sys/module/nvidia/version"  # The catalog's driver by now.
  make_lib "$B/$LIB/libcuda.so.$NEW" libcuda.so "$NEW"
  mkdir -p "$(dirname "$NVIDIA_SPEC")"
  {
    echo "cdiVersion: 0.5.0"
    echo "kind: nvidia.com/gpu"
    echo "devices:"
    for i in 0 1 2 3 4 5 6 7; do
      printf -- '- name: "%s"\n  containerEdits:\n    deviceNodes:\n' "$i"
      printf -- '    - {path: /dev/nvidia%s, hostPath: %s/dev/nvidia%s}\n' "$i" "$B" "$i"
    done
    echo "containerEdits:"
    echo "  deviceNodes:"
    echo "  - {path: /dev/nvidiactl, hostPath: $B/dev/nvidiactl}"
    echo "  - {path: /dev/nvidia-uvm, hostPath: $B/dev/nvidia-uvm}"
    echo "  mounts:"
    echo "  - {hostPath: $B/$LIB/libcuda.so.$NEW, containerPath: /$LIB/libcuda.so.$NEW, options: [ro, nosuid, nodev, bind]}"
  } >"$NVIDIA_SPEC"
  agent node-b rt-b --cdi_nvidia_spec_dirs=/etc/cdi || fail "agent on node-b"
  [[ ! -e $CDI_DIR/wsched-gpu.json ]] && pass "no wsched GPU spec beside NVIDIA's" ||
    fail "wsched-gpu.json written beside NVIDIA's spec"
  [[ $(grep -ls "nvidia.com/gpu" /etc/cdi/* /var/run/cdi/* | wc -l) -eq 1 ]] &&
    pass "exactly one spec of kind nvidia.com/gpu" || fail "more than one nvidia.com/gpu spec"
  ctl "$ADMIN" node get node-b >"$WORK/node-b.txt"
  grep -q "^cdi: *nvidia" "$WORK/node-b.txt" && pass "node get shows the nvidia mode" ||
    fail "node get lacks the nvidia mode"
  place ws-nv rt-nvidia-1
  [[ $(field ws-nv "w['state']") == WORKSPACE_STATE_PLACED ]] && pass "ws-nv placed" ||
    { fail "ws-nv not placed: $(field ws-nv "w.get('pending_reason', '')")"; exit 1; }
  index=$(field ws-nv "w['gpus'][0]['index']")
  [[ $(field ws-nv "w['device_spec']['cdi']['device_names'][0]") == "nvidia.com/gpu=$index" ]] &&
    pass "ws-nv answered with NVIDIA's name nvidia.com/gpu=$index" || fail "ws-nv names"
  run_in ws-nv "$INSIDE
/usr/local/bin/probe libcuda.so.$NEW"
  check_container ws-nv "$index"
  expect "ws-nv has /dev/fuse from wsched's device kind" "$WORK/ws-nv.out" "device /dev/fuse"
  expect "ws-nv has NVIDIA's libcuda" "$WORK/ws-nv.out" \
    "resolved libcuda.so.$NEW /$LIB/libcuda.so.$NEW -> /$LIB/libcuda.so.$NEW: fake libcuda.so $NEW 64-bit"
fi

echo "runtime_test: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
