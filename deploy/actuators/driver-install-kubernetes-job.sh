#!/usr/bin/env bash
# wsched driver install command example (the cluster face of driver installs,
# docs/operations.md "Driver installs"): runs the node's installer image as a
# Kubernetes Job pinned to the node, waits for it, prints its log, deletes it.
#
# wsched's scaling leader runs the command given by --driver_install_command
# once per node of a pool with driver_install: cluster that needs a driver,
# with the installer contract's environment (docs/agent.md "The installer
# contract"): WSCHED_NODE, WSCHED_KERNEL, WSCHED_OS, WSCHED_OS_ID,
# WSCHED_OS_VERSION, WSCHED_DRIVER_VERSION, WSCHED_IMAGE, WSCHED_DRIVER_CACHE,
# WSCHED_TIMEOUT_SECONDS. Exit 0 = the Job succeeded (the installer loaded the
# driver); the output's tail is kept for operators, and the installer's
# "wsched-driver-cache: hit|miss" line from the Job's log is passed through
# (and repeated last, so that a long log's tail still has it).
#
# The Job: one pod, backoffLimit 0 (wsched retries, with backoff), on exactly
# the node WSCHED_NODE names (a required node affinity on the node's name,
# metadata.name, as the DaemonSet controller pins its pods: the scheduler
# still places it, so the node's resources and admission hold) tolerating
# every taint (a GPU node without its driver is often tainted, cordoned or
# not ready for GPU work); privileged on the host's network, as the contract
# says; the host's /lib/modules and /usr/src read-write at the same paths,
# the cache (a host directory at /var/cache/wsched-driver, as the agent
# mounts it, or a PersistentVolumeClaim, or an object-store URL passed as it
# is), and the extra host paths below; activeDeadlineSeconds a little under
# WSCHED_TIMEOUT_SECONDS (the rest is for creating it, reading its log and
# deleting it within the timeout wsched gives this command), which is also
# the installer's own WSCHED_TIMEOUT_SECONDS; ttlSecondsAfterFinished as a
# safety net should this script be killed before it deletes the Job. No
# service account token, no host PID namespace (the contract needs none).
#
# kubectl 1.20 (Debian bookworm's kubernetes-client, in wsched's image) and
# later: two `kubectl wait`s, one per condition, since 1.20 cannot wait for
# either of two.
#
# Needs RBAC in the namespace: jobs create, get, watch, delete; pods list,
# get; pods/log get (the Helm chart's clusterDriverInstall values grant it).
# The namespace must admit privileged pods (Pod Security "privileged", as the
# chart's namespace for the agents already is).
#
# Settings (environment):
#   WSCHED_K8S_NAMESPACE        namespace of the Job (default: this pod's
#                               namespace, else wsched)
#   WSCHED_K8S_CACHE_PVC        a PersistentVolumeClaim (ReadWriteMany) holding the
#                               cache, instead of WSCHED_DRIVER_CACHE as a host directory
#   WSCHED_K8S_HOST_PATHS       more host directories mounted read-write at the same
#                               paths, comma-separated (default: /lib/firmware,/usr/local/nvidia,
#                               what deploy/driver-installer writes beyond the contract's mounts;
#                               empty: none)
#   WSCHED_K8S_PRIORITY_CLASS   priorityClassName of the pod (e.g. system-node-critical)
#   WSCHED_K8S_PULL_SECRET      an imagePullSecret for the installer image
#   WSCHED_K8S_TTL_SECONDS      ttlSecondsAfterFinished (default 3600)
#   WSCHED_K8S_KEEP_JOB=1       leave the finished Job for inspection (the TTL removes it)
#   WSCHED_NVIDIA_*             passed on to the installer as they are (e.g.
#                               WSCHED_NVIDIA_INSTALLER_URL for deploy/driver-installer)
#   WSCHED_KUBECTL              the kubectl command (default kubectl)
#   WSCHED_K8S_RENDER=1 or --render   print the Job's YAML and nothing else
#   WSCHED_DRY_RUN=1            print the kubectl commands instead of running them
set -euo pipefail

