// MIG layouts by demand: which idle GPU of a `by_demand` pool to cut anew,
// and into which slices, so that pending slice workspaces whose profile no
// free slice holds can be placed (docs/placement.md "Layouts by demand").
// Pure: no I/O, no clock; the caller passes `now` and keeps the orders.
//
// The rules, each for a reason:
//  - Only pools whose layout is kByDemand: a fixed layout is the admin's.
//  - Only for a pending workspace that the free slices of its pools cannot
//    serve, counting them off in queue order (the workspaces ahead take
//    theirs first) and counting the slices of the re-layouts under way as
//    coming: a workspace already served by one never asks for another.
//  - Only a GPU whose slices are all unheld, that is not held whole, in MIG
//    mode with no mode change pending, healthy, with its own profile table:
//    destroying a slice kills whatever runs in it, so a GPU that holds one
//    is never touched. Nor a GPU whose free slices the workspaces ahead in
//    the queue count on, on a node without CPU and memory for the workspace.
//  - At most one GPU per node under way (the orders given before and the
//    new ones): a node whose agent is cutting a GPU still serves the others,
//    and a failure costs one GPU.
//  - The new layout serves the demand first, then keeps the GPU's slices
//    that do not stand in its way, then fills what is left with the pool's
//    starting profiles, then with the smallest profile; every slice at a
//    legal start (mig_packing.h). Among the GPUs that can take it, the one
//    whose new layout strands the fewest slots, then loses the fewest of
//    the slices it has, then sits on the node with the fewest free slices
//    (idle nodes stay whole for scale-down), then by name and index.
//  - Bounded work per call (RelayoutLimits): a fleet-wide walk at most once
//    per call, and only when some demand is unmet.
#ifndef WSCHED_SERVER_PLACEMENT_RELAYOUT_PLAN_H_
#define WSCHED_SERVER_PLACEMENT_RELAYOUT_PLAN_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "server/core/pool.h"
#include "server/core/workspace_class.h"
#include "server/placement/snapshot.h"

namespace wsched::placement {

// One slice of a new layout: a profile of the GPU's own table at one of its
// legal starts.
struct PlannedSlice {
  std::string profile;
  int start = 0;
  friend bool operator==(const PlannedSlice&, const PlannedSlice&) = default;
};

// Cut GPU `gpu_index` of `node` into `layout`, destroying what it has.
struct RelayoutOrder {
  std::string node;
  std::string pool;
  int gpu_index = -1;
  std::vector<PlannedSlice> layout;  // By start.
  // The profile of the pending workspace it was made for ("3g.71gb"), for
  // the pending reason and the logs.
  std::string for_profile;
  absl::Time ordered_at = absl::InfinitePast();
  friend bool operator==(const RelayoutOrder&, const RelayoutOrder&) = default;
};

struct RelayoutLimits {
  int max_orders = 4;  // New orders per call.
  // Idle GPUs looked at per call: a huge idle fleet is sampled in node
  // order rather than walked whole.
  int max_gpus = 4096;
};

struct RelayoutInputs {
  // With the GPUs of `under_way` marked (Snapshot::SetRelayouts), so that
  // their slices do not count as free.
  const Snapshot* snapshot = nullptr;
  const std::vector<core::NodePool>* pools = nullptr;
  // The classes of the pending workspaces in queue order; null entries and
  // classes that are not slices are skipped.
  std::vector<const core::WorkspaceClass*> pending;
  std::vector<RelayoutOrder> under_way;
  absl::Time now;  // Becomes the new orders' ordered_at.
  RelayoutLimits limits;
};

// The new orders (never one for a node in `under_way`); empty when every
// pending slice workspace is served by a free slice or a re-layout under way,
// or no idle GPU can serve the rest.
std::vector<RelayoutOrder> PlanRelayouts(const RelayoutInputs& in);

// What became of an order, judged on the snapshot (the node's reports).
enum class RelayoutProgress {
  kUnderWay,  // The GPU does not have the layout yet.
  kDone,      // The GPU reports exactly the layout, every slice usable.
  kDropped,   // It cannot or must not go on; `why` says which.
};
struct RelayoutStatus {
  RelayoutProgress progress = RelayoutProgress::kUnderWay;
  std::string why;  // kDropped: "GPU 3 on node-a is unhealthy: ...".
};

// kDropped when the node is gone or not ready, its pool is no longer
// by_demand, the GPU is gone, out of MIG mode or unhealthy (how an agent
// reports a re-layout that failed), something on it is held (never cut a GPU
// that holds work, whatever raced), or `now` is `give_up_after` past
// ordered_at.
RelayoutStatus ProgressOf(const RelayoutOrder& order, const Snapshot& snapshot,
                          const std::vector<core::NodePool>& pools, absl::Time now,
                          absl::Duration give_up_after);

// The GPUs the orders cut, by node, as Snapshot::SetRelayouts marks them.
absl::flat_hash_map<std::string, int> RelayoutMarks(const std::vector<RelayoutOrder>& orders);

// "GPU 3 on node-a: 3g.71gb@0, 2g.35gb@4, 1g.18gb@6" (logs).
std::string DescribeOrder(const RelayoutOrder& order);

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_RELAYOUT_PLAN_H_
