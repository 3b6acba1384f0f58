#!/usr/bin/env bash
# Checks the example actuators: each is valid bash, refuses to run without
# the wsched environment, and in dry run prints the expected cloud CLI
# commands without running any CLI. Run by ctest (actuator_scripts).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# Stand-in CLIs on PATH: a dry run must never call one.
mkdir -p "$scratch/bin"
for cli in aws gcloud az kubectl; do
  printf '#!/bin/sh\necho "%s called in dry run: $*" >>"%s/called"\nexit 99\n' \
    "$cli" "$scratch" >"$scratch/bin/$cli"
  chmod +x "$scratch/bin/$cli"
done

signal_env=(
  WSCHED_DRY_RUN=1
  WSCHED_POOL=gpu-a100
  WSCHED_GENERATION=7
  WSCHED_CURRENT_SIZE=3
  WSCHED_TARGET_SIZE=2
  WSCHED_NODES_TO_REMOVE=node-1
  WSCHED_REASON=idle_timeout
  "PATH=$scratch/bin:$PATH"
)
signal_args=(--pool=gpu-a100 --generation=7 --current=3 --target=2
  --nodes-to-remove=node-1 --reason=idle_timeout)

# expect SCRIPT EXTRA_ENV... -- EXPECTED_LINE...
expect() {
  local script="$1"
  shift
  local extra=()
  while [[ "$1" != "--" ]]; do
    extra+=("$1")
    shift
  done
  shift
  local out
  if ! out="$(env "${signal_env[@]}" "${extra[@]}" bash "$here/$script" "${signal_args[@]}" 2>"$scratch/stderr")"; then
    fail "$script exited non-zero in dry run: $(cat "$scratch/stderr")"
    return
  fi
  local line
  for line in "$@"; do
    if ! grep -qxF -- "$line" <<<"$out"; then
      fail "$script: missing line: $line"
      echo "--- got:" >&2
      echo "$out" >&2
    fi
  done
}

scripts=(aws-asg.sh gcloud-mig.sh azure-vmss.sh kubernetes-cluster-autoscaler.sh fake-register-agents.sh)
for script in "${scripts[@]}"; do
  bash -n "$here/$script" || fail "$script: syntax error"
  [[ -x "$here/$script" ]] || fail "$script: not executable"
  if env -u WSCHED_POOL -u WSCHED_TARGET_SIZE WSCHED_DRY_RUN=1 bash "$here/$script" \
    >/dev/null 2>&1; then
    fail "$script: ran without WSCHED_POOL / WSCHED_TARGET_SIZE"
  fi
done

expect aws-asg.sh -- \
  "aws autoscaling terminate-instance-in-auto-scaling-group --instance-id \\<instance-id-of-node-1\\> --should-decrement-desired-capacity" \
  "aws autoscaling set-desired-capacity --auto-scaling-group-name wsched-gpu-a100 --desired-capacity 2"
expect aws-asg.sh WSCHED_AWS_ASG_NAME=my-asg WSCHED_NODES_TO_REMOVE=i-0abc123 -- \
  "aws autoscaling terminate-instance-in-auto-scaling-group --instance-id i-0abc123 --should-decrement-desired-capacity" \
  "aws autoscaling set-desired-capacity --auto-scaling-group-name my-asg --desired-capacity 2"
expect gcloud-mig.sh WSCHED_GCP_ZONE=us-central1-a -- \
  "gcloud compute instance-groups managed delete-instances wsched-gpu-a100 --instances=node-1 --skip-instances-on-validation-error --zone=us-central1-a" \
  "gcloud compute instance-groups managed resize wsched-gpu-a100 --size=2 --zone=us-central1-a"
expect gcloud-mig.sh WSCHED_GCP_REGION=europe-west4 WSCHED_NODES_TO_REMOVE= WSCHED_TARGET_SIZE=5 -- \
  "gcloud compute instance-groups managed resize wsched-gpu-a100 --size=5 --region=europe-west4"
