#include "server/scaling/fleet_scaler.h"

#include <algorithm>
#include <utility>

#include "server/scaling/binpack.h"
#include "server/scaling/demand_pool.h"
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

FleetScaler::FleetScaler(ScalerOptions options) : options_(std::move(options)) {}

PoolScaler* FleetScaler::scaler(const std::string& pool) {
  auto it = tracking_.find(pool);
  return it == tracking_.end() ? nullptr : it->second.scaler.get();
}

const PoolScaler* FleetScaler::scaler(const std::string& pool) const {
  auto it = tracking_.find(pool);
  return it == tracking_.end() ? nullptr : it->second.scaler.get();
}

FleetScaler::DemandByPool FleetScaler::RouteDemand(const core::Catalog& catalog,
                                                   const placement::Snapshot& snapshot,
                                                   const std::vector<PendingDemand>& pending,
                                                   absl::Time now) const {
  // A pool backing off is asked for nothing: its share goes on to the next
  // (demand_pool.h).
  auto can_grow = [&](const std::string& pool_id) {
    if (catalog.FindPool(pool_id) == nullptr) return false;
    auto tracked = tracking_.find(pool_id);
    return tracked == tracking_.end() || tracked->second.scaler == nullptr ||
           !tracked->second.scaler->BackoffUntil(now).has_value();
  };
  // Workspaces of one class waiting on the same pools are split once (a
  // long queue is mostly a few classes), in the order the queue meets them.
  struct Group {
    const std::string* class_id;
    const std::vector<std::string>* pools;
    int64_t count;
    absl::Time waiting_since;
  };
  std::vector<Group> groups;
  for (const PendingDemand& demand : pending) {
    auto same = [&](const Group& g) {
      return *g.class_id == demand.class_id && *g.pools == demand.pools;
    };
    auto it = std::find_if(groups.begin(), groups.end(), same);
    if (it == groups.end()) {
      it =
          groups.insert(groups.end(), {&demand.class_id, &demand.pools, 0, absl::InfiniteFuture()});
    }
    it->count += demand.count;
    it->waiting_since = std::min(it->waiting_since, demand.since);
  }
  // What each pool still holds, used up group by group.
  std::map<std::string, PoolRoomLeft> left;
  DemandByPool by_pool;
  for (const Group& group : groups) {
    const core::WorkspaceClass* cls = catalog.FindClass(*group.class_id);
    auto take = [&](const std::string& pool_id, int64_t count) -> int64_t {
      if (cls == nullptr) return count;  // Dropped by Observe; nothing to split.
      auto it = left.find(pool_id);
      if (it == left.end()) {
        it = left.try_emplace(pool_id, *catalog.FindPool(pool_id), snapshot).first;
      }
      return it->second.Take(*cls, count);
    };
    for (const DemandShare& share : SplitDemand(*group.pools, group.count, can_grow, take)) {
      RoutedDemand& routed = by_pool[share.pool][*group.class_id];
      routed.count += share.count;
      routed.waiting_since = std::min(routed.waiting_since, group.waiting_since);
    }
  }
  return by_pool;
}

std::vector<PoolObservation> FleetScaler::Observe(const core::Catalog& catalog,
                                                  const placement::Snapshot& snapshot,
                                                  const std::vector<PendingDemand>& pending,
                                                  absl::Time now, const PoolFilter& only) {
  // Per catalog pool: its size (demand routing reads every pool's) and, if
  // observed, its nodes. Nodes of a pool the catalog lacks count nowhere
  // (such a pool can never grow). A catalog has a handful of pools: a linear
  // look-up, starting with the last one found, beats hashing every node.
  struct PoolWalk {
    const core::NodePool* pool;
    bool observed;
    int size = 0;
    std::vector<PoolNode> nodes;
  };
  std::vector<PoolWalk> walks;
  walks.reserve(catalog.pools.size());
  for (const core::NodePool& pool : catalog.pools) {
    walks.push_back({&pool, only == nullptr || only(pool)});
  }
  auto walk_of = [&walks](const std::string& pool, size_t hint) -> size_t {
    if (hint < walks.size() && walks[hint].pool->id == pool) return hint;
    for (size_t i = 0; i < walks.size(); ++i) {
      if (walks[i].pool->id == pool) return i;
    }
    return walks.size();
  };
  // Two passes: the first counts, so the second fills vectors of the
  // right size instead of growing them through every node.
  size_t last = 0;
  snapshot.ForEachNode([&](const placement::SnapshotNode& node) {
    last = walk_of(node.info.pool, last);
    if (last < walks.size()) ++walks[last].size;
  });
  for (PoolWalk& walk : walks) {
    if (walk.observed) walk.nodes.reserve(walk.size);
  }
  snapshot.ForEachNode([&](const placement::SnapshotNode& node) {
    last = walk_of(node.info.pool, last);
    if (last < walks.size() && walks[last].observed)
      walks[last].nodes.push_back(ObservedNode(node));
  });
  DemandByPool pending_by_pool = RouteDemand(catalog, snapshot, pending, now);
  std::vector<PoolObservation> observations;
  for (PoolWalk& walk : walks) {
    if (!walk.observed) continue;
    const core::NodePool& pool = *walk.pool;
    PoolTracking& t = tracking_[pool.id];
    if (t.scaler == nullptr) t.scaler = std::make_unique<PoolScaler>(options_);
    PoolObservation obs;
    obs.pool = pool;
    TrackNodes(t, std::move(walk.nodes), now, obs);
    for (const auto& [class_id, routed] : pending_by_pool[pool.id]) {
      if (const core::WorkspaceClass* cls = catalog.FindClass(class_id)) {
        obs.pending.push_back({*cls, routed.count, routed.waiting_since});
      }
    }
    obs.in_flight = t.in_flight;
    observations.push_back(std::move(obs));
  }
  return observations;
}

