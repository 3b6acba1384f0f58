#!/usr/bin/env bash
# The run command's demo, against the server run.sh started: CPU and GPU
# workspaces placed with their device specs, a pending GPU workspace, the
# cluster state, and a GPU pool scaling up from zero and back down.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin="$root/build/bin"
admin=(--server="$WSCHED_SERVER" --token="$WSCHED_DEMO_ADMIN_TOKEN")
cp=(--server="$WSCHED_SERVER" --token="$WSCHED_DEMO_CP_TOKEN")
ctl() { "$bin/wschedctl" "$@"; }
step() { printf '\n== %s\n' "$*"; }

# Waits until `wschedctl workspace get ID` reports the state (up to 60 s).
await_state() {
  for _ in $(seq 600); do
    out=$(ctl "${cp[@]}" workspace get "$1" --output=json)
    [[ $out == *"\"$2\""* ]] && return 0
    sleep 0.1
  done
  echo "timed out waiting for $1 to be $2" >&2
  return 1
}

step "workspace classes (classes/demo.yaml)"
ctl "${admin[@]}" classes

step "a CPU workspace; pool general has no nodes yet, so it waits for one"
ctl "${cp[@]}" place ws-cpu --org=acme --project=web --user=ada --class=standard
await_state ws-cpu WORKSPACE_STATE_PLACED
step "placed once the autoscaler's node registered (asking again returns the same placement)"
ctl "${cp[@]}" place ws-cpu --org=acme --project=web --user=ada --class=standard

step "two 1-GPU workspaces: the GPU pool scales up from zero"
ctl "${cp[@]}" place ws-gpu-1 --org=acme --project=ml --user=grace --class=gpu-1x
ctl "${cp[@]}" place ws-gpu-2 --org=acme --project=ml --user=grace --class=gpu-1x >/dev/null
await_state ws-gpu-1 WORKSPACE_STATE_PLACED
await_state ws-gpu-2 WORKSPACE_STATE_PLACED
echo "what the exec actuator was asked to do:"
grep 'pool=gpu-h100' "$WSCHED_DEMO_STATE/actuator.log" | sed 's/^/  /'
ctl "${admin[@]}" scaling
step "placed: the CDI names of the node's spec (its agent wrote it), as podman arguments and as a Kubernetes pod's node name and annotation"
ctl "${cp[@]}" place ws-gpu-1 --org=acme --project=ml --user=grace --class=gpu-1x
node=$(ctl "${cp[@]}" workspace get ws-gpu-1 --output=json | sed -n 's/.*"node_name": "\(.*\)".*/\1/p' | head -1)
echo "the node's spec, as its agent wrote it ($WSCHED_DEMO_STATE/cdi/$node/wsched-gpu.json), first lines:"
sed -n '1,12p' "$WSCHED_DEMO_STATE/cdi/$node/wsched-gpu.json" | sed 's/^/  /'
ctl "${admin[@]}" node get "$node" | grep '^cdi' || true

step "an 8-GPU workspace does not fit now (2 of 8 GPUs held; the pool is at max_size 1): pending"
ctl "${cp[@]}" place ws-gpu-8 --org=acme --project=ml --user=grace --class=gpu-8x

step "cluster state"
ctl "${admin[@]}" pools
ctl "${admin[@]}" nodes
ctl "${admin[@]}" workspaces

step "stop the GPU workspaces: the pending 8-GPU one takes the now empty node"
ctl "${cp[@]}" stop ws-gpu-1 >/dev/null
ctl "${cp[@]}" stop ws-gpu-2 >/dev/null
await_state ws-gpu-8 WORKSPACE_STATE_PLACED
ctl "${cp[@]}" workspace get ws-gpu-8 >/dev/null && echo "ws-gpu-8: PLACED"

step "stop it too: after 5 s idle the GPU pool is named for removal and goes back to zero"
ctl "${cp[@]}" stop ws-gpu-8 >/dev/null
for _ in $(seq 300); do
  out=$(ctl "${admin[@]}" scaling --output=json | tr -d ' \n')
  [[ $out =~ \"pool\":\"gpu-h100\",\"generation\":\"[0-9]+\",\"current_size\":0,\"target_size\":0 ]] && break
  sleep 0.1
done
ctl "${admin[@]}" scaling
echo "what the exec actuator was asked to do:"
grep 'pool=gpu-h100' "$WSCHED_DEMO_STATE/actuator.log" | sed 's/^/  /'
echo
echo "wschedctl --server=$WSCHED_SERVER --token=$WSCHED_DEMO_ADMIN_TOKEN pools   # try it"
