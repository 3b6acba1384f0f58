#include "server/simulate/engine_internal.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/scaling/schedule.h"
#include "server/simulate/sim_node.h"

namespace wsched::simulate::internal {

void Engine::StartNode(SimPool& pool, size_t pool_index, absl::Time now, bool warm) {
  size_t index = nodes_.size();
  std::string name = absl::StrCat("sim-", pool.pool->id, "-", index);
  node_index_[name] = index;
  nodes_.push_back({std::move(name), pool_index});
  if (warm) {
    // Up before the simulation looks, driver and all.
    pool.ledger.NodeWarm(now);
    nodes_.back().registered = true;
    const core::DriverState driver =
        pool.pool->is_gpu() ? core::DriverState::kReady : core::DriverState::kNotNeeded;
    (void)snapshot_.UpsertNode(NodeOfShape(nodes_.back().name, *pool.pool), core::NodeState::kReady,
                               driver);
  } else {
    pool.ledger.NodeAsked(now);
    ++booting_;
    Schedule(now + pool.timings.node_start, Kind::kNodeUp, index);
  }
}

void Engine::NodeUp(size_t index, absl::Time now) {
  SimNode& node = nodes_[index];
  SimPool& pool = pools_[node.pool];
  pool.ledger.NodeUp(now);
  --booting_;
  pool.dirty = true;
  node.registered = true;
  core::DriverState driver = core::DriverState::kNotNeeded;
  if (pool.pool->is_gpu()) {
    bool installs = pool.timings.driver_install > absl::ZeroDuration();
    driver = installs ? core::DriverState::kNeedsDriver : core::DriverState::kReady;
    if (installs) Schedule(now + pool.timings.driver_install, Kind::kDriverReady, index);
  }
  // Since now, as the server's mirror dates a new node from its
  // registration: the estimate of a workspace that waits for this node's
  // driver counts what of the install has elapsed.
  (void)snapshot_.UpsertNode(NodeOfShape(node.name, *pool.pool), core::NodeState::kReady, driver,
                             now);
  Drain(nullptr, now);  // New capacity: as the server, try everything.
  NeedEvaluation(now);
}

void Engine::DriverReady(size_t index, absl::Time now) {
  const SimNode& node = nodes_[index];
  if (node.removed) return;
  pools_[node.pool].dirty = true;
  (void)snapshot_.SetDriverState(node.name, core::DriverState::kReady);
  Drain(nullptr, now);
  NeedEvaluation(now);
}

void Engine::RequestPlan(absl::Time now) {
  if (!by_demand_ || queue_.size() == 0) return;
  const absl::Duration period = std::max(input_.options.relayout_period, input_.options.tick);
  const absl::Time at = absl::UnixEpoch() + absl::Ceil(now - absl::UnixEpoch(), period);
  if (at >= plan_at_) return;  // One to come already, as early.
  plan_at_ = at;
  Schedule(at, Kind::kPlanRelayouts, 0);
}

void Engine::PlanRelayouts(absl::Time now) {
  if (now != plan_at_) return;  // Superseded by an earlier one.
  plan_at_ = absl::InfiniteFuture();
  if (queue_.size() == 0) return;
  placement::RelayoutInputs in;
  in.snapshot = &snapshot_;
  in.pools = &catalog_.pools;
  queue_.ForEachOrdered([&](const placement::PendingEntry& entry) {
    in.pending.push_back(live_[IndexOf(entry.workspace)].cls);
    return true;
  });
  in.under_way = under_way_;
  in.now = now;
  std::vector<placement::RelayoutOrder> planned = placement::PlanRelayouts(in);
  if (planned.empty()) return;
  for (placement::RelayoutOrder& order : planned) {
    SimPool& pool = pools_[PoolIndex(order.pool)];
    pool.ledger.Relayout();
    Schedule(now + pool.timings.mig_relayout, Kind::kRelayoutDone, orders_.size());
    orders_.push_back(order);
    under_way_.push_back(std::move(order));
  }
  snapshot_.SetRelayouts(placement::RelayoutMarks(under_way_));
}

void Engine::RelayoutDone(size_t index, absl::Time now) {
  const placement::RelayoutOrder& order = orders_[index];
  std::erase(under_way_, order);
  snapshot_.SetRelayouts(placement::RelayoutMarks(under_way_));
  const placement::SnapshotNode* node = snapshot_.FindNode(order.node);
  const int pos = node == nullptr ? -1 : node->PositionOf(order.gpu_index);
  if (pos < 0 || !node->info.gpus[pos].mig) return;  // Scaled down meanwhile.
  core::NodeInfo info = node->info;
  std::vector<core::MigLayoutSlice> layout;
  for (const placement::PlannedSlice& slice : order.layout) {
    layout.push_back({slice.profile, slice.start});
  }
  CutGpu(info.gpus[pos], layout, static_cast<int>(index) + 1);
  (void)snapshot_.UpsertNode(info, node->state, node->driver_state);
  pools_[PoolIndex(order.pool)].dirty = true;
  Drain(&order.pool, now);
  NeedEvaluation(now);
}

void Engine::Actuate(SimPool& pool, const scaling::PoolSignal& signal, absl::Time now) {
  // As an actuator does: delete the named nodes, then start nodes until the
  // pool has (or is getting) the target. Booting nodes are never cancelled.
  bool removed = false;
  for (const std::string& name : signal.nodes_to_remove) {
    auto it = node_index_.find(name);
    if (it == node_index_.end()) continue;
    SimNode& node = nodes_[it->second];
    const placement::SnapshotNode* snap = snapshot_.FindNode(name);
    if (!node.registered || node.removed || snap == nullptr || snap->held.cpu_millis > 0) continue;
    snapshot_.RemoveNode(name);
    node.removed = true;
    pool.ledger.NodeGone(now);
    pool.dirty = true;
    removed = true;
  }
  pool.ledger.Target(now, signal.target_size);
  size_t pool_index = PoolIndex(pool.pool->id);
  while (pool.ledger.registered() + pool.ledger.booting() < signal.target_size) {
    StartNode(pool, pool_index, now, false);
  }
  // The next tick sees the nodes gone.
  if (removed) NeedEvaluation(now + input_.options.tick);
}

void Engine::Evaluate(absl::Time now) {
  last_evaluation_ = now;
  // A pool is looked at when something of it changed: its nodes, the
  // pending demand counted on it (which moves with the other pools' sizes
  // and backoffs), or one of its timers. Else it would answer the same.
  scaling::FleetScaler::DemandByPool routed = fleet_.RouteDemand(catalog_, snapshot_, demand_, now);
  if (input_.options.every_tick) NeedEvaluation(now + input_.options.tick);
  std::vector<scaling::PoolObservation> observations = fleet_.Observe(
      catalog_, snapshot_, demand_, now, [&](const core::NodePool& pool) {
        const SimPool& sim = pools_[PoolIndex(pool.id)];
        return input_.options.every_tick || sim.dirty || sim.wake <= now ||
               routed[pool.id] != sim.demand;
      });
  for (const scaling::PoolObservation& obs : observations) {
    SimPool& pool = pools_[PoolIndex(obs.pool.id)];
    pool.dirty = false;
    pool.demand = routed[obs.pool.id];
    scaling::PoolSignal signal = fleet_.Evaluate(obs, now);
    ++evaluations_;
    const scaling::PoolScaler& scaler = *fleet_.scaler(obs.pool.id);
    // As the server's leader: only a changed signal is handed on.
    if (signal.generation != pool.last_generation) {
      pool.last_generation = signal.generation;
      // Nodes asked for are in flight from now: the next tick sees them (and
      // pending work that fits on them stops waiting for the window).
      if (fleet_.RecordHandedOn(obs, signal, now) > 0) {
        pool.dirty = true;
        NeedEvaluation(now + input_.options.tick);
      }
      pool.signal = signal;
      Actuate(pool, signal, now);
    }
    WakeInputs in{.observation = &obs,
                  .unmet_since = scaler.unmet_since(),
                  .last_scale_up = scaler.last_scale_up(),
                  .backoff_until = scaler.BackoffUntil(now),
                  .batching_window = input_.options.batching_window};
    absl::Time wake = simulate::NextWake(in, pool.schedule, now);
    pool.wake = wake == absl::InfiniteFuture() ? wake : CeilToTick(wake);
  }
}

}  // namespace wsched::simulate::internal
