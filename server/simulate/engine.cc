#include "server/simulate/engine.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/core/mig_profiles.h"
#include "server/placement/decide.h"
#include "server/placement/pending_queue.h"
#include "server/placement/pending_reason.h"
#include "server/placement/queue_pass.h"
#include "server/placement/relayout_plan.h"
#include "server/placement/snapshot.h"
#include "server/placement/time_to_gpu.h"
#include "server/scaling/fleet_scaler.h"
#include "server/scaling/schedule.h"
#include "server/simulate/pool_ledger.h"
#include "server/simulate/sim_node.h"
#include "server/simulate/wake.h"

namespace wsched::simulate {
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

class Engine {
 public:
  Engine(const SimulationInput& input, const std::vector<Arrival>& trace)
      : input_(input),
        catalog_(input.catalog),
        trace_(trace),
        fleet_(scaling::ScalerOptions{.batching_window = input.options.batching_window}),
        budgets_(input.org_limits, input.options.budget_interval) {
    for (const auto& [org, limit] : input.org_limits) {
      limited_.push_back(org);
      limited_index_[org] = limited_.size() - 1;
    }
  }

  absl::StatusOr<SimulationResult> Run();

 private:
  enum class Kind {
    kEnd,
    kNodeUp,
    kDriverReady,
    kPlanRelayouts,
    kRelayoutDone,
    kBudgetReach,  // An org's limit is reached at the rate of its scheduling.
    kBudgetStop,   // An org's block_and_stop warning has passed.
    kBudgetRetry,  // An org's period ended: its held-back work may go.
  };
  struct Event {
    absl::Time at;
    int64_t sequence;  // Ties go in the order they were scheduled.
    Kind kind;
    // Into live_ (kEnd), nodes_, orders_ (kRelayoutDone) or limited_ (kBudget*).
    size_t index;
    int64_t generation = 0;  // kBudgetReach: stale unless the org's latest.
    bool operator>(const Event& other) const {
      return std::tie(at, sequence) > std::tie(other.at, other.sequence);
    }
  };
  struct SimPool {
    SimPool(const core::NodePool& spec, const PoolTimings& t)
        : pool(&spec), timings(t), ledger(spec, t) {}
    const core::NodePool* pool;
    PoolTimings timings;
    PoolLedger ledger;
    int64_t last_generation = 0;
    ScheduleEdges schedule;
    // Something of it changed since its last evaluation; else it is looked
    // at again only at `wake` (an unchanged pool answers the same until then).
    bool dirty = true;
    absl::Time wake = absl::InfiniteFuture();
    // The pending demand its last evaluation saw (class -> workspaces).
    std::map<std::string, scaling::FleetScaler::RoutedDemand> demand;
    // The last signal handed on, as the server publishes it.
    std::optional<scaling::PoolSignal> signal;
  };
  struct SimNode {
    std::string name;
    size_t pool;
    bool registered = false;
    bool removed = false;
    int workspaces = 0;
  };
  struct Live {
    size_t arrival;  // Into trace_.
    const core::WorkspaceClass* cls;
    std::string id;
    size_t pool = 0;  // Where it runs, or its preferred pool while pending.
    size_t node = 0;  // Where it runs.
    int64_t units = 0;  // What it holds there, in its pool's unit.
    bool running = false;
    // Queued: the estimate the server would have given it.
    std::optional<absl::Duration> estimate_p90;
    std::vector<placement::EstimatePhase> estimate_phases;
  };

  absl::Status Prepare();
  void WarmStart(absl::Time now);
  void Schedule(absl::Time at, Kind kind, size_t index, int64_t generation = 0) {
    events_.push({at, sequence_++, kind, index, generation});
  }
  // At the first tick at or after `at` that is still to come: the server
  // looks once per tick.
  void NeedEvaluation(absl::Time at) {
    absl::Time tick = CeilToTick(at);
    if (tick <= last_evaluation_) tick = last_evaluation_ + input_.options.tick;
    evaluate_at_ = std::min(evaluate_at_, tick);
  }
  absl::Time CeilToTick(absl::Time t) const {
    return absl::UnixEpoch() + absl::Ceil(t - absl::UnixEpoch(), input_.options.tick);
  }
  size_t PoolIndex(const std::string& id) const { return pool_index_.at(id); }

