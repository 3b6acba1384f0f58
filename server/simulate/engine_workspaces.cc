#include "server/simulate/engine_internal.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/core/mig_profiles.h"
#include "server/placement/pending_reason.h"
#include "server/placement/queue_pass.h"

namespace wsched::simulate::internal {

namespace {

// How many slice units (sevenths of a GPU) or GPUs a placement holds, in
// the unit of its pool's ledger (PoolLedger::UnitsOf).
int64_t HeldUnits(const placement::Placed& placed, const core::WorkspaceClass& cls,
                  const PoolLedger& ledger, const placement::Snapshot& snapshot) {
  if (!placed.slice) return ledger.UnitsOf(cls);
  const placement::SnapshotNode* node = snapshot.FindNode(placed.node);
  const int pos = node == nullptr ? -1 : node->PositionOf(placed.slice->gpu_index);
  if (pos < 0 || !node->info.gpus[pos].mig) return ledger.UnitsOf(cls);
  const core::GpuMig& mig = *node->info.gpus[pos].mig;
  for (const core::MigInstance& slice : mig.instances) {
    if (slice.gpu_instance != placed.slice->gpu_instance) continue;
    return core::ComputeSlicesOf(slice, mig).value_or(ledger.UnitsOf(cls));
  }
  return ledger.UnitsOf(cls);
}

}  // namespace

void Engine::Arrive(size_t arrival, absl::Time now) {
  const core::WorkspaceClass& cls = *class_of_[arrival];
  size_t index = live_.size();
  live_.push_back({arrival, &cls, absl::StrCat("w", index)});
  placed_at_.emplace_back();
  Live& w = live_.back();
  placement::Decision decision = placement::Decide(cls, catalog_.pools, snapshot_);
  if (auto* placed = std::get_if<placement::Placed>(&decision)) {
    const std::string& org = trace_[arrival].org;
    if (!budgets_.Admits(org, core::LeastGpuSevenths(cls), now)) {
      // PlaceWorkspace is refused with BUDGET_EXHAUSTED: nothing is created.
      budgets_.Refused(org);
      w.pool = pools_.size();  // Nowhere.
      NeedEvaluation(now);
      return;
    }
    Place(w, *placed, now);
  } else if (auto* not_now = std::get_if<placement::NotNow>(&decision)) {
    Queue(w, *not_now, now);
    if (cls.is_slice()) RequestPlan(now);
  } else {
    const Arrival& a = trace_[arrival];
    w.pool = pools_.size();  // Nowhere.
    unplaceable_.push_back(absl::StrCat("trace line ", a.line, ": class ", cls.id, ": ",
                                        std::get<placement::Never>(decision).reason));
  }
  NeedEvaluation(now);
}

void Engine::Place(Live& w, const placement::Placed& placed, absl::Time now) {
  size_t index = IndexOf(w.id);
  SimPool& pool = pools_[PoolIndex(placed.pool)];
  w.units = HeldUnits(placed, *w.cls, pool.ledger, snapshot_);
  (void)snapshot_.HoldAsRecorded(
      {w.id, placed.node, placed.gpu_indices, placed.resources, placed.slice});
  w.pool = PoolIndex(placed.pool);
  w.running = true;
  ++running_;
  placed_at_[index] = now;
  pool.ledger.Held(now, w.units);
  // Without pending work the scaler reads of a node only whether it is
  // empty; with it, the room left too.
  w.node = node_index_.at(placed.node);
  if (nodes_[w.node].workspaces++ == 0 || !pool.demand.empty()) pool.dirty = true;
  pool.ledger.Placed(now - trace_[w.arrival].time);
  Spending(w, /*started=*/true, now);
  if (w.estimate_p90) {
    const absl::Duration waited = now - trace_[w.arrival].time;
    pool.ledger.EstimateChecked(placement::WithinEstimate(waited, *w.estimate_p90));
  }
  Schedule(now + trace_[w.arrival].duration, Kind::kEnd, index);
}

void Engine::Queue(Live& w, const placement::NotNow& not_now, absl::Time now) {
  const Arrival& a = trace_[w.arrival];
  w.pool = not_now.pools.empty() ? pools_.size() : PoolIndex(not_now.pools.front());
  queue_.Upsert({.workspace = w.id, .org = a.org, .class_id = w.cls->id, .priority = 0,
                 .since = now, .reason = "", .pools = not_now.pools, .project = a.project});
  AddDemand(w.cls, not_now.pools, now);
  placement::TimeToGpu estimate = Estimate(w, now);
  w.estimate_p90 = estimate.estimate_p90;
  w.estimate_phases = std::move(estimate.phases);
  if (w.pool < pools_.size()) {
    SimPool& pool = pools_[w.pool];
    pool.ledger.Waiting(now, pool.ledger.UnitsOf(*w.cls));
  }
}

placement::TimeToGpu Engine::Estimate(const Live& w, absl::Time now) const {
  // As the server's answer to PlaceWorkspace (pipeline/workspace_views.cc):
  // the reason behind everything queued before it, then the estimate.
  placement::PendingContext ctx;
  ctx.cls = w.cls;
  ctx.pools = &catalog_.pools;
  ctx.snapshot = &snapshot_;
  ctx.driver_policy = &catalog_.driver_policy;
  for (const SimPool& pool : pools_) {
    if (!pool.signal) continue;
    placement::PoolScalingView& view = ctx.scaling[pool.pool->id];
    view.has_signal = true;
    view.current_size = pool.signal->current_size;
    view.target_size = pool.signal->target_size;
  }
  queue_.ForEachOrdered([&](const placement::PendingEntry& entry) {
    ++ctx.queue_position;
    if (entry.workspace == w.id) return false;
    ctx.ahead.push_back(live_[IndexOf(entry.workspace)].cls);
    return true;
  });
  ctx.now = now;
  placement::TimeToGpuInputs in;
  in.reason = placement::ExplainPending(ctx);
  auto pool = pool_index_.find(in.reason.pool);
  if (pool != pool_index_.end()) {
    // The simulator's timings are single figures: its p50 and p90 both.
    const PoolTimings& timings = pools_[pool->second].timings;
    in.node_start = placement::MeasuredTime{timings.node_start, 1};
    in.driver_install = placement::MeasuredTime{timings.driver_install, 1};
    // Its new nodes install their driver when it takes them time (NodeUp):
    // a wait for a new node waits that install too, on a kernel the
    // simulated nodes do not name.
    if (placement::WaitsForANewNode(in.reason.code) && pools_[pool->second].pool->is_gpu() &&
        timings.driver_install > absl::ZeroDuration()) {
      in.new_node_install_kernel = "";
    }
  }
  in.batching_window = input_.options.batching_window;
  in.now = now;
  return placement::EstimateTimeToGpu(in);
}

void Engine::End(size_t index, absl::Time now) {
  Live& w = live_[index];
  if (!w.running) return;  // Stopped by its org's spending limit before its end.
  snapshot_.Release(w.id);
  w.running = false;
  --running_;
  SimPool& pool = pools_[w.pool];
  pool.ledger.Held(now, -w.units);
  if (--nodes_[w.node].workspaces == 0 || !pool.demand.empty()) pool.dirty = true;
  Spending(w, /*started=*/false, now);
  Drain(&pool.pool->id, now);
  NeedEvaluation(now);
}

void Engine::AddDemand(const core::WorkspaceClass* cls, const std::vector<std::string>& pools,
                       absl::Time now) {
  auto it = std::find(demand_class_.begin(), demand_class_.end(), cls);
  if (it == demand_class_.end()) {
    demand_.push_back({.class_id = cls->id, .pools = pools, .since = now, .count = 0});
    demand_class_.push_back(cls);
    it = demand_class_.end() - 1;
  }
  ++demand_[it - demand_class_.begin()].count;
}

void Engine::RemoveDemand(const core::WorkspaceClass* cls) {
  size_t at = std::find(demand_class_.begin(), demand_class_.end(), cls) - demand_class_.begin();
  if (--demand_[at].count > 0) return;
  demand_.erase(demand_.begin() + static_cast<std::ptrdiff_t>(at));
  demand_class_.erase(demand_class_.begin() + static_cast<std::ptrdiff_t>(at));
}

void Engine::Drain(const std::string* pool, absl::Time now) {
  // The server's pass (placement/queue_pass.h): in queue order, each
  // holding what it chose (Place); only work that may use `pool` (all of it
  // when null). The queue is read in its order (as the server's drain reads it);
  // what was placed leaves it afterwards.
  absl::flat_hash_set<std::string> classes;
  for (size_t i = 0; i < demand_.size(); ++i) {
    const std::vector<std::string>& pools = demand_[i].pools;
    if (pool == nullptr || std::find(pools.begin(), pools.end(), *pool) != pools.end()) {
      classes.insert(demand_class_[i]->id);
    }
  }
  std::vector<size_t> placed;
  placement::QueuePass(std::move(classes)).Run(
      [&](auto visit) { queue_.ForEachOrdered(visit); },
      [&](const placement::PendingEntry& entry) -> const std::string* {
        const Live& w = live_[IndexOf(entry.workspace)];
        return WithinBudget(w, now) ? &w.cls->id : nullptr;
      },
      [&](const placement::PendingEntry& entry) -> std::optional<placement::Decision> {
        Live& w = live_[IndexOf(entry.workspace)];
        placement::Decision decision = placement::Decide(*w.cls, catalog_.pools, snapshot_);
        if (auto* decided = std::get_if<placement::Placed>(&decision)) {
          if (w.pool < pools_.size()) {
            SimPool& waited_on = pools_[w.pool];
            waited_on.ledger.Waiting(now, -waited_on.ledger.UnitsOf(*w.cls));
          }
          RemoveDemand(w.cls);
          Place(w, *decided, now);
          placed.push_back(IndexOf(entry.workspace));
        }
        return decision;
      });
  for (size_t index : placed) queue_.Remove(live_[index].id);
  RequestPlan(now);
}

}  // namespace wsched::simulate::internal