expect azure-vmss.sh WSCHED_AZURE_RESOURCE_GROUP=rg-gpu -- \
  "az vmss delete-instances --resource-group rg-gpu --name wsched-gpu-a100 --instance-ids \\<instance-id-of-node-1\\>" \
  "az vmss scale --resource-group rg-gpu --name wsched-gpu-a100 --new-capacity 2"
expect kubernetes-cluster-autoscaler.sh WSCHED_K8S_NODES=node-0,node-1,node-2 -- \
  "kubectl annotate node node-0 --overwrite cluster-autoscaler.kubernetes.io/scale-down-disabled=true" \
  "kubectl annotate node node-2 --overwrite cluster-autoscaler.kubernetes.io/scale-down-disabled=true" \
  "kubectl annotate node node-1 cluster-autoscaler.kubernetes.io/scale-down-disabled-"
expect kubernetes-cluster-autoscaler.sh -- \
  "kubectl get nodes --selector=wsched.io/pool=gpu-a100 --output=jsonpath=\\{.items\\[\\*\\].metadata.name\\}"
expect fake-register-agents.sh WSCHED_TARGET_SIZE=4 -- \
  "pool=gpu-a100 generation=7 current=3 target=4 reason=idle_timeout" \
  "would remove node node-1" \
  "would register 2 fake agents in pool gpu-a100"

# The driver install command (the cluster face of driver installs) has the
# installer contract's environment instead of a signal's: valid bash,
# refuses to run without it, and in dry run prints its kubectl commands.
# (tests/deploy/driver_install_job_test.py renders and checks its Job.)
job_script=driver-install-kubernetes-job.sh
bash -n "$here/$job_script" || fail "$job_script: syntax error"
[[ -x "$here/$job_script" ]] || fail "$job_script: not executable"
if env -u WSCHED_NODE WSCHED_DRY_RUN=1 bash "$here/$job_script" >/dev/null 2>&1; then
  fail "$job_script: ran without WSCHED_NODE"
fi
contract_env=(WSCHED_DRY_RUN=1 "PATH=$scratch/bin:$PATH" WSCHED_NODE=gpu-node-1 WSCHED_KERNEL=6.1.0-18-amd64
  WSCHED_OS=debian12 WSCHED_OS_ID=debian WSCHED_OS_VERSION=12 WSCHED_DRIVER_VERSION=550.54.15
  WSCHED_IMAGE=registry.example.com/nvidia/driver:550-6.1.0-18-amd64-debian12
  WSCHED_DRIVER_CACHE=/var/cache/wsched/driver WSCHED_TIMEOUT_SECONDS=1800 WSCHED_K8S_NAMESPACE=wsched)
if ! out="$(env "${contract_env[@]}" bash "$here/$job_script" 2>"$scratch/stderr")"; then
  fail "$job_script exited non-zero in dry run: $(cat "$scratch/stderr")"
fi
for line in \
  "kubectl --namespace wsched delete job wsched-driver-gpu-node-1-4e7f7f2d --ignore-not-found --wait=true" \
  "kubectl --namespace wsched create -f -" \
  "kubectl --namespace wsched wait job/wsched-driver-gpu-node-1-4e7f7f2d --for=condition=complete --timeout=1770s" \
  "kubectl --namespace wsched logs job/wsched-driver-gpu-node-1-4e7f7f2d --all-containers"; do
  grep -qxF -- "$line" <<<"$out" || fail "$job_script: missing line: $line (got: $out)"
done

# A node wsched names for removal is never protected, and a kept one never
# loses its protection.
out="$(env "${signal_env[@]}" WSCHED_K8S_NODES=node-0,node-1 bash "$here/kubernetes-cluster-autoscaler.sh" 2>/dev/null)"
if grep -q "node-1 --overwrite" <<<"$out" || grep -q "node-0 cluster-autoscaler" <<<"$out"; then
  fail "kubernetes-cluster-autoscaler.sh: wrong node protected or released: $out"
fi

if [[ -e "$scratch/called" ]]; then
  fail "a dry run called a CLI: $(cat "$scratch/called")"
fi
if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "actuator scripts: all checks passed"
