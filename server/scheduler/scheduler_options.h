// What a replica's scheduler is told (scheduler.h): its timers, the group
// commit's limits and the defaults of its estimates. wsched-server's flags
// take their defaults from here (root/server.h), so each is written once.
#ifndef WSCHED_SERVER_SCHEDULER_SCHEDULER_OPTIONS_H_
#define WSCHED_SERVER_SCHEDULER_SCHEDULER_OPTIONS_H_

#include <functional>

#include "absl/time/time.h"
#include "server/replica/recently_ended.h"

namespace wsched::scheduler {

struct SchedulerOptions {
  absl::Duration heartbeat_interval = absl::Seconds(10);  // Told to agents.
  absl::Duration node_lost_after = absl::Seconds(60);     // Missed heartbeats.
  absl::Duration refresh_interval = absl::Seconds(2);     // Retry pending work this often.
  absl::Duration feed_poll_interval = absl::Seconds(1);   // Read the change log at least this often.
  absl::Duration feed_gap = absl::Milliseconds(10);  // Between background reads (FeedFollower::StartFollowing).
  absl::Duration feed_retention = absl::Minutes(15);      // Change-log entries kept for followers.
  // A WatchWorkspaces or WatchNodes stream sent nothing for this long gets a
  // bookmark (watch/fanout.h).
  absl::Duration watch_bookmark_interval = absl::Seconds(10);
  // One writer: batches never hold node rows at the same time, so they
  // cannot deadlock or wait on each other's locks; requests that arrive
  // during a commit form the next batch (docs/performance.md).
  int max_commit_batch = 128;
  absl::Duration max_commit_wait = absl::ZeroDuration();  // See store::CommitBatcher::Options.
  // What a new GPU placement commits to against spending limits: its GPUs
  // for this long (docs/billing.md "Spending limits").
  absl::Duration budget_interval = absl::Seconds(60);
  int place_attempts = 10;  // Decide + commit rounds before giving up on races.
  // A GPU that went unhealthy returns to service once its agent has reported
  // it healthy for this long (inventory/gpu_health.h).
  absl::Duration gpu_healthy_for = absl::Minutes(10);
  // Time to GPU while nothing is measured (placement/time_to_gpu.h).
  absl::Duration default_node_start = absl::Minutes(5);
  absl::Duration default_driver_install = absl::Minutes(10);
  // --scaling_batching_window: part of the estimate before a scale-up.
  absl::Duration scaling_batching_window = absl::Seconds(2);
  // The window the share of placements within their p90 estimate is
  // reported over (pipeline/estimate_checks.h).
  absl::Duration estimate_accuracy_window = absl::Hours(1);
  // How long, and for how many workspaces at most, the version of a
  // workspace that ended is kept after it stops being mirrored: the change
  // feed's entries for it arrive a moment after this replica's own mirror
  // (replica/recently_ended.h).
  replica::RecentlyEnded::Limits ended_window;
  // The idle-GPU policy (idle_monitor.h): a workspace whose samples stopped
  // for this long is not judged here any more; zero = 3 heartbeat intervals.
  absl::Duration idle_stale_after = absl::ZeroDuration();
  // Whether this replica drains the pending queue now: with one placer
  // (docs/architecture.md), only the placer does, so the front doors add
  // no writes of their own. Empty: always.
  std::function<bool()> drains_queue;
};

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_SCHEDULER_OPTIONS_H_
