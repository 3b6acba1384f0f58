#include "server/scaling/fleet_scaler.h"

#include <algorithm>
#include <utility>

#include "server/scaling/binpack.h"
#include "server/scaling/demand_pool.h"
#include "server/scaling/pool_room.h"
#include "server/scaling/slice_demand.h"

namespace wsched::scaling {

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
