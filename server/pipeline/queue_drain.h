// The pending queue's drain: each queued workspace decided in queue order
// on what the ones before it left (placement/queue_pass.h, the pass the
// what-if simulator runs too), committed a batch at a time through the
// steps every placement shares (decision_commit.h); then what is left is
// told why it waits.
//
// Its lock, `drain_mu_`, keeps one drain at a time on a replica (the
// background loop's and a caller's); it is taken before the mirror's and
// guards nothing else.
#ifndef WSCHED_SERVER_PIPELINE_QUEUE_DRAIN_H_
#define WSCHED_SERVER_PIPELINE_QUEUE_DRAIN_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/core/clock.h"
#include "server/metrics/metrics.h"
#include "server/pipeline/budget_holds.h"
#include "server/pipeline/decision_commit.h"
#include "server/pipeline/estimate_checks.h"
#include "server/replica/drain_requests.h"
#include "server/replica/feed_follower.h"
#include "server/replica/replica_mirror.h"
#include "server/pipeline/settings_reader.h"
#include "server/pipeline/workspace_views.h"

namespace wsched::pipeline {

class QueueDrain {
 public:
  struct Parts {
    replica::ReplicaMirror* mirror = nullptr;
    replica::FeedFollower* follower = nullptr;  // Told when a commit found a change made elsewhere.
    replica::DrainRequests* drains = nullptr;   // What to try, and whether the replica stops.
    SettingsReader* settings = nullptr;
    WorkspaceViews* views = nullptr;            // The scaler's view of each pool, for reasons.
    DecisionCommit* commit = nullptr;
    metrics::Metrics* metrics = nullptr;
    EstimateChecks* estimates = nullptr;  // Checks what each placement took.
  };
  // `drains_queue`: whether this replica drains now (only the placer does,
  // docs/architecture.md); empty: always.
  QueueDrain(Parts parts, std::function<bool()> drains_queue, core::Clock clock)
      : parts_(parts), drains_queue_(std::move(drains_queue)), clock_(std::move(clock)) {}

  // Tries to place pending work on the snapshot's free capacity now:
  // every pending workspace (kEverything), or only those that may use a pool
  // where capacity came back or changed since the last drain (kWhatChanged,
  // what a feed batch, a stop or a heartbeat asks for). The background loop
  // drains everything each --refresh_interval, so a workspace held back by
  // something no pool event names (an org quota freed in another pool, a
  // clock) waits for that at most.
  enum class Scope { kEverything, kWhatChanged };
  void Drain(Scope scope = Scope::kEverything) ABSL_LOCKS_EXCLUDED(drain_mu_);
  // Queue placements decided so far (each pending workspace a drain tried).
  int64_t Decisions() const { return decisions_.load(); }

 private:
  // The queued workspace, when a drain may decide for it now: nullopt when
  // it left the queue, its class is gone, a policy holds it back, or a
  // spending limit refused it (budget_holds.h).
  std::optional<replica::ReplicaMirror::QueuedWorkspace> Decidable(const std::string& workspace_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(drain_mu_);
  // Decides for it and, when that places, holds what it chose and builds
  // the commit (`held`).
  struct Decided {
    placement::Decision decision;
    std::optional<HeldPlacement> held;
  };
  absl::StatusOr<Decided> Decide(const replica::ReplicaMirror::QueuedWorkspace& queued);
  // Commits `batch` together, then notes what each outcome means for the queue.
  void Commit(std::vector<HeldPlacement>& batch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(drain_mu_);
  // Sets `w` aside when `refused` is a spending limit's refusal.
  void NoteBudgetHold(const core::Workspace& w, const absl::Status& refused)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(drain_mu_);
  // Tells what is left in the queue why it waits.
  void Explain();

  const Parts parts_;
  const std::function<bool()> drains_queue_;
  const core::Clock clock_;
  // One drain at a time; see the top of this file.
  absl::Mutex drain_mu_ ABSL_ACQUIRED_BEFORE(parts_.mirror->mutex());
  std::atomic<int64_t> decisions_{0};
  BudgetHolds budget_holds_ ABSL_GUARDED_BY(drain_mu_);
};

}  // namespace wsched::pipeline

#endif  // WSCHED_SERVER_PIPELINE_QUEUE_DRAIN_H_
