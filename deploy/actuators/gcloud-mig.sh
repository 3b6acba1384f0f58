#!/usr/bin/env bash
# wsched exec actuator example: a Google Compute Engine managed instance
# group (MIG) per pool.
#
# Deletes the instances wsched names (which also lowers the group's target
# size, so the MIG never picks a busy instance itself), then resizes the
# group to the target. Instances already gone are skipped, so retries are
# harmless.
#
# Settings (environment):
#   WSCHED_GCP_MIG       group name (default: wsched-$WSCHED_POOL)
#   WSCHED_GCP_ZONE      zone of a zonal group, or
#   WSCHED_GCP_REGION    region of a regional group
#   WSCHED_GCP_PROJECT   project (default: gcloud's configured one)
#   WSCHED_DRY_RUN=1     print the gcloud commands instead of running them
# Node names are instance names (what GCE hostnames are by default).
set -euo pipefail

: "${WSCHED_POOL:?not set: run this from the wsched exec actuator}"
: "${WSCHED_TARGET_SIZE:?not set: run this from the wsched exec actuator}"
mig="${WSCHED_GCP_MIG:-wsched-${WSCHED_POOL}}"
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

if [[ -n "${WSCHED_GCP_REGION:-}" ]]; then
  where=(--region="$WSCHED_GCP_REGION")
elif [[ -n "${WSCHED_GCP_ZONE:-}" ]]; then
  where=(--zone="$WSCHED_GCP_ZONE")
else
  echo "gcloud-mig: set WSCHED_GCP_ZONE or WSCHED_GCP_REGION" >&2
  exit 2
fi
if [[ -n "${WSCHED_GCP_PROJECT:-}" ]]; then
  where+=(--project="$WSCHED_GCP_PROJECT")
fi

if [[ -n "${WSCHED_NODES_TO_REMOVE:-}" ]]; then
  run gcloud compute instance-groups managed delete-instances "$mig" \
    --instances="$WSCHED_NODES_TO_REMOVE" --skip-instances-on-validation-error "${where[@]}"
fi

run gcloud compute instance-groups managed resize "$mig" \
  --size="$WSCHED_TARGET_SIZE" "${where[@]}"