void FleetScaler::TrackNodes(PoolTracking& t, std::vector<PoolNode> nodes, absl::Time now,
                             PoolObservation& obs) {
  const int64_t observation = ++t.observations;
  for (PoolNode& node : nodes) {
    auto [entry, is_new] = t.nodes.try_emplace(node.name);
    NodeTimers& timers = entry->second;
    timers.seen_in = observation;
    if (is_new) {
      if (!t.in_flight.empty()) {
        // A node we asked for: its start time is measured from the request,
        // its boot from the cloud's report that it runs.
        timers.first_seen = t.in_flight.front().requested_at;
        if (const auto& running = t.in_flight.front().running_at) {
          t.new_samples.node_boot.push_back(std::max(absl::ZeroDuration(), now - *running));
        }
        if (--t.in_flight.front().count <= 0) t.in_flight.erase(t.in_flight.begin());
      } else if (node.state != core::NodeState::kProvisioning) {
        // Up before this leader looked (a restart, a new leader, a node
        // added by hand): when it was asked for is unknown, so it is no
        // start-time sample (it would count as a start of zero seconds).
        timers.first_seen = absl::InfinitePast();
      } else {
        timers.first_seen = now;
      }
    }
    node.requested_at = timers.first_seen;
    if (node.state == core::NodeState::kReady) node.ready_at = is_new ? now : timers.first_seen;
    if (node.workspaces > 0) {
      timers.empty_since = absl::InfinitePast();
    } else {
      if (timers.empty_since == absl::InfinitePast()) timers.empty_since = now;
      node.empty_since = timers.empty_since;
    }
  }
  absl::erase_if(t.nodes, [&](const auto& entry) { return entry.second.seen_in != observation; });
  obs.nodes = std::move(nodes);
}

PoolSignal FleetScaler::Evaluate(const PoolObservation& observation, absl::Time now) {
  PoolTracking& t = tracking_[observation.pool.id];
  if (t.scaler == nullptr) t.scaler = std::make_unique<PoolScaler>(options_);
  return t.scaler->Evaluate(observation, now);
}

int FleetScaler::RecordHandedOn(const PoolObservation& observation, const PoolSignal& signal,
                                absl::Time now) {
  PoolTracking& t = tracking_[observation.pool.id];
  // Count what a scale-up asks for, so a burst does not ask twice.
  int in_flight = 0;
  for (const auto& request : t.in_flight) in_flight += request.count;
  int live = 0;
  for (const auto& node : observation.nodes) live += node.state != core::NodeState::kLost;
  if (signal.target_size <= live + in_flight) return 0;
  int asked = signal.target_size - live - in_flight;
  t.in_flight.push_back({now, asked, signal.generation});
  return asked;
}

void FleetScaler::OnActuatorEvent(const std::string& pool, const ActuatorEvent& event,
                                  absl::Time now) {
  if (PoolScaler* s = scaler(pool)) s->OnActuatorEvent(event, now);
  if (event.kind != ActuatorEventKind::kRunning) return;
  auto it = tracking_.find(pool);
  if (it == tracking_.end()) return;
  for (ProvisioningRequest& request : it->second.in_flight) {
    if (request.generation != event.generation || request.running_at) continue;
    request.running_at = now;
    it->second.new_samples.cloud_start.push_back(
        std::max(absl::ZeroDuration(), now - request.requested_at));
  }
}

FleetScaler::StartPhaseSamples FleetScaler::TakeNewStartPhaseSamples(const std::string& pool) {
  auto it = tracking_.find(pool);
  return it == tracking_.end() ? StartPhaseSamples() : std::exchange(it->second.new_samples, {});
}

}  // namespace wsched::scaling
