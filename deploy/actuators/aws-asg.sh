#!/usr/bin/env bash
# wsched exec actuator example: an AWS EC2 Auto Scaling group per pool.
#
# Removes the nodes wsched names (terminating them with
# --should-decrement-desired-capacity, so the group cannot pick a busy node
# instead), then sets the desired capacity to the target. Both steps are
# idempotent, so a retried or repeated signal is harmless.
#
# Settings (environment):
#   WSCHED_AWS_ASG_NAME  Auto Scaling group (default: wsched-$WSCHED_POOL)
#   WSCHED_DRY_RUN=1     print the aws commands instead of running them
# Node names may be instance IDs (i-...) or private DNS names (EKS-style
# ip-10-0-0-1.ec2.internal); the latter are looked up in the group.
set -euo pipefail

: "${WSCHED_POOL:?not set: run this from the wsched exec actuator}"
: "${WSCHED_TARGET_SIZE:?not set: run this from the wsched exec actuator}"
asg="${WSCHED_AWS_ASG_NAME:-wsched-${WSCHED_POOL}}"
dry_run="${WSCHED_DRY_RUN:-0}"

# Runs a command, or prints it (shell-quoted) in dry-run mode.
run() {
  if [[ "$dry_run" == 1 ]]; then
    local line
    printf -v line '%q ' "$@"
    echo "${line% }"
  else
    "$@"
  fi
}

instance_id_of() {
  local node="$1"
  if [[ "$node" =~ ^i-[0-9a-f]+$ ]]; then
    echo "$node"
    return
  fi
  local lookup=(aws ec2 describe-instances
    --filters "Name=private-dns-name,Values=${node}*" "Name=tag:aws:autoscaling:groupName,Values=${asg}"
    --query 'Reservations[].Instances[].InstanceId' --output text)
  if [[ "$dry_run" == 1 ]]; then
    run "${lookup[@]}" >&2
    echo "<instance-id-of-${node}>"
  else
    "${lookup[@]}"
  fi
}

IFS=',' read -r -a nodes <<<"${WSCHED_NODES_TO_REMOVE:-}"
for node in "${nodes[@]}"; do
  [[ -n "$node" ]] || continue
  id="$(instance_id_of "$node")"
  if [[ -z "$id" || "$id" == None ]]; then
    echo "aws-asg: $node is no longer in $asg; nothing to remove" >&2
    continue
  fi
  run aws autoscaling terminate-instance-in-auto-scaling-group \
    --instance-id "$id" --should-decrement-desired-capacity
done

run aws autoscaling set-desired-capacity \
  --auto-scaling-group-name "$asg" --desired-capacity "$WSCHED_TARGET_SIZE"
