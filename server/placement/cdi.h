// Device spec for container workspaces: a CDI spec for the chosen GPUs.
#ifndef WSCHED_SERVER_PLACEMENT_CDI_H_
#define WSCHED_SERVER_PLACEMENT_CDI_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/node.h"
#include "server/core/workspace_class.h"

namespace wsched::placement {

inline constexpr char kCdiVersion[] = "0.5.0";
inline constexpr char kCdiKind[] = "nvidia.com/gpu";
inline constexpr int kNvidiaMajor = 195;  // /dev/nvidia<N> is char 195:N.

struct CdiSpec {
  // The spec (JSON): cdiVersion, kind, one device per GPU named by its UUID
  // with its /dev/nvidia<N> node, and top-level containerEdits with the
  // node's control devices, NVIDIA_VISIBLE_DEVICES and the class's extra
  // devices. Empty for a CPU class (there is no GPU kind to describe).
  std::string spec_json;
  // Qualified names ("nvidia.com/gpu=<uuid>") for runtimes that already have
  // NVIDIA's generated spec on the node.
  std::vector<std::string> device_names;
  // The class's extra devices (fuse, tun), deduplicated. For a GPU class they
  // are also merged into spec_json; a runtime that uses device_names with
  // its own spec adds these itself. For a CPU class this is all there is.
  std::vector<core::DeviceNode> extra_device_nodes;
};

// Builds the spec for `gpu_indices` (core::Gpu::index) on `node`. Device
// edits are merged, never overwritten: a path appears once and GPU and
// control nodes win over anything the class lists (see device_nodes.h).
// InvalidArgument: a vm class (use BuildVfioSpec), a GPU count that differs
// from the class, bad class devices. NotFound: a GPU the node lacks.
// FailedPrecondition: a GPU without a usable UUID.
absl::StatusOr<CdiSpec> BuildCdiSpec(const core::WorkspaceClass& cls, const core::NodeInfo& node,
                                     const std::vector<int>& gpu_indices);

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_CDI_H_
