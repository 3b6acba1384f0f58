// Estimates that are checked (docs/placement.md "Estimates that are
// checked"): the time-to-GPU estimate a workspace is given when it is
// queued is stored with it; when the queue places it, how long it took is
// stored too and compared with the p90 it was given; and the share of a
// pool's placements within their p90, over a window, is reported as a
// metric. Every write is a small unit of its own after the decision's
// commit, never part of it: a lost record costs an estimate's check, not a
// placement.
#ifndef WSCHED_SERVER_PIPELINE_ESTIMATE_CHECKS_H_
#define WSCHED_SERVER_PIPELINE_ESTIMATE_CHECKS_H_

#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/core/clock.h"
#include "server/metrics/metrics.h"
#include "server/replica/stores.h"

namespace wsched::pipeline {

class EstimateChecks {
 public:
  EstimateChecks(replica::PlacementStore* store, metrics::Metrics* metrics, core::Clock clock,
                 absl::Duration window)
      : store_(store), metrics_(metrics), clock_(std::move(clock)), window_(window) {}

  // Workspace `id` was queued at `at` and shown this estimate.
  void Given(const std::string& id, absl::Time at, absl::Duration p50, absl::Duration p90);
  // The queue placed these workspaces just now.
  void Placed(const std::vector<std::string>& ids);
  // Each pool's share of placements within their p90 over the window, into
  // the metric (from the database: every replica reports the same).
  void Report() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  replica::PlacementStore* const store_;
  metrics::Metrics* const metrics_;
  const core::Clock clock_;
  const absl::Duration window_;
  absl::Mutex mu_;
  std::set<std::string> reported_ ABSL_GUARDED_BY(mu_);  // Pools with a share exported.
};

}  // namespace wsched::pipeline

#endif  // WSCHED_SERVER_PIPELINE_ESTIMATE_CHECKS_H_
