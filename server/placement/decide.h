// The placement decision: where a workspace of a class goes, or why not.
#ifndef WSCHED_SERVER_PLACEMENT_DECIDE_H_
#define WSCHED_SERVER_PLACEMENT_DECIDE_H_

#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "server/core/pool.h"
#include "server/core/workspace_class.h"
#include "server/placement/resources.h"
#include "server/placement/snapshot.h"

namespace wsched::placement {

// Fits now: hold these on this node (Snapshot::Hold, then the store commit).
struct Placed {
  std::string node;
  std::string pool;
  std::vector<int> gpu_indices;  // Sorted; empty for CPU and slice classes.
  Resources resources;           // What to hold besides the GPUs.
  std::optional<HeldSlice> slice;  // For a slice class (Snapshot::HoldSlice).
  friend bool operator==(const Placed&, const Placed&) = default;
};

// Could fit, but no node has room now: the caller queues the workspace and
// counts it as demand on `pools` (preferred first) for the autoscaler. Why
// it waits is placement/pending_reason.h's to say (queue-aware, with the
// scaler's view), not the decision's.
struct NotNow {
  std::vector<std::string> pools;
  friend bool operator==(const NotNow&, const NotNow&) = default;
};

// No pool could ever hold the class: an error for the caller, not demand.
struct Never {
  std::string reason;
  friend bool operator==(const Never&, const Never&) = default;
};

using Decision = std::variant<Placed, NotNow, Never>;

// Decides on the snapshot without changing it. Filters (PlanPools,
// NodeAcceptsWork, free resources and GPUs, IOMMU for vm), then takes the
// best packing score within the most preferred tier that has room, and the
// best GPU set on that node (ChooseGpus). Cost: per candidate pool one index
// lookup, not a scan of its nodes.
Decision Decide(const core::WorkspaceClass& cls, const std::vector<core::NodePool>& pools,
                const Snapshot& snapshot);

// Nodes a decision should keep off while others fit (by name).
// Nodes to keep off while others fit, by name.
using AvoidNode = std::function<bool(const std::string& node)>;

// The same, but placing on a node `avoid` names only when no other node
// fits: a replica that just lost a race for a node leaves it to the winner
// for a moment, and replicas placing at once each pack their own nodes
// (node_ownership.h) instead of all the same fullest one.
Decision DecideAvoiding(const core::WorkspaceClass& cls, const std::vector<core::NodePool>& pools,
                        const Snapshot& snapshot, const AvoidNode& avoid);

// "placed", "not_now", "never": for metrics labels and logs.
const char* DecisionKind(const Decision& decision);

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_DECIDE_H_
