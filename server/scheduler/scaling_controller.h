// Turns the scheduler's demand into per-pool scaling signals. One replica
// leads (a PostgreSQL advisory lock); it shows its view to a FleetScaler
// (the pure decisions, scaling/fleet_scaler.h, which the simulator runs too),
// publishes changed signals to the database (so every replica serves them
// and a new leader continues their generations) and hands them to the exec
// actuator. Followers serve the leader's published signals.
#ifndef WSCHED_SERVER_SCHEDULER_SCALING_CONTROLLER_H_
#define WSCHED_SERVER_SCHEDULER_SCALING_CONTROLLER_H_

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/metrics/metrics.h"
#include "server/placement/relayout_plan.h"
#include "server/scaling/exec_actuator.h"
#include "server/scaling/fleet_scaler.h"
#include "server/scaling/pool_scaler.h"
#include "server/scaling/scaling_signal.h"
#include "server/scheduler/budget_enforcer.h"
#include "server/scheduler/cluster_driver_installs.h"
#include "server/scheduler/scaling_election.h"
#include "server/scheduler/scheduler.h"
#include "server/scheduler/workspace_retention.h"
#include "server/store/database.h"
#include "server/store/types.h"

namespace wsched::scheduler {

struct ScalingControllerOptions {
  absl::Duration tick = absl::Milliseconds(250);
  // How much lower than the serving threads the loop runs (nice value
  // added to its thread). A tick walks every node: 19 ms at 20,000 nodes
  // (scaling_benchmark), four times a second. At an equal priority, on a
  // busy machine, that took a core from placements in one piece and set
  // their p99 (docs/performance-history.md, "The scaling tick"); lower, it
  // spreads out and still runs at full speed on idle CPUs. 0: as the others.
  int nice_increment = 10;
  scaling::ScalerOptions scaler;
  // Exec actuator: argv of the admin's command; empty = gRPC stream only.
  std::vector<std::string> actuator_command;
  absl::Duration actuator_timeout = absl::Minutes(5);
  // The `cluster` face of driver installs; no command: none.
  ClusterDriverInstallOptions cluster_installs;
  // Driver rollouts (core/driver_rollout.h) and cluster installs step every this many leader
  // ticks: a rollout moves at the pace of installs (minutes), not placements.
  int driver_rollout_every_ticks = 8;
  // Deleting stopped workspace rows, which only the leader does.
  RetentionOptions retention;
  // Spending limits acting on running workspaces, which only the leader does.
  BudgetEnforcerOptions budget;
  // The leader lock's lease (store/lock_lease.h); it is probed every tick
  // (scaling_election.h).
  store::LeaseOptions lease;
  // MIG layouts by demand (placement/relayout_plan.h): the leader plans
  // every this many ticks (a pass over the queue under the placement lock,
  // so not every tick); an order not done within relayout_give_up_after is
  // dropped, and may be given again.
  int relayout_every_ticks = 4;
  absl::Duration relayout_give_up_after = absl::Minutes(5);
  placement::RelayoutLimits relayout_limits;
};

class ScalingController {
 public:
  ScalingController(store::Database* db, Scheduler* scheduler, metrics::Metrics* metrics,
                    ScalingControllerOptions options);
  ~ScalingController();
  ScalingController(const ScalingController&) = delete;
  ScalingController& operator=(const ScalingController&) = delete;

  absl::Status Start();
  void Stop();

  struct State {
    // Each with its published generation (the one watchers see).
    std::vector<scaling::PoolSignal> pools;
    std::string leader;  // Replica id of the leader.
    int64_t version = 0;  // Bumped whenever any pool's signal changes.
  };
  State Current() const;
  // Blocks until the state's version exceeds `after`, `timeout` passes
  // (real time), or Stop.
  int64_t WaitForChange(int64_t after, absl::Duration timeout);
  bool stopping() const;

  // Actuator feedback; stored so that whichever replica leads consumes it.
  absl::Status Report(const store::ActuatorReportRow& report);

  // Estimated time until pending work on `pool` is placed: the median of the
  // pool's recent node start times, else the configured default.
  std::optional<absl::Duration> EstimateDelay(const std::string& pool) const;

 private:
  void Loop();
  // The loop leads with its state loaded and the lease runs: what the
  // retention sweep and the budget pass check before they act (any thread).
  bool LeadsNow() const;
  void LeadTick(absl::Time now);
  void FollowTick();
  // Driver rollouts, then the cluster face's installs (the leader's).
  void StepDrivers();
  void BecomeLeader();
  // The leader's MIG re-layouts: ends the finished and dropped orders, plans
  // new ones on the mirror and publishes the set when it changed.
  void StepRelayouts(absl::Time now);
  std::vector<scaling::PoolObservation> Observe(absl::Time now);
  void Publish(const std::string& pool, const scaling::PoolSignal& signal, absl::Time now);
  void RecordStartSamples(const std::string& pool, const std::vector<absl::Duration>& samples,
                          const scaling::FleetScaler::StartPhaseSamples& phases);

  store::Database* const db_;
  Scheduler* const scheduler_;
  metrics::Metrics* const metrics_;
  const ScalingControllerOptions options_;
  ScalingElection election_;
  std::unique_ptr<scaling::ExecActuator> actuator_;
  std::unique_ptr<ClusterDriverInstalls> cluster_installs_;  // Null without a command.

  // Loop-thread state (only the loop thread touches it).
  // The election's term this loop has loaded the leader's state for.
  std::optional<int64_t> led_term_;
  // The loop leads now (led_term_ set), for LeadsNow.
  std::atomic<bool> leading_now_{false};
  std::unique_ptr<WorkspaceRetention> retention_;
  std::unique_ptr<BudgetEnforcer> budget_;
  scaling::FleetScaler fleet_;
  // By pool: the previous leader's last generation, which this one continues.
  std::map<std::string, int64_t> generation_base_;
  int64_t last_report_id_ = 0;
  int64_t lead_ticks_ = 0;
  // What this leader last published of the re-layouts; nullopt: nothing yet.
  std::optional<std::vector<placement::RelayoutOrder>> published_relayouts_;

  mutable absl::Mutex mu_;
  std::map<std::string, scaling::PoolSignal> published_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::optional<absl::Duration>> estimates_ ABSL_GUARDED_BY(mu_);
  std::string leader_ ABSL_GUARDED_BY(mu_);
  int64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread loop_;
};

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_SCALING_CONTROLLER_H_
