#!/usr/bin/env bash
# wsched exec actuator for tests and demos: changes nothing, only prints what
# a real actuator would do with the signal. (A test harness can watch the
# output and register fake node agents to match.)
#
# Settings (environment):
#   WSCHED_FAKE_LOG   also append the lines to this file
#   WSCHED_DRY_RUN=1  accepted for symmetry; this script never acts anyway
set -euo pipefail

: "${WSCHED_POOL:?not set: run this from the wsched exec actuator}"
: "${WSCHED_TARGET_SIZE:?not set: run this from the wsched exec actuator}"
current="${WSCHED_CURRENT_SIZE:-0}"

say() {
  echo "$*"
  if [[ -n "${WSCHED_FAKE_LOG:-}" ]]; then
    echo "$*" >>"$WSCHED_FAKE_LOG"
  fi
}

say "pool=$WSCHED_POOL generation=${WSCHED_GENERATION:-0} current=$current" \
  "target=$WSCHED_TARGET_SIZE reason=${WSCHED_REASON:-}"
IFS=',' read -r -a nodes <<<"${WSCHED_NODES_TO_REMOVE:-}"
for node in "${nodes[@]}"; do
  if [[ -n "$node" ]]; then
    say "would remove node $node"
  fi
done
remaining=$((current - ${#nodes[@]}))
if ((WSCHED_TARGET_SIZE > remaining)); then
  say "would register $((WSCHED_TARGET_SIZE - remaining)) fake agents in pool $WSCHED_POOL"
fi
exit 0
