#!/usr/bin/env bash
# The demo's exec actuator: "creates" nodes by starting wsched-agent on a
# copy of a fake sysfs tree (tests/sysfs), and "deletes" the nodes wsched
# names by stopping their agent and removing the node, as a cloud controller
# would. Driven by the WSCHED_* variables (deploy/actuators/README.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
state="${WSCHED_DEMO_STATE:?set by run.sh}"
bin="$root/build/bin"
server="${WSCHED_DEMO_SERVER:?set by run.sh}"
pool="$WSCHED_POOL"
mkdir -p "$state/nodes"
echo "actuator: pool=$pool target=$WSCHED_TARGET_SIZE remove=${WSCHED_NODES_TO_REMOVE:-none}" \
  >>"$state/actuator.log"

IFS=',' read -r -a remove <<<"${WSCHED_NODES_TO_REMOVE:-}"
for node in "${remove[@]}"; do
  [ -n "$node" ] || continue
  [ -f "$state/nodes/$node.pid" ] && kill "$(cat "$state/nodes/$node.pid")" 2>/dev/null || true
  rm -f "$state/nodes/$node.pid"
  "$bin/wschedctl" --server="$server" --token="$WSCHED_DEMO_ADMIN_TOKEN" node remove "$node" \
    >>"$state/actuator.log" 2>&1 || true
  # Its node token went with it (removing a node revokes it).
  rm -rf "${state:?}/agents/$node"
done

case "$pool" in
  gpu-*) tree="$root/tests/sysfs/h100-8gpu" ;;
  *) tree="$root/tests/sysfs/cpu-node" ;;
esac
running=$(find "$state/nodes" -maxdepth 1 -name "$pool-*.pid" | wc -l)
while [ "$running" -lt "$WSCHED_TARGET_SIZE" ]; do
  n=$(cat "$state/nodes/next" 2>/dev/null || echo 0)
  echo $((n + 1)) >"$state/nodes/next"
  name="$pool-$n"
  rm -rf "${state:?}/nodes/$name"
  cp -r "$tree" "$state/nodes/$name"
  # GPU UUIDs are unique per machine.
  find "$state/nodes/$name" -name information -exec sed -i "s/GPU-/GPU-$name-/" {} +
  # setsid: the agent outlives this command (the actuator reaps its group).
  # The bootstrap token registers the new node; its agent keeps the node's
  # own token in a state directory of its own.
  setsid "$bin/wsched-agent" --root="$state/nodes/$name" --server="$server" \
    --bootstrap_token_file="${WSCHED_DEMO_BOOTSTRAP_TOKEN_FILE:?set by run.sh}" \
    --state_dir="$state/agents/$name" --pool="$pool" --node_name="$name" --nvidia_smi= \
    --cdi_dir="$state/cdi/$name" --cdi_host_root="$state/nodes/$name" --cdi_nvidia_spec_dirs= \
    >>"$state/nodes/$name.log" 2>&1 &
  pid=$!
  echo "$pid" >"$state/nodes/$name.pid"
  # The actuator stops this command's process group when it exits: wait
  # until the agent has left it for its own session.
  for _ in $(seq 50); do
    [ "$(ps -o sid= -p "$pid" 2>/dev/null | tr -d ' ')" = "$pid" ] && break
    sleep 0.05
  done
  running=$((running + 1))
done
