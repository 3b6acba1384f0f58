// Chooses which GPUs of one node a workspace gets.
#ifndef WSCHED_SERVER_PLACEMENT_GPU_ALLOCATOR_H_
#define WSCHED_SERVER_PLACEMENT_GPU_ALLOCATOR_H_

#include <optional>
#include <vector>

#include "server/core/feasibility.h"
#include "server/placement/nvlink_peers.h"

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

// How a choice weighs NVLink (docs/placement.md "Linked GPUs").
struct LinkRule {
  const NvlinkPeers* peers = nullptr;  // Null or empty: the node's links are unknown.
  bool require_linked = false;         // Only sets whose every two GPUs share NVLink.
  bool prefer_linked = false;          // Such a set first, when the node has one free.
};

// Beyond this many free units the link-aware search (every exact subset) is
// not worth it: the plain choice is made and, when links are required,
// kept only if it happens to be linked. Real hosts have <= 16 GPUs.
inline constexpr int kMaxUnitsSearchedForLinks = 16;

// Picks exactly `count` GPUs made of whole units. Never hands out part of a
// unit and never more than `count` GPUs: a unit that would overshoot is left
// for a class it fits. nullopt when no exact combination exists (or, with
// require_linked, no linked one). count <= 0 yields an empty set.
//
// Without NVLink peers: scored by GpuSetScore (fewest NUMA nodes, then best
// fit on them, then lowest indices). With them, LinkedSetScore: a linked set
// first when asked for, then fewest NUMA nodes, then fewest free NVLink
// pairs broken (so a single GPU goes where its peer is already taken and
// free pairs stay whole), then best fit, then lowest indices.
std::optional<std::vector<int>> ChooseGpus(std::vector<GpuUnit> units, int count,
                                           const LinkRule& links = {});

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_GPU_ALLOCATOR_H_
