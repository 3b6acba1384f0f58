// Driver rollouts (core/driver_rollout.h, docs/operations.md "Driver
// rollouts"): the scaling leader steps every GPU pool's rollout, releasing
// what the plan says and keeping or dropping the pool's record; admins
// list, pause and resume them. The plan is pure; this class reads what it
// needs and writes what it decided, re-checking each node under its row
// lock. No state of its own: the records live in `driver_rollouts`.
#ifndef WSCHED_SERVER_INVENTORY_DRIVER_ROLLOUTS_H_
#define WSCHED_SERVER_INVENTORY_DRIVER_ROLLOUTS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/clock.h"
#include "server/core/driver_rollout.h"
#include "server/replica/drain_requests.h"
#include "server/replica/feed_follower.h"
#include "server/inventory/node_inventory.h"
#include "server/store/database.h"
#include "server/store/types.h"

namespace wsched::inventory {

// A pool's driver rollout as operators see it.
struct DriverRolloutView {
  std::string pool;
  core::RolloutRecord record;  // Empty when none is kept.
  bool under_way = false;      // A record is kept (a rollout runs or is paused).
  core::RolloutCounts counts;
  int max_unavailable = 1;
};

class DriverRollouts {
 public:
  struct Parts {
    store::Database* db = nullptr;
    const NodeInventory::Mirror* mirror = nullptr;  // The catalog and nodes as mirrored.
    NodeInventory* inventory = nullptr;             // Every node, with its workspaces.
    replica::FeedFollower* follower = nullptr;      // Read your writes.
    replica::DrainRequests* drains = nullptr;       // A released node takes no new work.
  };
  DriverRollouts(Parts parts, core::Clock clock) : parts_(parts), clock_(std::move(clock)) {}

  // One step of every GPU pool's rollout; returns the pools' views for the
  // metrics.
  absl::StatusOr<std::vector<DriverRolloutView>> Step();
  // Every GPU pool's rollout, or `pool`'s alone (NOT_FOUND for an unknown pool).
  absl::StatusOr<std::vector<DriverRolloutView>> List(const std::string& pool);
  // Admin: pauses (with `reason`) or resumes a GPU pool's rollout. A pause
  // before a policy change keeps the change from starting one.
  absl::StatusOr<DriverRolloutView> SetPaused(const std::string& pool, bool paused,
                                              const std::string& reason);

 private:
  // The rollout as the plan sees `pool` in `nodes` (views of every node).
  std::vector<core::RolloutNode> RolloutNodesOf(const std::string& pool,
                                                const std::vector<NodeView>& nodes) const;
  // Every pool's kept record (FAILED_PRECONDITION without a database).
  absl::StatusOr<std::vector<store::DriverRolloutRow>> LoadRecords();
  // Writes one planned step of `pool`'s rollout; false when the kept record
  // changed since `planned_from` (an admin paused or resumed): the next
  // step plans again.
  absl::StatusOr<bool> ApplyStep(const std::string& pool,
                                 const std::optional<core::RolloutRecord>& planned_from,
                                 const core::RolloutStep& step);

  const Parts parts_;
  const core::Clock clock_;
};

}  // namespace wsched::inventory

#endif  // WSCHED_SERVER_INVENTORY_DRIVER_ROLLOUTS_H_