prog=driver-install-kubernetes-job
die() {
  echo "$prog: $*" >&2
  exit 2
}
render_only=${WSCHED_K8S_RENDER:-0}
for arg; do
  case "$arg" in
    --render) render_only=1 ;;
    *) die "unknown argument $arg (usage: $prog [--render])" ;;
  esac
done

for var in WSCHED_NODE WSCHED_KERNEL WSCHED_DRIVER_VERSION WSCHED_IMAGE; do
  [[ -n "${!var:-}" ]] || die "$var is not set: run this from wsched's --driver_install_command"
done
# Every value goes into the Job's YAML as a quoted string: none may hold a
# control character (a newline would start a field of its own).
while IFS= read -r var; do
  [[ "${!var}" != *[[:cntrl:]]* ]] || die "$var holds a control character"
done < <(compgen -e | grep -E '^WSCHED_')
node=$WSCHED_NODE
timeout_s=${WSCHED_TIMEOUT_SECONDS:-1800}
[[ "$timeout_s" =~ ^[1-9][0-9]*$ ]] || die "WSCHED_TIMEOUT_SECONDS=$timeout_s is not a number of seconds"
# A quarter of the timeout, at most a minute, is kept for this script's own
# steps; the Job gets the rest.
margin=$((timeout_s / 4 < 60 ? timeout_s / 4 : 60))
deadline=$((timeout_s - margin))
namespace=${WSCHED_K8S_NAMESPACE:-}
if [[ -z "$namespace" ]]; then
  namespace=$(cat /var/run/secrets/kubernetes.io/serviceaccount/namespace 2>/dev/null || echo wsched)
fi
ttl=${WSCHED_K8S_TTL_SECONDS:-3600}
[[ "$ttl" =~ ^[0-9]+$ ]] || die "WSCHED_K8S_TTL_SECONDS=$ttl is not a number of seconds"
read -r -a kubectl <<<"${WSCHED_KUBECTL:-kubectl}"
dry_run=${WSCHED_DRY_RUN:-0}
cache_mount=/var/cache/wsched-driver

# The Job's name: a DNS label of at most 63 characters (the pods' job-name
# label holds it), from the node's name and a hash of it, so that two long
# names never share one. One Job per node: wsched never runs two installs
# for one node at once, so an existing one is a leftover and is replaced.
node_hash=$(printf '%s' "$node" | sha256sum | cut -c1-8)
node_part=$(printf '%s' "$node" | tr '[:upper:]' '[:lower:]' | sed -E 's/[^a-z0-9]+/-/g; s/^-+//' |
  cut -c1-40 | sed -E 's/-+$//')
job=wsched-driver-${node_part:+$node_part-}$node_hash

# q VALUE: VALUE as a YAML (JSON) double-quoted string.
q() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$s"
}

