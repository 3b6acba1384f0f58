// A node pool: a group of identical nodes the autoscaler sizes.
#ifndef WSCHED_SERVER_CORE_POOL_H_
#define WSCHED_SERVER_CORE_POOL_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/time/time.h"

namespace wsched::core {

// Allocatable resources of one node.
struct NodeShape {
  int64_t cpu_millis = 0;
  int64_t memory_bytes = 0;
  int64_t ephemeral_storage_bytes = 0;
  int64_t disk_bytes = 0;
  int gpus_per_node = 0;
  std::string gpu_model;  // Empty for CPU pools.
  friend bool operator==(const NodeShape&, const NodeShape&) = default;
};

struct ScaleDownSettings {
  // A node must be empty this long before it is named for removal.
  absl::Duration unneeded = absl::Minutes(10);
  // No scale-down of a pool this soon after it scaled up.
  absl::Duration delay_after_add = absl::Minutes(10);
  friend bool operator==(const ScaleDownSettings&, const ScaleDownSettings&) = default;
};

struct NodePool {
  std::string id;  // DNS label.
  std::map<std::string, std::string> labels;
  NodeShape shape;
  int min_size = 0;
  int max_size = 0;
  ScaleDownSettings scale_down;
  // A node not registered within this time counts as failed.
  absl::Duration max_node_provision_time = absl::Minutes(15);
  // Extra empty nodes kept ready.
  int warm_buffer = 0;
  // Let VM classes take GPUs whose IOMMU group holds foreign devices.
  bool allow_unsafe_iommu = false;

  bool is_gpu() const { return shape.gpus_per_node > 0; }

  // True when every selector label is on the pool.
  bool Matches(const std::map<std::string, std::string>& selector) const {
    for (const auto& [key, value] : selector) {
      auto it = labels.find(key);
      if (it == labels.end() || it->second != value) return false;
    }
    return true;
  }
  friend bool operator==(const NodePool&, const NodePool&) = default;
};

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_POOL_H_
