// What one simulated pool cost and how long its workspaces waited, kept as
// the simulation runs: nodes paid for and GPUs (or CPU) held integrated
// over time, the steps the chart draws, the targets, and every wait.
#ifndef WSCHED_SERVER_SIMULATE_POOL_LEDGER_H_
#define WSCHED_SERVER_SIMULATE_POOL_LEDGER_H_

#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "server/core/pool.h"
#include "server/core/workspace_class.h"
#include "server/simulate/engine.h"

namespace wsched::simulate {

class PoolLedger {
 public:
  PoolLedger(const core::NodePool& pool, const PoolTimings& timings);

  // Counting starts here (the first arrival).
  void Open(absl::Time start) { accounted_at_ = start; }

  int booting() const { return booting_; }
  int registered() const { return registered_; }
  // What a workspace of `cls` holds here: GPUs on a GPU pool, sevenths of a
  // GPU on a MIG pool (at least: it may get a larger slice), CPU millis on a
  // CPU pool (the unit of PoolResult::unit_per_node).
  int64_t UnitsOf(const core::WorkspaceClass& cls) const;

  void NodeAsked(absl::Time now);  // Paid from now, registers later.
  void NodeWarm(absl::Time now);   // Up before the simulation looked.
  void NodeUp(absl::Time now);     // An asked-for node registered.
  void NodeGone(absl::Time now);   // Deleted: paid no more.
  // A workspace of `units` starts (+) or stops (-) holding, or waiting on,
  // this pool.
  void Held(absl::Time now, int64_t units);
  void Waiting(absl::Time now, int64_t units);
  void Target(absl::Time now, int target);
  void Placed(absl::Duration wait) { waits_.push_back(wait); }
  void EstimateChecked(bool within_p90) {
    ++result_.estimates_checked;
    if (within_p90) ++result_.estimates_within_p90;
  }
  void NeverPlaced() { ++result_.never_placed; }
  void Relayout() { ++result_.relayouts; }

  PoolResult Finish(absl::Time end, absl::Duration long_wait);

 private:
  // Adds what the pool paid and held since the last change.
  void Account(absl::Time now);
  void RecordStep(absl::Time now);

  const bool gpu_;
  const bool mig_;
  const int64_t unit_per_node_;
  int booting_ = 0;
  int registered_ = 0;
  int target_ = 0;
  int64_t used_units_ = 0;
  int64_t pending_units_ = 0;
  absl::Time accounted_at_;
  double node_seconds_ = 0;
  double used_unit_seconds_ = 0;
  double stranded_unit_seconds_ = 0;
  std::vector<absl::Duration> waits_;
  PoolResult result_;
};

}  // namespace wsched::simulate

#endif  // WSCHED_SERVER_SIMULATE_POOL_LEDGER_H_
