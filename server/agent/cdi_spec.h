// wsched's node-level CDI specs, as JSON documents (cdiVersion 0.5.0):
//  - kind wsched.io/gpu: one device per GPU, named by its UUID, with its
//    /dev/nvidia<N>; one per MIG slice, named by its MIG UUID, with its
//    GPU's /dev/nvidia<N> and its own two capability nodes; shared edits
//    with the control nodes, the driver's libraries, utilities, firmware and
//    sockets, and the CDI hook (symlinks, linker cache);
//  - kind wsched.io/device: the extra device nodes classes ask for (fuse, tun, kvm).
// Pure: what goes in was discovered before (driver_files.h, discovery.h).
#ifndef WSCHED_SERVER_AGENT_CDI_SPEC_H_
#define WSCHED_SERVER_AGENT_CDI_SPEC_H_

#include <string>
#include <vector>

#include "server/agent/driver_files.h"
#include "server/core/node.h"
#include "server/core/workspace_class.h"

namespace wsched::agent {

// Paths in a spec are the node's as its container runtime sees them:
// `host_root` + the path discovery found below the agent's --root ("/" on a
// host or with the host mounted at /host; the fake tree itself in tests).
std::string HostPath(const std::string& host_root, const std::string& node_path);

// A MIG slice as a device of its own: what a container needs to use that
// slice and no other (docs/agent.md "Slices as CDI devices").
struct SliceDevice {
  std::string uuid;   // "MIG-...": the device's name and NVIDIA_VISIBLE_DEVICES.
  int gpu_index = 0;  // The N of its GPU's /dev/nvidiaN.
  core::DeviceNode gi_access;
  core::DeviceNode ci_access;
};

// `files` come without problems, so with a hook (DiscoverDriverFiles).
// `slices` are added after the GPUs, in their order.
std::string BuildGpuSpec(const core::NodeInfo& node, const DriverFiles& files,
                         const std::string& host_root, const std::vector<SliceDevice>& slices = {});

struct NamedDevice {
  std::string name;  // Device name within wsched.io/device: "fuse".
  core::DeviceNode node;
};
std::string BuildDeviceSpec(const std::vector<NamedDevice>& devices, const std::string& host_root);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_CDI_SPEC_H_
