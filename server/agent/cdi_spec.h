// wsched's node-level CDI specs, as JSON documents (cdiVersion 0.5.0):
//  - kind wsched.io/gpu: one device per GPU, named by its UUID, with its
//    /dev/nvidia<N>; shared edits with the control nodes, the driver's
//    libraries, utilities, firmware and sockets, and NVIDIA's CDI hook
//    (symlinks, linker cache) when it is installed;
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

// `files` come without problems, so with a hook (DiscoverDriverFiles).
std::string BuildGpuSpec(const core::NodeInfo& node, const DriverFiles& files,
                         const std::string& host_root);

struct NamedDevice {
  std::string name;  // Device name within wsched.io/device: "fuse".
  core::DeviceNode node;
};
std::string BuildDeviceSpec(const std::vector<NamedDevice>& devices, const std::string& host_root);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_CDI_SPEC_H_
