#!/bin/bash
# The node's own podman, run from the wsched agent's pod: the agent's
# --driver_install_runtime in a pool with agent.driverInstall (values.yaml).
# The agent reads the host below --root (/host) and so names the host's
# /lib/modules and /usr/src as /host/lib/modules and /host/usr/src in its
# `podman run -v` arguments; this maps them back to the host's paths, makes
# any missing host directory a -v names (podman refuses a missing one), and
# runs podman in the host's namespaces (pid 1's: the pod has hostPID and is
# privileged), so the installer container is the host's, as with the
# systemd unit: the host's podman, image store and network.
#   host-podman ARGS...   what the agent would pass to podman
set -euo pipefail
root=${WSCHED_AGENT_ROOT:-/host}
enter=("${WSCHED_NSENTER:-nsenter}" --target 1 --mount --uts --ipc --net --pid --)
args=()
prev=
for arg; do
  if [[ "$prev" == -v || "$prev" == --volume ]]; then
    [[ "$arg" == "$root"/* ]] && arg=${arg#"$root"}
    source=${arg%%:*}
    if [[ "$source" == /* ]]; then
      "${enter[@]}" mkdir -p -- "$source"
    fi
  fi
  args+=("$arg")
  prev=$arg
done
exec "${enter[@]}" podman "${args[@]}"
