#include "server/scaling/pool_room.h"

#include <algorithm>
#include <utility>

#include "server/scaling/binpack.h"
#include "server/scaling/slice_demand.h"

namespace wsched::scaling {
namespace {

// Workspaces holding this node's GPUs, each counted once (a node has a
// handful of GPUs: comparing pairs beats building a set).
int DistinctGpuHolders(const placement::SnapshotNode& node) {
  int distinct = 0;
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    const std::string& holder = node.gpus[i].holder;
    if (holder.empty()) continue;
    bool seen = false;
    for (size_t j = 0; j < i && !seen; ++j) seen = node.gpus[j].holder == holder;
    if (!seen) ++distinct;
  }
  return distinct;
}

}  // namespace

PoolNode ObservedNode(const placement::SnapshotNode& node) {
  PoolNode out;
  out.name = node.info.name;
  out.state = node.state;
  Capacity free;
  // A GPU any of whose slices is held is no room for a whole GPU's worth.
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    const auto& slices = node.gpus[i].slice_holders;
    const bool slice_held = std::any_of(slices.begin(), slices.end(),
                                        [](const std::string& holder) { return !holder.empty(); });
    if (node.gpus[i].holder.empty() && !slice_held && node.info.gpus[i].healthy) free.gpus++;
  }
  // Lost workspaces keep their holds until stopped or moved, so a lost
  // node still counts them here and the scaler asks for its replacement.
  out.workspaces = DistinctGpuHolders(node);
  if (out.workspaces == 0 && node.held.cpu_millis > 0) out.workspaces = 1;
  free.cpu_millis = node.free.cpu_millis;
  free.memory_bytes = node.free.memory_bytes;
  free.ephemeral_storage_bytes = node.free.ephemeral_storage_bytes;
  free.disk_bytes = node.free.disk_bytes;
  out.free = free;
  return out;
}

PoolRoomLeft::PoolRoomLeft(const core::NodePool& pool, const placement::Snapshot& snapshot)
    : pool_(pool),
      snapshot_(snapshot),
      new_nodes_(std::max(0, pool.max_size - snapshot.PoolNodeCount(pool.id))) {}

int64_t PoolRoomLeft::Take(const core::WorkspaceClass& cls, int64_t count) {
  const PendingGroup group = PendingGroupOf(pool_, cls, count);
  const Capacity whole_node = Capacity::OfShape(pool_.shape);
  auto pack = [&] { return PackPending({group}, room_, whole_node, new_nodes_); };
  PackingResult packed = pack();
  if (packed.beyond_limit > 0 && !looked_at_nodes_) {
    // The new nodes are not enough: the nodes' free room counts too, as the
    // pool's scaler packs it (ready and provisioning nodes).
    looked_at_nodes_ = true;
    snapshot_.ForEachNodeOf(pool_.id, [&](const placement::SnapshotNode& node) {
      if (node.state == core::NodeState::kReady || node.state == core::NodeState::kProvisioning) {
        room_.push_back(*ObservedNode(node).free);
      }
    });
    packed = pack();
  }
  room_ = std::move(packed.bins_left);
  new_nodes_ -= packed.new_nodes;
  if (packed.beyond_limit == 0) return count;
  // A slice class packs a GPU's worth of its workspaces as one item.
  const int64_t per_item = cls.is_slice() ? std::max(1, SlicesPerGpu(pool_, cls)) : 1;
  return std::min(count, (group.count - packed.beyond_limit) * per_item);
}

}  // namespace wsched::scaling
