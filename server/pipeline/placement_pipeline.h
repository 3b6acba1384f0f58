// One replica's placement pipeline: the steps every placement takes,
// written once (DecisionCommit: decide and hold -> build -> commit ->
// mirror), and what runs them: a Place call (PlaceAttempts, one attempt
// under a bounded retry driver) and the queue drain (QueueDrain); the
// answers callers see (WorkspaceViews), stopping (WorkspaceStops) and
// first ready reports (WorkspaceReady).
// docs/architecture.md, "Life of a placement", walks it step by step.
//
// It owns the pieces and wires them over the replica's mirror and the
// store; none of them keeps state beyond the drain's one-at-a-time lock.
#ifndef WSCHED_SERVER_PIPELINE_PLACEMENT_PIPELINE_H_
#define WSCHED_SERVER_PIPELINE_PLACEMENT_PIPELINE_H_

#include <functional>

#include "server/core/clock.h"
#include "server/metrics/metrics.h"
#include "server/pipeline/decision_commit.h"
#include "server/replica/drain_requests.h"
#include "server/replica/feed_follower.h"
#include "server/inventory/node_inventory.h"
#include "server/pipeline/estimate_checks.h"
#include "server/pipeline/place_attempt.h"
#include "server/pipeline/queue_drain.h"
#include "server/replica/replica_mirror.h"
#include "server/replica/settings_cache.h"
#include "server/pipeline/settings_reader.h"
#include "server/replica/stores.h"
#include "server/replica/watch_hub.h"
#include "server/pipeline/workspace_ready.h"
#include "server/pipeline/workspace_stops.h"
#include "server/pipeline/workspace_views.h"

namespace wsched::pipeline {

class PlacementPipeline {
 public:
  // The replica's parts the pipeline reads and writes through.
  struct Parts {
    replica::PlacementStore* store = nullptr;
    replica::ReplicaMirror* mirror = nullptr;
    replica::FeedFollower* follower = nullptr;
    replica::DrainRequests* drains = nullptr;
    replica::WatchHub* watches = nullptr;
    replica::SettingsCache* settings = nullptr;
    inventory::NodeInventory* inventory = nullptr;
    metrics::Metrics* metrics = nullptr;
  };
  struct Options {
    int place_attempts = 10;  // Decide + commit rounds before giving up on races.
    WorkspaceViews::Defaults estimates;
    std::function<bool()> drains_queue;  // See QueueDrain.
    absl::Duration estimate_accuracy_window = absl::Hours(1);  // See EstimateChecks.
  };
  PlacementPipeline(Parts parts, Options options, core::Clock clock)
      : settings_(parts.store, parts.settings),
        views_({parts.store, parts.mirror, &settings_, parts.inventory}, options.estimates, clock),
        estimates_(parts.store, parts.metrics, clock, options.estimate_accuracy_window),
        commit_(parts.store, parts.mirror, clock),
        stops_(parts.store, parts.mirror, &views_, options.place_attempts),
        ready_(parts.store, &views_, clock,
               [inventory = parts.inventory] {
                 if (inventory != nullptr) inventory->ForgetTimings();
               },
               options.place_attempts),
        place_({parts.store, parts.mirror, parts.follower, parts.watches, &settings_, &views_, &commit_,
                &stops_, parts.metrics, &estimates_},
               options.place_attempts, clock),
        drain_({parts.mirror, parts.follower, parts.drains, &settings_, &views_, &commit_,
                parts.metrics, &estimates_},
               options.drains_queue, clock) {}
  PlacementPipeline(const PlacementPipeline&) = delete;
  PlacementPipeline& operator=(const PlacementPipeline&) = delete;

  PlaceAttempts& place() { return place_; }
  QueueDrain& drain() { return drain_; }
  const QueueDrain& drain() const { return drain_; }
  WorkspaceViews& views() { return views_; }
  WorkspaceStops& stops() { return stops_; }
  WorkspaceReady& ready() { return ready_; }
  EstimateChecks& estimates() { return estimates_; }

 private:
  SettingsReader settings_;
  WorkspaceViews views_;
  EstimateChecks estimates_;
  DecisionCommit commit_;
  WorkspaceStops stops_;
  WorkspaceReady ready_;
  PlaceAttempts place_;
  QueueDrain drain_;
};

}  // namespace wsched::pipeline

#endif  // WSCHED_SERVER_PIPELINE_PLACEMENT_PIPELINE_H_
