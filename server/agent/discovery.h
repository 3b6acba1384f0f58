// Discovery: what the agent reports about its node, read from sysfs/procfs
// below a root directory (never the network), so it runs against fake trees.
#ifndef WSCHED_SERVER_AGENT_DISCOVERY_H_
#define WSCHED_SERVER_AGENT_DISCOVERY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/agent/nvidia_layout.h"
#include "server/agent/nvidia_smi.h"
#include "server/core/node.h"

namespace wsched::agent {

struct DiscoveryOptions {
  // The node's "/" as seen by the agent: "/" on the host, the host mount
  // ("/host") in a container, a fake tree in tests.
  std::string root = "/";
  // Empty: the root's hostname.
  std::string node_name;
  std::string pool;
  std::string provider_id;
  // The latest nvidia-smi sample, if any. It supplies GPU memory, and the
  // UUID and model of GPUs whose /proc/driver/nvidia information is hidden.
  std::vector<GpuUsage> nvidia_smi;
  // MIG modes, profiles and slices, and links between GPUs, as nvidia-smi
  // said (nvidia_layout.h); matched to GPUs by PCI address. Empty: GPUs
  // are reported without MIG and without links.
  NvidiaLayout nvidia_layout;
};

// Reads the node's kernel, OS, CPUs, memory, NVIDIA driver, GPUs (with their
// IOMMU groups, MIG slices and links) and NVIDIA control device nodes. GPUs
// come sorted by index. Fails when a file every Linux host has is unreadable
// - usually a wrong root - and when a file of the driver's that exists
// cannot be read.
absl::StatusOr<core::NodeInfo> DiscoverNode(const DiscoveryOptions& options);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_DISCOVERY_H_
