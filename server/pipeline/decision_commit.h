// The steps every placement takes, whoever asked for it (a Place call, the
// queue drain): decide on the snapshot and hold tentatively (in one step
// of the mirror, ReplicaMirror::DecideAndHold) -> build the record and its
// device answer (Build) -> commit, guarded by what the decision saw ->
// mirror, or release the hold (Commit). No state of its own.
#ifndef WSCHED_SERVER_PIPELINE_DECISION_COMMIT_H_
#define WSCHED_SERVER_PIPELINE_DECISION_COMMIT_H_

#include <vector>

#include "absl/status/statusor.h"
#include "server/core/clock.h"
#include "server/core/workspace.h"
#include "server/metrics/metrics.h"
#include "server/placement/decide.h"
#include "server/replica/replica_mirror.h"
#include "server/replica/stores.h"
#include "server/store/types.h"

namespace wsched::pipeline {

// A decision that placed, held tentatively, with the record and the
// guarded write that commit it.
struct HeldPlacement {
  core::Workspace workspace;
  placement::Placed placed;
  store::WorkspaceWrite write;
};

class DecisionCommit {
 public:
  DecisionCommit(replica::PlacementStore* store, replica::ReplicaMirror* mirror, core::Clock clock)
      : store_(store), mirror_(mirror), clock_(std::move(clock)) {}

  // Builds the record (device answer included) for `held`, a decision that
  // placed; releases its hold when that fails.
  absl::StatusOr<HeldPlacement> Build(const core::WorkspaceClass& cls,
                                      const replica::ReplicaMirror::HeldDecision& held,
                                      core::Workspace workspace, store::WorkspaceWrite write);
  // Commits them together; mirrors each that landed, releases the hold of
  // each that did not (keeping off its node after a lost race). Outcomes in
  // the order given.
  std::vector<store::WriteOutcome> Commit(std::vector<HeldPlacement>& held);

 private:
  replica::PlacementStore* const store_;
  replica::ReplicaMirror* const mirror_;
  const core::Clock clock_;
};

// Counts `refused` in wsched_budget_refusals_total when the commit refused
// it at a spending limit (BUDGET_EXHAUSTED); other refusals count nothing.
void NoteBudgetRefusal(metrics::Metrics& metrics, const absl::Status& refused);

}  // namespace wsched::pipeline

#endif  // WSCHED_SERVER_PIPELINE_DECISION_COMMIT_H_
