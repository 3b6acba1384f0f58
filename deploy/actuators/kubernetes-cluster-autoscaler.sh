#!/usr/bin/env bash
# wsched exec actuator example: leave sizing to the Kubernetes Cluster
# Autoscaler, and only tell it which nodes it may take away.
#
# The cluster autoscaler adds nodes by itself for unschedulable workspace
# pods, but it would also remove nodes wsched wants to keep (a warm buffer,
# or a node wsched is about to place on). So every node of the pool carries
# cluster-autoscaler.kubernetes.io/scale-down-disabled=true, except the ones
# wsched names for removal: on those the annotation is removed, and the
# cluster autoscaler scales them down once they are unneeded. The target
# size is not set anywhere; it is only logged.
#
# Settings (environment):
#   WSCHED_K8S_POOL_LABEL  node label holding the pool id (default: wsched.io/pool)
#   WSCHED_K8S_NODES       comma-separated node names of the pool, instead of
#                          asking the API server (handy for dry runs)
#   WSCHED_DRY_RUN=1       print the kubectl commands instead of running them
set -euo pipefail

: "${WSCHED_POOL:?not set: run this from the wsched exec actuator}"
: "${WSCHED_TARGET_SIZE:?not set: run this from the wsched exec actuator}"
label="${WSCHED_K8S_POOL_LABEL:-wsched.io/pool}"
annotation="cluster-autoscaler.kubernetes.io/scale-down-disabled"
dry_run="${WSCHED_DRY_RUN:-0}"

run() {
  if [[ "$dry_run" == 1 ]]; then
    local line
    printf -v line '%q ' "$@"
    echo "${line% }"
  else
    "$@"
  fi
}

IFS=',' read -r -a removable <<<"${WSCHED_NODES_TO_REMOVE:-}"
if [[ -n "${WSCHED_K8S_NODES:-}" ]]; then
  IFS=',' read -r -a pool_nodes <<<"$WSCHED_K8S_NODES"
else
  list=(kubectl get nodes --selector="${label}=${WSCHED_POOL}"
    --output='jsonpath={.items[*].metadata.name}')
  if [[ "$dry_run" == 1 ]]; then
    run "${list[@]}"
    pool_nodes=()
  else
    read -r -a pool_nodes <<<"$("${list[@]}")"
  fi
fi

is_removable() {
  local candidate
  for candidate in "${removable[@]}"; do
    [[ "$candidate" == "$1" ]] && return 0
  done
  return 1
}

echo "kubernetes-cluster-autoscaler: pool $WSCHED_POOL target $WSCHED_TARGET_SIZE" \
  "(sizing is left to the cluster autoscaler)" >&2
for node in "${pool_nodes[@]}"; do
  [[ -n "$node" ]] || continue
  if is_removable "$node"; then
    continue
  fi
  run kubectl annotate node "$node" --overwrite "${annotation}=true"
done
for node in "${removable[@]}"; do
  [[ -n "$node" ]] || continue
  run kubectl annotate node "$node" "${annotation}-"
done
