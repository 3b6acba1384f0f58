#!/usr/bin/env bash
# wsched exec actuator example: an Azure Virtual Machine Scale Set per pool.
#
# Deletes the instances wsched names (looked up by computer name), then sets
# the capacity to the target. A node already gone is skipped, so retries
# are harmless.
#
# Settings (environment):
#   WSCHED_AZURE_RESOURCE_GROUP  resource group of the scale set (required)
#   WSCHED_AZURE_VMSS            scale set (default: wsched-$WSCHED_POOL)
#   WSCHED_DRY_RUN=1             print the az commands instead of running them
set -euo pipefail

: "${WSCHED_POOL:?not set: run this from the wsched exec actuator}"
: "${WSCHED_TARGET_SIZE:?not set: run this from the wsched exec actuator}"
: "${WSCHED_AZURE_RESOURCE_GROUP:?set it to the resource group of the scale set}"
group="$WSCHED_AZURE_RESOURCE_GROUP"
vmss="${WSCHED_AZURE_VMSS:-wsched-${WSCHED_POOL}}"
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

# The scale set's instance ID of a node, from its computer (host) name.
instance_id_of() {
  local lookup=(az vmss list-instances --resource-group "$group" --name "$vmss"
    --query "[?osProfile.computerName=='$1'].instanceId" --output tsv)
  if [[ "$dry_run" == 1 ]]; then
    run "${lookup[@]}" >&2
    echo "<instance-id-of-$1>"
  else
    "${lookup[@]}"
  fi
}

ids=()
IFS=',' read -r -a nodes <<<"${WSCHED_NODES_TO_REMOVE:-}"
for node in "${nodes[@]}"; do
  [[ -n "$node" ]] || continue
  id="$(instance_id_of "$node")"
  if [[ -z "$id" ]]; then
    echo "azure-vmss: $node is no longer in $vmss; nothing to remove" >&2
    continue
  fi
  ids+=("$id")
done
if ((${#ids[@]} > 0)); then
  run az vmss delete-instances --resource-group "$group" --name "$vmss" --instance-ids "${ids[@]}"
fi

run az vmss scale --resource-group "$group" --name "$vmss" --new-capacity "$WSCHED_TARGET_SIZE"