  void Arrive(size_t arrival, absl::Time now);
  void Place(Live& w, const placement::Placed& placed, absl::Time now);
  void Queue(Live& w, const placement::NotNow& not_now, absl::Time now);
  // The time-to-GPU estimate the server answers a just-queued `w` with.
  placement::TimeToGpu Estimate(const Live& w, absl::Time now) const;
  void End(size_t live, absl::Time now);
  // Spending limits (org_budgets.h): a placement counts from its start; an
  // org's reach of its limit is looked for again whenever its rate changes.
  void Spending(const Live& w, bool started, absl::Time now);
  void ExpectReach(const std::string& org, absl::Time now);
  void BudgetReach(size_t org, int64_t generation, absl::Time now);
  void BudgetStop(size_t org, absl::Time now);
  // Whether a queued `w` may be placed by a drain now (its org's limit).
  bool WithinBudget(const Live& w, absl::Time now);
  void NodeUp(size_t node, absl::Time now);
  void DriverReady(size_t node, absl::Time now);
  // MIG layouts by demand, as the server's scaling leader plans them
  // (placement/relayout_plan.h), at its next planning time, and a node's
  // agent carries them out, after the pool's PoolTimings::mig_relayout.
  void RequestPlan(absl::Time now);
  void PlanRelayouts(absl::Time now);
  void RelayoutDone(size_t order, absl::Time now);
  void Drain(const std::string* pool, absl::Time now);
  // Workspaces are named "w<index into live_>".
  static size_t IndexOf(absl::string_view id) {
    size_t index = 0;
    (void)absl::SimpleAtoi(id.substr(1), &index);
    return index;
  }
  void Evaluate(absl::Time now);
  void Actuate(SimPool& pool, const scaling::PoolSignal& signal, absl::Time now);
  void StartNode(SimPool& pool, size_t pool_index, absl::Time now, bool warm);
  bool Rested(absl::Time now) const;
  SimulationResult Finish(absl::Time end);

