// Filters: which pools could ever hold a class, which nodes take work now.
#ifndef WSCHED_SERVER_PLACEMENT_FILTERS_H_
#define WSCHED_SERVER_PLACEMENT_FILTERS_H_

#include <string>
#include <vector>

#include "server/core/node.h"
#include "server/core/pool.h"
#include "server/core/workspace_class.h"
#include "server/placement/capacity_index.h"
#include "server/placement/resources.h"

namespace wsched::placement {

// A node takes new workspaces only when it is ready and its driver is ready
// for its running kernel; a node without GPUs, or whose GPUs pass through to
// VMs (gpu_binding vfio), needs no driver (kNotNeeded).
// The rule is the same for CPU classes: a GPU node waiting for its driver
// installer is about to be worked on, so it takes nothing new.
bool NodeAcceptsWork(core::NodeState state, core::DriverState driver_state, bool has_gpus);

// The pools a class may use, in preference tiers: those that could ever
// hold it (core::CanEverHold, the rule catalog validation applies too).
// Nodes of one tier compete on packing score; a later tier is tried only
// when no node of the earlier ones fits now.
//  - GPU class: one tier per model in `gpu.models` (first preferred, later
//    ones fallbacks), pools in catalog order; one tier of every GPU pool
//    when `models` is empty.
//  - CPU class: one tier. GPU pools are guarded (like Ray's non-GPU node
//    filter and Mesos' filterGpuResources): a CPU class uses them only when
//    its selector names them on purpose (core/feasibility.h, rule 4), so GPU
//    nodes stay free to scale to zero.
//
// VM isolation is not judged here: whether future nodes have safe IOMMU
// groups cannot be known, so no safe GPU now is "not now", not "never".
struct PoolPlan {
  std::vector<std::vector<const core::NodePool*>> tiers;
  bool empty() const { return tiers.empty(); }
};
PoolPlan PlanPools(const core::WorkspaceClass& cls, const std::vector<core::NodePool>& pools);

// How free GPUs are counted for this class on this pool.
GpuView ViewFor(const core::WorkspaceClass& cls, const core::NodePool& pool);

// Feasible vs available, the feasible half: which pools could ever hold the
// class (preferred first), or why none can.
struct Feasibility {
  std::vector<std::string> pools;
  std::string reason;  // Set when `pools` is empty.
  bool ok() const { return !pools.empty(); }
};
Feasibility CanEverFit(const core::WorkspaceClass& cls, const std::vector<core::NodePool>& pools);

// The reason for Never: every pool with why it cannot hold the class
// (core::CanEverHold's message), at most 8 of them.
std::string WhyNoPool(const core::WorkspaceClass& cls, const std::vector<core::NodePool>& pools);

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_FILTERS_H_
