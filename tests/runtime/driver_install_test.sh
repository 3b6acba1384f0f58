#!/usr/bin/env bash
# Driver installs the node's own agent runs (docs/agent.md "Driver installs"),
# with real podman, the real agent and server and the test PostgreSQL.
#   driver_install_test.sh WSCHEDCTL WSCHED_SERVER WSCHED_AGENT SOURCE_DIR
#
# Fake GPU nodes (copies of tests/sysfs/h100-8gpu with no driver loaded) in
# pools with driver_install: node. The installer images are made here from
# busybox, without a registry: one plays NVIDIA's build (a cache miss costs a
# few seconds, a hit none), puts the module below the node's /lib/modules,
# keeps it in the shared driver cache, and "loads" it by writing the fake
# tree's /sys/module/nvidia/version; the other fails. No admin call reports
# an install: the agents do, with their own node credentials.
#   - node-a goes needs_driver -> installing -> ready; a pending GPU
#     workspace lands on it;
#   - node-b, same kernel, reports a cache hit and a shorter install; the
#     estimate for node-c (registered, not installing) uses the hit time;
#   - node-d's failing installer leaves it install_failed, with the log's
#     tail in its driver detail and in the pending reason;
#   - node-a rebooted into a new kernel installs again by itself.
#
# Needs root (a privileged container), podman, runc and busybox-static
# (deploy/local/install-deps.sh), and the test PostgreSQL on
# 127.0.0.1:55433 (the ctest "pg" fixture). Exits 77 (skipped) only where
# podman cannot run at all.
set -euo pipefail

CTL=${1:?usage: driver_install_test.sh WSCHEDCTL WSCHED_SERVER WSCHED_AGENT SOURCE_DIR}
SERVER=${2:?wsched-server binary required}
AGENT=${3:?wsched-agent binary required}
SRC=${4:?source dir required}
# shellcheck source=../support/start_server.sh
source "$SRC/tests/support/start_server.sh"
PG=postgresql://postgres@127.0.0.1:${WSCHED_TEST_PG_PORT:-55433}
DB=driver_install_test_$$
PY=/usr/bin/python3
KERNEL=5.15.0-91-generic
NEW_KERNEL=5.15.0-92-generic
BROKEN_KERNEL=5.15.0-94-generic
DRIVER=550.54.15
GOOD_REPO=localhost/wsched-driver-test
BROKEN_REPO=localhost/wsched-driver-broken

ADMIN=admin-token-0123456789abcdef
CP=control-plane-token-0123456789
JOIN=agent-join-token-0123456789abcdef

