// A workspace class: what a user picks when starting a workspace.
#ifndef WSCHED_SERVER_CORE_WORKSPACE_CLASS_H_
#define WSCHED_SERVER_CORE_WORKSPACE_CLASS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/core/idle_policy.h"

namespace wsched::core {

enum class Isolation { kContainer, kVm };

// Whether a multi-GPU class needs its GPUs joined by NVLink
// (docs/catalog.md "Linked GPUs").
enum class GpuLinks {
  kAny,               // Any GPUs of the node.
  kNvlinkPreferred,   // An NVLink-connected set when a node has one free, else any.
  kNvlinkRequired,    // Only an NVLink-connected set; waits otherwise.
};

// A device node made inside the workspace, e.g. /dev/fuse c 10:229.
struct DeviceNode {
  std::string path;
  char type = 'c';
  int64_t major = 0;
  int64_t minor = 0;
  std::string permissions = "rwm";
  friend bool operator==(const DeviceNode&, const DeviceNode&) = default;
};

struct ClassResources {
  int64_t cpu_request_millis = 0;
  int64_t cpu_limit_millis = 0;
  int64_t memory_bytes = 0;
  int64_t ephemeral_storage_bytes = 0;
  int64_t disk_bytes = 0;
  friend bool operator==(const ClassResources&, const ClassResources&) = default;
};

struct GpuRequirement {
  int count = 0;  // 0 = CPU-only class.
  // Acceptable models, preferred first; empty = any.
  std::vector<std::string> models;
  Isolation isolation = Isolation::kContainer;
  GpuLinks links = GpuLinks::kAny;
  // A slice class (count 0): one MIG slice of the first of these profiles
  // ("1g.18gb") that has one free, instead of whole GPUs. Containers only.
  std::vector<std::string> mig_profiles;
  friend bool operator==(const GpuRequirement&, const GpuRequirement&) = default;
};

struct WorkspaceClass {
  std::string id;  // DNS label, immutable.
  std::string display_name;
  std::string description;
  std::string category;
  ClassResources resources;
  GpuRequirement gpu;
  std::vector<DeviceNode> devices;
  std::map<std::string, std::string> pool_selector;
  int64_t credits_per_minute_milli = 0;
  bool is_default = false;
  bool deprecated = false;
  // GPU classes only: what to do when the workspace's GPUs sit idle.
  std::optional<IdlePolicy> idle;
  int64_t version = 0;  // Etag; bumped by the store on every change.

  bool is_gpu() const { return gpu.count > 0; }
  // One MIG slice instead of whole GPUs (docs/catalog.md "Slices").
  bool is_slice() const { return !gpu.mig_profiles.empty(); }

  // Equal in everything an admin sets (ignores version).
  bool SameSpec(const WorkspaceClass& other) const {
    WorkspaceClass a = *this, b = other;
    a.version = b.version = 0;
    return a == b;
  }
  friend bool operator==(const WorkspaceClass&, const WorkspaceClass&) = default;
};

const char* IsolationName(Isolation isolation);
// "any", "nvlink_preferred", "nvlink_required"; nullopt for another name.
const char* GpuLinksName(GpuLinks links);
std::optional<GpuLinks> ParseGpuLinks(absl::string_view name);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_WORKSPACE_CLASS_H_
