// The simulator's engine (engine.h): its state and event loop, declared
// here so that its parts live in files of their own: the loop and the
// result (engine.cc), workspaces arriving, queueing and ending
// (engine_workspaces.cc), the simulated fleet and its scaling
// (engine_fleet.cc), and spending limits (engine_budgets.cc). Not for use
// outside server/simulate: Simulate() is the entry point.
#ifndef WSCHED_SERVER_SIMULATE_ENGINE_INTERNAL_H_
#define WSCHED_SERVER_SIMULATE_ENGINE_INTERNAL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/placement/decide.h"
#include "server/placement/pending_queue.h"
#include "server/placement/relayout_plan.h"
#include "server/placement/snapshot.h"
#include "server/placement/time_to_gpu.h"
#include "server/scaling/fleet_scaler.h"
#include "server/simulate/engine.h"
#include "server/simulate/org_budgets.h"
#include "server/simulate/pool_ledger.h"
#include "server/simulate/wake.h"

namespace wsched::simulate::internal {

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

}  // namespace wsched::simulate::internal

#endif  // WSCHED_SERVER_SIMULATE_ENGINE_INTERNAL_H_
