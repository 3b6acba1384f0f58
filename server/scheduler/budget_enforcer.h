// Spending limits acting on running workspaces (docs/billing.md "Spending
// limits"): every interval, on the scaling leader only, reads each limited
// org's and project's spending from the ledger by the database's clock
// (the clock the ledger and the admission count by) and
//
// - block_and_stop at the limit: warns each running GPU workspace of the
//   scope (a budget mark with stops_at on its record, which its watchers
//   see as KIND_BUDGET_WARNING), stops it through the stop path with end
//   reason "budget" once stops_at has passed, and clears the warning if
//   spending is back under the limit first;
// - a threshold of warn_at_percent reached: writes a KIND_BUDGET_THRESHOLD
//   mark on the scope's running workspaces, once per threshold per period
//   (claimed in budget_thresholds_told in the same transaction, so a new
//   leader does not tell it again);
// - wsched_budget_used_ratio for every limited scope.
//
// Every write is guarded by the record's version as the pass read it: a
// workspace restarted or stopped meanwhile is left alone, and the next
// pass decides again from what is stored.
#ifndef WSCHED_SERVER_SCHEDULER_BUDGET_ENFORCER_H_
#define WSCHED_SERVER_SCHEDULER_BUDGET_ENFORCER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/core/budget_enforcement.h"
#include "server/metrics/metrics.h"
#include "server/store/database.h"

namespace wsched::scheduler {

struct BudgetEnforcerOptions {
  // Between passes (--budget_enforce_interval); zero: no passes.
  absl::Duration interval = absl::Seconds(5);
};

class BudgetEnforcer {
 public:
  // Stops `workspace` only at exactly `version`, end reason "budget".
  using StopAt = std::function<absl::Status(const std::string& workspace, int64_t version)>;
  // Brings this replica's mirror up to what the pass wrote.
  using CatchUp = std::function<absl::Status()>;

  BudgetEnforcer(store::Database* db, metrics::Metrics* metrics, BudgetEnforcerOptions options,
                 StopAt stop, CatchUp catch_up, std::function<bool()> leading);
  ~BudgetEnforcer();
  BudgetEnforcer(const BudgetEnforcer&) = delete;
  BudgetEnforcer& operator=(const BudgetEnforcer&) = delete;

  void Start();
  void Stop();

  // What one pass did.
  struct PassOutcome {
    int warned = 0;
    int cleared = 0;
    int stopped = 0;
    int thresholds_told = 0;  // Workspaces told of a threshold.
  };
  // One pass, whoever leads.
  absl::StatusOr<PassOutcome> Pass();

 private:
  // What a pass read, in one snapshot.
  struct Reading {
    absl::Time now;
    std::vector<core::ScopeSpending> scopes;
    std::vector<std::vector<core::BudgetedWorkspace>> running;  // Per scope.
    std::vector<core::BudgetedWorkspace> warned;
  };
  absl::StatusOr<Reading> Read();
  // Carries out one step; false when the record moved on or the stop failed.
  bool Carry(const core::BudgetStep& step, absl::string_view scope_kind);
  // Tells the thresholds newly reached of one scope; the workspaces told.
  absl::StatusOr<int> TellThresholds(const core::ScopeSpending& spending,
                                     const std::vector<core::BudgetedWorkspace>& running);
  void Loop();
  bool WaitForStop(absl::Duration timeout);

  store::Database* const db_;
  metrics::Metrics* const metrics_;
  const BudgetEnforcerOptions options_;
  const StopAt stop_;
  const CatchUp catch_up_;
  const std::function<bool()> leading_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread loop_;
};

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_BUDGET_ENFORCER_H_
