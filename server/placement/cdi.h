// Device spec for container workspaces: a CDI spec for the chosen GPUs.
#ifndef WSCHED_SERVER_PLACEMENT_CDI_H_
#define WSCHED_SERVER_PLACEMENT_CDI_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/cdi_names.h"
#include "server/core/node.h"
#include "server/core/workspace_class.h"

namespace wsched::placement {

inline constexpr int kNvidiaMajor = 195;  // /dev/nvidia<N> is char 195:N.

// What a container runtime needs to start a workspace's container with
// its devices. Two shapes, by the node's CDI mode (core::NodeCdi):
//  - inline (a node that reported no CDI information): the spec itself, for
//    a caller that writes it to the node, as before node specs existed;
//  - node (wsched's or NVIDIA's spec is in the node's CDI directory): only
//    the names, and the podman and Kubernetes forms that request them.
struct CdiSpec {
  core::CdiMode mode = core::CdiMode::kInline;
  // Inline only. The spec (JSON): cdiVersion, kind, one device per GPU
  // named by its UUID with its /dev/nvidia<N> node, and top-level
  // containerEdits with the node's control devices, NVIDIA_VISIBLE_DEVICES
  // and the class's extra devices. Empty for a CPU class.
  std::string spec_json;
  // Qualified names: the GPUs' ("nvidia.com/gpu=<uuid>" inline,
  // the node spec's names otherwise), then in node mode the class's extra
  // devices the node's wsched.io/device spec names.
  std::vector<std::string> device_names;
  // The class's extra devices (fuse, tun), deduplicated. Inline, for a GPU
  // class they are also merged into spec_json.
  std::vector<core::DeviceNode> extra_device_nodes;
  // Node mode only from here on.
  std::vector<std::string> env;          // "NVIDIA_VISIBLE_DEVICES=<its GPUs' UUIDs>".
  std::vector<std::string> podman_args;  // "--device", name, ..., "--env", env, ...
  std::string node_name;                 // The pod's spec.nodeName.
  std::map<std::string, std::string> pod_annotations;  // cdi.k8s.io/... -> names.
  // Class devices the node's spec does not name: podman gets them by path;
  // a pod cannot request them.
  std::vector<std::string> unnamed_devices;
};

// The Kubernetes annotation key wsched's answers use (CDI's rules, core/cdi_names.h).
inline constexpr char kCdiAnnotationPlugin[] = "wsched";
inline constexpr char kCdiAnnotationDevice[] = "workspace";

// Builds the answer for `gpu_indices` (core::Gpu::index) on `node`. Device
// edits are merged, never overwritten: a path appears once and GPU and
// control nodes win over anything the class lists (see device_nodes.h).
// InvalidArgument: a vm class (use BuildVfioSpec), a GPU count that differs
// from the class, bad class devices. NotFound: a GPU the node lacks.
// FailedPrecondition: a GPU without a usable UUID, or on a node with a CDI
// spec, a GPU that spec does not name (with the node's CDI problems).
absl::StatusOr<CdiSpec> BuildCdiSpec(const core::WorkspaceClass& cls, const core::NodeInfo& node,
                                     const std::vector<int>& gpu_indices);

// The same for one MIG slice of a slice class: one device, the slice, named
// by its MIG UUID, with its parent GPU's node and its own two capability
// nodes. InvalidArgument: not a slice class, bad class devices. NotFound: no
// such GPU or GPU instance. FailedPrecondition: the slice lacks a UUID or
// capability nodes, or the node's spec does not name it.
absl::StatusOr<CdiSpec> BuildSliceCdiSpec(const core::WorkspaceClass& cls,
                                          const core::NodeInfo& node, const core::HeldSlice& slice);

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_CDI_H_
