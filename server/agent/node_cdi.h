// The node's CDI spec, end to end on the agent: decide the mode (wsched's
// own spec, or NVIDIA's where it is already there), describe every GPU or
// say why it cannot be described, keep the spec files in the node's CDI
// directory in step, and report what the server needs to answer with names.
#ifndef WSCHED_SERVER_AGENT_NODE_CDI_H_
#define WSCHED_SERVER_AGENT_NODE_CDI_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "server/agent/rooted_fs.h"
#include "server/core/node.h"

namespace wsched::agent {

inline constexpr char kGpuSpecFile[] = "wsched-gpu.json";
inline constexpr char kDeviceSpecFile[] = "wsched-device.json";

struct CdiOptions {
  // Where the agent writes its spec files, as the agent sees it (mount the
  // host's /var/run/cdi there in a container). Empty: CDI off; the server
  // then answers with the spec inline.
  std::string spec_dir;
  // Where NVIDIA's generated spec may be, as the agent sees them.
  std::vector<std::string> nvidia_spec_dirs;
  // How the node's container runtime sees the agent's --root (docs/agent.md).
  std::string host_root = "/";
};

struct SpecFile {
  std::string name;  // "wsched-gpu.json"
  std::string content;
};

struct NodeCdiPlan {
  core::NodeCdi cdi;
  std::map<std::string, std::string> gpu_names;     // UUID -> qualified CDI name.
  std::map<std::string, std::string> gpu_problems;  // UUID -> why it cannot be handed out.
  // Each slice of a GPU in MIG mode has a name or a problem, by SliceKey.
  // Only a usable slice's problem is also in cdi.problems: an unusable one
  // is reported unusable already, and no spec could give it a device.
  std::map<std::string, std::string> slice_names;
  std::map<std::string, std::string> slice_problems;
  std::vector<SpecFile> write;                      // Files that must hold exactly this.
  std::vector<std::string> remove;                  // Our files that must not exist.
};

// How the plan keys a slice: its MIG UUID, or "<GPU UUID>/gi<G>" without one.
std::string SliceKey(const core::Gpu& gpu, const core::MigInstance& slice);

// No GPU and no slice gets a name; each has `problem` as its reason.
void WithholdAll(const core::NodeInfo& node, const std::string& problem, NodeCdiPlan& plan);

// Pure but for reading the node's files (below `fs`'s root) and NVIDIA's
// spec directories.
NodeCdiPlan PlanNodeCdi(const RootedFs& fs, const core::NodeInfo& node, const CdiOptions& options);

// Makes the directory match `plan`: each file is written to a temporary
// name and renamed over the old one (a runtime never reads half a spec),
// only when its content changed; `remove` files are deleted.
absl::Status SyncSpecFiles(const std::string& dir, const NodeCdiPlan& plan);

// Sets node.cdi, each GPU's cdi_device and each slice's from `plan`.
void ApplyNodeCdi(const NodeCdiPlan& plan, core::NodeInfo& node);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_NODE_CDI_H_