skip() { echo "SKIPPED: $1" >&2; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "needs root: the installer runs in a privileged container"
command -v podman >/dev/null || skip "podman is not installed (deploy/local/install-deps.sh installs it)"
command -v runc >/dev/null || skip "runc is not installed"
[[ -x /bin/busybox ]] || skip "busybox-static is not installed (the installer images are made from it)"

WORK=$(mktemp -d /tmp/wsched-driver-install-test-XXXXXX)
export CONTAINERS_CONF=$WORK/containers.conf
PODMAN=(podman --root "$WORK/storage" --runroot "$WORK/run" --storage-driver vfs
        --runtime runc --cgroup-manager cgroupfs)
passed=0
failed=0
server_pid=
agent_pids=()

cleanup() {
  local rc=$?
  for pid in "${agent_pids[@]}" $server_pid; do
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  wsched_end_test driver_install_test "$rc"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pass() { echo "ok: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1" >&2; failed=$((failed + 1)); }
ctl() { local token=$1; shift; WSCHED_TOKEN=$token "$CTL" --server="$ADDR" "$@"; }
# json FILE EXPR: a Python expression over the JSON in FILE, as `w`.
json() { "$PY" -c "import json,sys; w=json.load(open('$1')); print($2)"; }
# node_field NAME EXPR: EXPR over the node as the server knows it.
node_field() {
  ctl "$ADMIN" node get "$1" --output=json >"$WORK/node-$1.json" 2>/dev/null || { echo; return; }
  json "$WORK/node-$1.json" "$2"
}
# await DESCRIPTION COMMAND...: until COMMAND succeeds (checked every 100 ms,
# at most 60 s: installs here take seconds). What it waits for is a state
# the server reports, so it is polled.
await() {
  local what=$1
  shift
  for _ in $(seq 600); do
    if "$@"; then pass "$what"; return 0; fi
    sleep 0.1
  done
  fail "$what: not within 60 s"
  return 1
}
driver_state_is() { [[ $(node_field "$1" "w.get('driver_state', '')") == "DRIVER_STATE_$2" ]]; }
# seconds DURATION: "3.512s" (protobuf JSON) -> 3.512.
seconds() { echo "${1%s}"; }

# --- installer images: busybox and a script, no registry ---------------------------------
printf '[containers]\ndefault_ulimits = []\n' >"$CONTAINERS_CONF"
# image DIR SCRIPT: an image tree with busybox and SCRIPT as /install.
image() {
  mkdir -p "$1/bin" "$1/tmp"
  cp /bin/busybox "$1/bin/"
  for tool in sh cat cp echo mkdir sleep test true; do ln -s busybox "$1/bin/$tool"; done
  cp "$2" "$1/install"
  chmod 755 "$1/install"
}
cat >"$WORK/good-install.sh" <<'EOF_SH'
#!/bin/sh
# The installer contract (docs/agent.md): build for WSCHED_KERNEL unless the
# cache has it, install and load; say whether the cache had it.
set -eu
echo "node $WSCHED_NODE: driver $WSCHED_DRIVER_VERSION for kernel $WSCHED_KERNEL on $WSCHED_OS"
built="$WSCHED_DRIVER_CACHE/$WSCHED_DRIVER_VERSION-$WSCHED_KERNEL-$WSCHED_OS"
if [ -f "$built/nvidia.ko" ]; then
  echo "wsched-driver-cache: hit"
else
  echo "wsched-driver-cache: miss"
  sleep 3  # The build from source that a cache hit saves.
  mkdir -p "$built"
  echo "nvidia.ko $WSCHED_DRIVER_VERSION for $WSCHED_KERNEL" >"$built/nvidia.ko"
fi
mkdir -p "/lib/modules/$WSCHED_KERNEL/updates/dkms"
cp "$built/nvidia.ko" "/lib/modules/$WSCHED_KERNEL/updates/dkms/nvidia.ko"
# What loading the module does to the node's sysfs (its test tree here).
mkdir -p /node-sys-module/nvidia
echo "$WSCHED_DRIVER_VERSION" >/node-sys-module/nvidia/version
echo "loaded $WSCHED_DRIVER_VERSION"
EOF_SH
cat >"$WORK/broken-install.sh" <<'EOF_SH'
#!/bin/sh
echo "building nvidia.ko for $WSCHED_KERNEL"
echo "nvidia.ko: unresolved symbol drm_gem_object_free"
exit 3
EOF_SH
image "$WORK/good-image" "$WORK/good-install.sh"
image "$WORK/broken-image" "$WORK/broken-install.sh"
tag() { echo "$1:550-$2-ubuntu22.04"; }
if ! tar -C "$WORK/good-image" -c . |
       "${PODMAN[@]}" import --change 'CMD ["/install"]' - "$(tag $GOOD_REPO $KERNEL)" \
         >"$WORK/podman-import.log" 2>&1 ||
   ! tar -C "$WORK/broken-image" -c . |
       "${PODMAN[@]}" import --change 'CMD ["/install"]' - "$(tag $BROKEN_REPO $BROKEN_KERNEL)" \
         >>"$WORK/podman-import.log" 2>&1 ||
   ! "${PODMAN[@]}" tag "$(tag $GOOD_REPO $KERNEL)" "$(tag $GOOD_REPO $NEW_KERNEL)" \
       >>"$WORK/podman-import.log" 2>&1 ||
   ! "${PODMAN[@]}" run --rm --network none "$(tag $GOOD_REPO $KERNEL)" true \
       >>"$WORK/podman-import.log" 2>&1; then
  cat "$WORK/podman-import.log" >&2
  skip "podman cannot run a container on this machine"
fi
pass "installer images made from busybox"

# --- server ---------------------------------------------------------------------------
psql -q -v ON_ERROR_STOP=1 "$PG/postgres" -c "CREATE DATABASE $DB" >/dev/null
cat >"$WORK/tokens.yaml" <<EOF
tokens:
  - {name: di-admin, token: $ADMIN, role: admin}
  - {name: di-cp, token: $CP, role: control-plane}
  - {name: di-join, token: $JOIN, role: agent, pools: [gpu, gpu-broken], bootstrap: true}
EOF
(umask 077; echo "$JOIN" >"$WORK/bootstrap-token")
wsched_start_server "$WORK" "$SERVER" --metrics_listen= \
  --database_url="$PG/$DB" --auth_tokens_file="$WORK/tokens.yaml" \
  --catalog="$SRC/tests/runtime/driver-install-catalog.yaml" --database_connections=4 \
  --heartbeat_interval=300ms

# --- fake nodes and their agents --------------------------------------------------------
# make_node NAME [KERNEL]: tests/sysfs/h100-8gpu with no driver loaded.
make_node() {
  local root=$WORK/nodes/$1
  mkdir -p "$WORK/nodes"
  cp -r "$SRC/tests/sysfs/h100-8gpu" "$root"
  sed -i "s/GPU-/GPU-$1-/" "$root"/proc/driver/nvidia/gpus/*/information
  rm -rf "$root/sys/module/nvidia" "$root/proc/driver/nvidia/version"
  mkdir -p "$root/lib/modules" "$root/usr/src" "$root/sys/module"
  echo "${2:-$KERNEL}" >"$root/proc/sys/kernel/osrelease"
}
# agent_flags NAME POOL
agent_flags() {
  echo --root="$WORK/nodes/$1" --server="$ADDR" --pool="$2" --node_name="$1" \
    --bootstrap_token_file="$WORK/bootstrap-token" --state_dir="$WORK/agent-state/$1" \
    --nvidia_smi= --cdi_dir= --kmsg= --driver_cache="$WORK/driver-cache" \
    --driver_install_volumes="$WORK/nodes/$1/sys/module:/node-sys-module" \
    --driver_install_timeout=60s --driver_install_retry=1h
}
# start_agent NAME POOL: the agent's loop, in the background.
start_agent() {
  mkdir -p "$WORK/agent-state/$1"
  # shellcheck disable=SC2046
  "$AGENT" $(agent_flags "$1" "$2") --driver_install_runtime="${PODMAN[*]}" \
    >>"$WORK/agent-$1.log" 2>&1 &
  agent_pids+=($!)
}
mkdir -p "$WORK/driver-cache"
place() {
  ctl "$CP" place "$1" --org=o-1 --project=p-1 --user=u-1 --class="$2" --output=json >"$WORK/$1.json"
}
workspace_field() {
  ctl "$CP" workspace get "$1" --output=json >"$WORK/$1.json" 2>/dev/null || { echo; return; }
  json "$WORK/$1.json" "$2"
}
placed_on() { [[ $(workspace_field "$1" "w.get('node_name', '')") == "$2" ]]; }

# --- node-a: needs_driver -> installing -> ready, and the pending workspace lands ------
place ws-a gpu-1
[[ $(json "$WORK/ws-a.json" "w['state']") == WORKSPACE_STATE_PENDING ]] &&
  pass "ws-a pends while no GPU node is ready" || fail "ws-a: $(cat "$WORK/ws-a.json")"
make_node node-a
start_agent node-a gpu
await "node-a installs its driver itself" driver_state_is node-a INSTALLING
await "node-a is ready after its agent's install" driver_state_is node-a READY
[[ $(node_field node-a "w['driver_detail']") == "driver $DRIVER loaded for kernel $KERNEL" ]] &&
  pass "node-a's driver detail names the loaded driver" || fail "node-a: $(node_field node-a "w['driver_detail']")"
await "the pending workspace lands on node-a" placed_on ws-a node-a
[[ -f $WORK/nodes/node-a/lib/modules/$KERNEL/updates/dkms/nvidia.ko ]] &&
  pass "the module is below node-a's /lib/modules" || fail "no module below node-a's /lib/modules"
grep -qx "wsched-driver-cache: miss" "$WORK/agent-state/node-a/driver-install-$KERNEL.log" &&
  pass "node-a's install log is kept in its state dir (a cache miss)" ||
  fail "node-a's install log: $(cat "$WORK/agent-state/node-a/driver-install-$KERNEL.log" 2>&1)"

# --- node-b: the same kernel from the cache, faster; the estimate uses it ---------------
make_node node-b
start_agent node-b gpu
await "node-b is ready" driver_state_is node-b READY
grep -qx "wsched-driver-cache: hit" "$WORK/agent-state/node-b/driver-install-$KERNEL.log" &&
  pass "node-b's installer found the build in the cache" || fail "node-b: no cache hit"
ctl "$ADMIN" get pool gpu --output=json >"$WORK/pool.json"
hit=$(json "$WORK/pool.json" "[t['median'] for t in w['timings']['driver_installs'] if t['kernel_version'] == '$KERNEL' and t.get('cache') == 'DRIVER_CACHE_HIT'][0]")
miss=$(json "$WORK/pool.json" "[t['median'] for t in w['timings']['driver_installs'] if t['kernel_version'] == '$KERNEL' and t.get('cache') == 'DRIVER_CACHE_MISS'][0]")
"$PY" -c "import sys; sys.exit(not $(seconds "$hit") < $(seconds "$miss"))" &&
  pass "install times kept per cache: hit $hit < miss $miss" || fail "hit $hit, miss $miss"
# Fill node-b, so the next 8-GPU workspace waits for node-c's driver.
place ws-b gpu-8
placed_on ws-b node-b && pass "ws-b fills node-b" || fail "ws-b: $(cat "$WORK/ws-b.json")"
make_node node-c
# shellcheck disable=SC2046
"$AGENT" $(agent_flags node-c gpu) --once >>"$WORK/agent-node-c.log" 2>&1 ||
  fail "agent --once on node-c"
driver_state_is node-c NEEDS_DRIVER && pass "node-c registered without its driver" ||
  fail "node-c: $(node_field node-c "w.get('driver_state')")"
place ws-c gpu-8
estimate=$(json "$WORK/ws-c.json" "w.get('estimated_time_to_place', '')")
basis=$(json "$WORK/ws-c.json" "w.get('estimate_basis', '')")
[[ -n $estimate ]] && "$PY" -c "import sys; sys.exit(not $(seconds "$estimate") <= $(seconds "$hit"))" &&
  [[ $basis == *"driver install median on kernel $KERNEL"* ]] &&
  pass "node-c's estimate uses the cache-hit time ($estimate: $basis)" ||
  fail "ws-c's estimate $estimate ($basis), hit $hit"

# --- node-d: a failing installer -------------------------------------------------------
make_node node-d "$BROKEN_KERNEL"
place ws-d gpu-broken-1
start_agent node-d gpu-broken
await "node-d's failed install is install_failed" driver_state_is node-d INSTALL_FAILED
[[ $(node_field node-d "w['driver_detail']") == *"exit status 3; log tail: building nvidia.ko for $BROKEN_KERNEL | nvidia.ko: unresolved symbol drm_gem_object_free"* ]] &&
  pass "node-d's driver detail has the log's tail" || fail "node-d: $(node_field node-d "w['driver_detail']")"
reason=$(workspace_field ws-d "w.get('pending_reason', '')")
[[ $reason == *"the driver install failed on node node-d"*"unresolved symbol drm_gem_object_free"* ]] &&
  pass "the pending reason has the log's tail" || fail "ws-d's pending reason: $reason"

# --- node-a reboots into a new kernel: the install runs again by itself -----------------
echo "$NEW_KERNEL" >"$WORK/nodes/node-a/proc/sys/kernel/osrelease"
rm -rf "$WORK/nodes/node-a/sys/module/nvidia"
await "node-a reports its new kernel" \
  eval '[[ $(node_field node-a "w[\"info\"][\"kernel_version\"]") == '"$NEW_KERNEL"' ]]'
await "node-a is ready on the new kernel" \
  eval '[[ $(node_field node-a "w[\"driver_detail\"]") == "driver '"$DRIVER"' loaded for kernel '"$NEW_KERNEL"'" ]]'
[[ -f $WORK/agent-state/node-a/driver-install-$NEW_KERNEL.log ]] &&
  pass "node-a ran the installer for $NEW_KERNEL" || fail "no install log for $NEW_KERNEL"

echo "driver_install_test: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
