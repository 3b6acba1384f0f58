// What the scaler is shown of a pool's nodes: one node as it observes it
// (its state, its holders, its free room), and the room a pool still has
// while a class's demand is routed over its pools (fleet_scaler.h).
//
// Pure: no I/O, no clock reads.
#ifndef WSCHED_SERVER_SCALING_POOL_ROOM_H_
#define WSCHED_SERVER_SCALING_POOL_ROOM_H_

#include <cstdint>
#include <vector>

#include "server/core/pool.h"
#include "server/core/workspace_class.h"
#include "server/placement/snapshot.h"
#include "server/scaling/capacity.h"
#include "server/scaling/pool_scaler.h"

namespace wsched::scaling {

// What the scaler is shown of one node of the placement snapshot: its state,
// the workspaces holding it, and its free room. Timers are the caller's.
PoolNode ObservedNode(const placement::SnapshotNode& node);

// What one pool still holds of pending work while demand is routed: the
// nodes it may add below max_size (registered nodes count against it, as
// do the requests in flight once they register) and the free room of its
// nodes, looked at only once the new nodes are not enough. Each class's
// share uses up what it is packed onto (binpack.h), so a later class meets
// what is left.
class PoolRoomLeft {
 public:
  PoolRoomLeft(const core::NodePool& pool, const placement::Snapshot& snapshot);
  // How many of `count` workspaces of `cls` the pool holds; those take
  // their room.
  int64_t Take(const core::WorkspaceClass& cls, int64_t count);

 private:
  const core::NodePool& pool_;
  const placement::Snapshot& snapshot_;
  int64_t new_nodes_;
  std::vector<Capacity> room_;  // Free room of nodes and of new nodes opened.
  bool looked_at_nodes_ = false;
};

}  // namespace wsched::scaling

#endif  // WSCHED_SERVER_SCALING_POOL_ROOM_H_