  const SimulationInput& input_;
  const core::Catalog& catalog_;
  const std::vector<Arrival>& trace_;
  std::vector<size_t> order_;  // trace_ indices by time (stable).
  std::vector<const core::WorkspaceClass*> class_of_;
  scaling::FleetScaler fleet_;
  placement::Snapshot snapshot_;
  placement::PendingQueue queue_;
  // The queue as the scaler reads it: one entry per class with its count,
  // in no particular order (FleetScaler only counts), kept as the queue
  // changes, so a long queue costs an evaluation nothing. A class's pools
  // are the same for all its workspaces (NotNow names the class's plan).
  std::vector<scaling::PendingDemand> demand_;
  std::vector<const core::WorkspaceClass*> demand_class_;  // Parallel.
  void AddDemand(const core::WorkspaceClass* cls, const std::vector<std::string>& pools,
                 absl::Time now);
  void RemoveDemand(const core::WorkspaceClass* cls);
  std::vector<SimPool> pools_;
  absl::flat_hash_map<std::string, size_t> pool_index_;
  std::vector<SimNode> nodes_;
  absl::flat_hash_map<std::string, size_t> node_index_;
  std::vector<Live> live_;
  std::vector<std::optional<absl::Time>> placed_at_;  // By live_ index.
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  absl::Time NextWake() const {
    absl::Time wake = absl::InfiniteFuture();
    for (const SimPool& pool : pools_) wake = std::min(wake, pool.wake);
    return wake;
  }
  bool by_demand_ = false;  // Some pool lays its GPUs out by demand.
  std::vector<placement::RelayoutOrder> orders_;      // Every order given.
  std::vector<placement::RelayoutOrder> under_way_;   // Not carried out yet.
  absl::Time plan_at_ = absl::InfiniteFuture();      // A kPlanRelayouts to come.
  int64_t sequence_ = 0;
  absl::Time evaluate_at_ = absl::InfiniteFuture();
  absl::Time last_evaluation_ = absl::InfinitePast();
  int64_t running_ = 0;
  int64_t booting_ = 0;
  std::vector<std::string> unplaceable_;
  int64_t evaluations_ = 0;
  OrgBudgets budgets_;
  std::vector<std::string> limited_;  // Orgs with a limit.
  absl::flat_hash_map<std::string, size_t> limited_index_;
  absl::flat_hash_map<std::string, int64_t> reach_generation_;
  absl::flat_hash_map<std::string, absl::Time> retry_at_;  // A kBudgetRetry to come.
};

absl::Status Engine::Prepare() {
  for (const core::NodePool& pool : catalog_.pools) {
    auto timings = input_.timings.find(pool.id);
    pool_index_[pool.id] = pools_.size();
    by_demand_ = by_demand_ || pool.mig.kind == core::MigLayoutKind::kByDemand;
    pools_.emplace_back(pool, timings == input_.timings.end() ? PoolTimings() : timings->second);
  }
  order_.resize(trace_.size());
  for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
  std::stable_sort(order_.begin(), order_.end(),
                   [&](size_t a, size_t b) { return trace_[a].time < trace_[b].time; });
  class_of_.resize(trace_.size());
  const core::WorkspaceClass* fallback = catalog_.DefaultClass();
  for (size_t i = 0; i < trace_.size(); ++i) {
    const Arrival& a = trace_[i];
    const core::WorkspaceClass* cls = a.class_id.empty() ? fallback : catalog_.FindClass(a.class_id);
    if (cls == nullptr) {
      return absl::InvalidArgumentError(
          a.class_id.empty()
              ? absl::StrCat("trace line ", a.line, ", column class: empty, and the catalog has "
                             "no default class")
              : absl::StrCat("trace line ", a.line, ", column class: class \"", a.class_id,
                             "\" is not in the catalog"));
    }
    class_of_[i] = cls;
  }
  return absl::OkStatus();
}

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

void Engine::WarmStart(absl::Time now) {
  for (size_t i = 0; i < pools_.size(); ++i) {
    SimPool& pool = pools_[i];
    pool.ledger.Open(now);
    if (!input_.options.warm_start) continue;
    int want = std::max(pool.pool->min_size, scaling::WarmBufferAt(pool.pool->warm_buffer, now).nodes);
    want = std::clamp(want, 0, std::max(0, pool.pool->max_size));
    for (int n = 0; n < want; ++n) StartNode(pool, i, now, /*warm=*/true);
  }
}

bool Engine::Rested(absl::Time now) const {
  if (queue_.size() > 0) return false;
  for (const SimPool& pool : pools_) {
    int resting = std::max(pool.pool->min_size, scaling::WarmBufferAt(pool.pool->warm_buffer, now).nodes);
    resting = std::clamp(resting, 0, std::max(0, pool.pool->max_size));
    if (pool.ledger.booting() > 0 || pool.ledger.registered() > resting) return false;
  }
  return true;
}

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

void Engine::Spending(const Live& w, bool started, absl::Time now) {
  const std::string& org = trace_[w.arrival].org;
  if (!budgets_.Limited(org)) return;
  if (started) {
    budgets_.Started(org, w.id, core::LeastGpuSevenths(*w.cls), now);
  } else {
    budgets_.Ended(org, w.id, now);
  }
  ExpectReach(org, now);
}

void Engine::ExpectReach(const std::string& org, absl::Time now) {
  const int64_t generation = ++reach_generation_[org];
  if (std::optional<absl::Time> at = budgets_.NextReach(org, now)) {
    Schedule(std::max(*at, now), Kind::kBudgetReach, limited_index_.at(org), generation);
  }
}

void Engine::BudgetReach(size_t index, int64_t generation, absl::Time now) {
  const std::string& org = limited_[index];
  if (generation != reach_generation_[org]) return;  // The rate changed since.
  if (!budgets_.Reached(org, now)) {
    ExpectReach(org, now);  // Rounding: a moment early.
    return;
  }
  budgets_.Warn(org);
  Schedule(now + core::StopWarningOf(input_.org_limits.at(org)), Kind::kBudgetStop, index);
}

void Engine::BudgetStop(size_t index, absl::Time now) {
  const std::string& org = limited_[index];
  if (budgets_.StopDue(org, now)) {
    for (const std::string& id : budgets_.Running(org)) {
      budgets_.Stopped(org);
      End(IndexOf(id), now);
    }
  }
  ExpectReach(org, now);
}

bool Engine::WithinBudget(const Live& w, absl::Time now) {
  const std::string& org = trace_[w.arrival].org;
  if (budgets_.Admits(org, core::LeastGpuSevenths(*w.cls), now)) return true;
  budgets_.HeldBack(org, w.id);
  auto [it, fresh] = retry_at_.try_emplace(org, budgets_.PeriodEnd(org, now));
  if (fresh) Schedule(it->second, Kind::kBudgetRetry, limited_index_.at(org));
  return false;
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
  scaling::FleetScaler::DemandByPool routed = fleet_.RouteDemand(
      catalog_, [&](const std::string& pool) { return snapshot_.PoolNodeCount(pool); }, demand_,
      now);
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

absl::StatusOr<SimulationResult> Engine::Run() {
  if (absl::Status prepared = Prepare(); !prepared.ok()) return prepared;
  if (input_.options.tick <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("tick must be above zero");
  }
  if (trace_.empty()) return absl::InvalidArgumentError("the trace has no workspaces");
  const absl::Time start = trace_[order_.front()].time;
  WarmStart(start);
  NeedEvaluation(start);
  // Once nothing runs, boots, waits or is still to arrive, the simulation
  // ends when every pool is back at its resting size (min_size or the warm
  // buffer in effect): idle nodes cost until they go, and a scale-down
  // schedule may keep them for hours. A day after that at most.
  absl::Duration settle = absl::Hours(24);
  for (const core::NodePool& pool : catalog_.pools) {
    settle = std::max(settle, std::max(pool.scale_down.unneeded, pool.scale_down.delay_after_add) +
                                  input_.options.batching_window + 4 * input_.options.tick);
  }
  size_t next_arrival = 0;
  absl::Time quiet_since = absl::InfiniteFuture();
  absl::Time now = start;
  while (true) {
    const bool quiet = next_arrival == order_.size() && running_ == 0 && booting_ == 0;
    if (!quiet) {
      quiet_since = absl::InfiniteFuture();
    } else if (quiet_since == absl::InfiniteFuture()) {
      quiet_since = now;
    }
    if (quiet && Rested(now)) break;
    const absl::Time stop = quiet_since + settle;
    absl::Time next_event = events_.empty() ? absl::InfiniteFuture() : events_.top().at;
    if (next_arrival < order_.size()) {
      next_event = std::min(next_event, trace_[order_[next_arrival]].time);
    }
    const absl::Time next_evaluation = std::min(evaluate_at_, NextWake());
    const absl::Time next = std::min({next_event, next_evaluation, stop});
    if (next == absl::InfiniteFuture() || next >= stop) {
      now = stop == absl::InfiniteFuture() ? now : stop;
      break;
    }
    now = next;
    if (next_event <= next_evaluation) {
      // Everything that happens at `now`, then the placements it allows.
      while (next_arrival < order_.size() && trace_[order_[next_arrival]].time == now) {
        Arrive(order_[next_arrival++], now);
      }
      while (!events_.empty() && events_.top().at == now) {
        Event event = events_.top();
        events_.pop();
        switch (event.kind) {
          case Kind::kEnd: End(event.index, now); break;
          case Kind::kNodeUp: NodeUp(event.index, now); break;
          case Kind::kDriverReady: DriverReady(event.index, now); break;
          case Kind::kPlanRelayouts: PlanRelayouts(now); break;
          case Kind::kRelayoutDone: RelayoutDone(event.index, now); break;
          case Kind::kBudgetReach: BudgetReach(event.index, event.generation, now); break;
          case Kind::kBudgetStop: BudgetStop(event.index, now); break;
          case Kind::kBudgetRetry:
            retry_at_.erase(limited_[event.index]);
            Drain(nullptr, now);
            NeedEvaluation(now);
            break;
        }
      }
      continue;
    }
    evaluate_at_ = absl::InfiniteFuture();
    Evaluate(now);
  }
  return Finish(now);
}

SimulationResult Engine::Finish(absl::Time end) {
  SimulationResult result;
  result.start = trace_[order_.front()].time;
  result.end = end;
  result.evaluations = evaluations_;
  result.unplaceable = std::move(unplaceable_);
  result.budgets = budgets_.Finish(end);
  result.workspaces.resize(trace_.size());
  for (size_t i = 0; i < live_.size(); ++i) {
    const Live& w = live_[i];
    const Arrival& a = trace_[w.arrival];
    std::string pool = w.pool < pools_.size() ? pools_[w.pool].pool->id : "";
    if (!placed_at_[i] && w.pool < pools_.size()) pools_[w.pool].ledger.NeverPlaced();
    WorkspaceOutcome& out = result.workspaces[w.arrival];
    out = {a.id, std::move(pool), a.time, placed_at_[i]};
    out.estimate_phases = w.estimate_phases;
    out.estimate_p90 = w.estimate_p90;
  }
  for (SimPool& pool : pools_) {
    result.pools.push_back(pool.ledger.Finish(end, input_.options.long_wait));
  }
  return result;
}

}  // namespace

absl::StatusOr<SimulationResult> Simulate(const SimulationInput& input,
                                          const std::vector<Arrival>& trace) {
  Engine engine(input, trace);
  return engine.Run();
}

}  // namespace wsched::simulate