render() {
  local name path i=0
  local cache=${WSCHED_DRIVER_CACHE:-} cache_env
  cat <<EOF
apiVersion: batch/v1
kind: Job
metadata:
  name: $job
  namespace: $(q "$namespace")
  labels:
    app.kubernetes.io/name: wsched-driver-install
    app.kubernetes.io/managed-by: wsched
  annotations:
    wsched.io/node: $(q "$node")
    wsched.io/kernel: $(q "$WSCHED_KERNEL")
    wsched.io/driver-version: $(q "$WSCHED_DRIVER_VERSION")
spec:
  backoffLimit: 0
  activeDeadlineSeconds: $deadline
  ttlSecondsAfterFinished: $ttl
  template:
    metadata:
      labels:
        app.kubernetes.io/name: wsched-driver-install
        app.kubernetes.io/managed-by: wsched
      annotations:
        wsched.io/node: $(q "$node")
    spec:
      restartPolicy: Never
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchFields:
                  - key: metadata.name
                    operator: In
                    values: [$(q "$node")]
      tolerations:
        - operator: Exists
      hostNetwork: true
      dnsPolicy: ClusterFirstWithHostNet
      automountServiceAccountToken: false
      enableServiceLinks: false
EOF
  [[ -n "${WSCHED_K8S_PRIORITY_CLASS:-}" ]] &&
    echo "      priorityClassName: $(q "$WSCHED_K8S_PRIORITY_CLASS")"
  if [[ -n "${WSCHED_K8S_PULL_SECRET:-}" ]]; then
    echo "      imagePullSecrets:"
    echo "        - name: $(q "$WSCHED_K8S_PULL_SECRET")"
  fi
  # The cache: a URL as it is; a claim or a host directory at the agent's path.
  if [[ "$cache" == *://* ]]; then
    cache_env=$cache
  elif [[ -n "${WSCHED_K8S_CACHE_PVC:-}" || -n "$cache" ]]; then
    [[ -n "${WSCHED_K8S_CACHE_PVC:-}" || "$cache" == /* ]] ||
      die "WSCHED_DRIVER_CACHE=$cache is neither an absolute path nor a URL"
    cache_env=$cache_mount
  else
    cache_env=
  fi
  cat <<EOF
      containers:
        - name: installer
          image: $(q "$WSCHED_IMAGE")
          imagePullPolicy: IfNotPresent
          securityContext:
            privileged: true
          env:
            - {name: WSCHED_NODE, value: $(q "$node")}
            - {name: WSCHED_KERNEL, value: $(q "$WSCHED_KERNEL")}
            - {name: WSCHED_OS, value: $(q "${WSCHED_OS:-${WSCHED_OS_ID:-}${WSCHED_OS_VERSION:-}}")}
            - {name: WSCHED_OS_ID, value: $(q "${WSCHED_OS_ID:-}")}
            - {name: WSCHED_OS_VERSION, value: $(q "${WSCHED_OS_VERSION:-}")}
            - {name: WSCHED_DRIVER_VERSION, value: $(q "$WSCHED_DRIVER_VERSION")}
            - {name: WSCHED_IMAGE, value: $(q "$WSCHED_IMAGE")}
            - {name: WSCHED_DRIVER_CACHE, value: $(q "$cache_env")}
            - {name: WSCHED_TIMEOUT_SECONDS, value: "$deadline"}
EOF
  while IFS= read -r name; do
    echo "            - {name: $name, value: $(q "${!name}")}"
  done < <(compgen -e | grep -E '^WSCHED_NVIDIA_[A-Z0-9_]+$' | sort)
  echo "          volumeMounts:"
  echo "            - {name: host-lib-modules, mountPath: /lib/modules}"
  echo "            - {name: host-usr-src, mountPath: /usr/src}"
  [[ "$cache_env" == "$cache_mount" ]] && echo "            - {name: driver-cache, mountPath: $cache_mount}"
  local extra=()
  IFS=',' read -r -a extra <<<"${WSCHED_K8S_HOST_PATHS-/lib/firmware,/usr/local/nvidia}"
  for path in "${extra[@]}"; do
    [[ -n "$path" ]] || continue
    [[ "$path" == /* ]] || die "WSCHED_K8S_HOST_PATHS: $path is not an absolute path"
    echo "            - {name: host-path-$i, mountPath: $(q "$path")}"
    i=$((i + 1))
  done
  echo "      volumes:"
  echo "        - name: host-lib-modules"
  echo "          hostPath: {path: /lib/modules, type: Directory}"
  echo "        - name: host-usr-src"
  echo "          hostPath: {path: /usr/src, type: Directory}"
  if [[ "$cache_env" == "$cache_mount" ]]; then
    echo "        - name: driver-cache"
    if [[ -n "${WSCHED_K8S_CACHE_PVC:-}" ]]; then
      echo "          persistentVolumeClaim: {claimName: $(q "$WSCHED_K8S_CACHE_PVC")}"
    else
      echo "          hostPath: {path: $(q "$cache"), type: DirectoryOrCreate}"
    fi
  fi
  i=0
  for path in "${extra[@]}"; do
    [[ -n "$path" ]] || continue
    echo "        - name: host-path-$i"
    echo "          hostPath: {path: $(q "$path"), type: DirectoryOrCreate}"
    i=$((i + 1))
  done
}

yaml=$(render)
if [[ "$render_only" == 1 ]]; then
  echo "$yaml"
  exit 0
fi

k() { "${kubectl[@]}" --namespace "$namespace" "$@"; }
# run COMMAND...: runs it, or prints it (shell-quoted) in a dry run.
run() {
  if [[ "$dry_run" == 1 ]]; then
    local line
    printf -v line '%q ' "${kubectl[@]}" --namespace "$namespace" "$@"
    echo "${line% }"
  else
    k "$@"
  fi
}

echo "$prog: node $node: driver $WSCHED_DRIVER_VERSION for kernel $WSCHED_KERNEL with $WSCHED_IMAGE" \
  "(Job $namespace/$job, deadline ${deadline}s)"
if [[ "$dry_run" == 1 ]]; then
  run delete job "$job" --ignore-not-found --wait=true
  run create -f -
  run wait "job/$job" --for=condition=complete --timeout="$((deadline + margin / 2))s"
  run wait "job/$job" --for=condition=failed --timeout="$((deadline + margin / 2))s"
  run logs "job/$job" --all-containers
  run delete job "$job" --ignore-not-found --wait=false
  exit 0
fi

waiters=()
# shellcheck disable=SC2317 # called by the trap below
cleanup_job() {
  local pid
  for pid in "${waiters[@]}"; do kill "$pid" 2>/dev/null || true; done
  [[ "${WSCHED_K8S_KEEP_JOB:-0}" == 1 ]] || k delete job "$job" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}
trap 'cleanup_job; echo "$prog: stopped" >&2; exit 143' TERM INT

# A leftover of a killed run is replaced.
k delete job "$job" --ignore-not-found --wait=true >/dev/null
if ! k create -f - <<<"$yaml"; then
  echo "$prog: could not create Job $namespace/$job" >&2
  exit 1
fi

# Complete or failed, whichever comes first (activeDeadlineSeconds makes a
# Job that runs too long fail with DeadlineExceeded).
wait_for=$((deadline + margin / 2))
# kubectl itself in the background (not through k, whose subshell would be
# what $! names): killing a waiter must end its kubectl, not orphan it.
"${kubectl[@]}" --namespace "$namespace" wait "job/$job" --for=condition=complete \
  --timeout="${wait_for}s" >/dev/null 2>&1 &
waiters+=($!)
"${kubectl[@]}" --namespace "$namespace" wait "job/$job" --for=condition=failed \
  --timeout="${wait_for}s" >/dev/null 2>&1 &
waiters+=($!)
wait -n "${waiters[@]}" || true
for pid in "${waiters[@]}"; do kill "$pid" 2>/dev/null || true; done
wait 2>/dev/null || true
waiters=()

conditions=$(k get job "$job" -o \
  'jsonpath={range .status.conditions[?(@.status=="True")]}{.type}{"\t"}{.reason}{"\t"}{.message}{"\n"}{end}' 2>&1) ||
  conditions=
logs=$(k logs "job/$job" --all-containers 2>&1) || logs="$prog: no log: $logs"
echo "--- log of Job $namespace/$job:"
echo "$logs"
echo "---"
cache_line=$(grep -E '^wsched-driver-cache: (hit|miss)$' <<<"$logs" | tail -n 1) || true

status=1
if grep -q '^Complete' <<<"$conditions"; then
  status=0
  echo "$prog: Job $job succeeded on node $node"
elif failed=$(grep '^Failed' <<<"$conditions"); then
  IFS=$'\t' read -r _ reason message <<<"$failed"
  echo "$prog: Job $job failed on node $node: ${reason:-failed}${message:+ ($message)}"
else
  echo "$prog: Job $job did not finish within ${wait_for}s on node $node"
fi
if ((status != 0)); then
  # What the pod is stuck on, when its log is empty (an image that cannot
  # be pulled, a node that does not take it).
  k get pods --selector="job-name=$job" -o \
    'jsonpath={range .items[*]}pod {.metadata.name}: {.status.phase}{range .status.containerStatuses[*]} {.state.waiting.reason}{.state.terminated.reason} {.state.waiting.message}{end}{"\n"}{end}' \
    2>/dev/null || true
fi
[[ "${WSCHED_K8S_KEEP_JOB:-0}" == 1 ]] || k delete job "$job" --ignore-not-found --wait=false >/dev/null 2>&1 || true
[[ -n "$cache_line" ]] && echo "$cache_line"
exit "$status"
