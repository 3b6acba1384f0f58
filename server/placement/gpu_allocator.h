// Chooses which GPUs of one node a workspace gets.
#ifndef WSCHED_SERVER_PLACEMENT_GPU_ALLOCATOR_H_
#define WSCHED_SERVER_PLACEMENT_GPU_ALLOCATOR_H_

#include <optional>
#include <vector>

#include "server/core/feasibility.h"

namespace wsched::placement {

// GPUs that can only be handed out together: a single GPU for containers,
// a whole IOMMU group for VMs.
struct GpuUnit {
  std::vector<int> indices;  // GPU indices (core::Gpu::index).
  int numa_node = -1;        // -1: unknown (counts as one more NUMA node).
};

// The largest class the allocator handles; larger counts never fit (and
// core::CanEverHold calls such a class infeasible everywhere).
inline constexpr int kMaxGpusPerWorkspace = core::kMaxGpusPerWorkspace;

// Picks exactly `count` GPUs made of whole units, scored by GpuSetScore
// (fewest NUMA nodes, then best fit on them, then lowest indices). Never
// hands out part of a unit and never more than `count` GPUs: a unit that
// would overshoot is left for a class it fits. nullopt when no exact
// combination exists. count <= 0 yields an empty set.
std::optional<std::vector<int>> ChooseGpus(std::vector<GpuUnit> units, int count);

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_GPU_ALLOCATOR_H_
