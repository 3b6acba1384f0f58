// One replica: the root that builds its parts, wires them, loads them
// from the database and runs the background loop. PostgreSQL stays the
// arbiter: every change is committed first (or raced for, and retried) and
// mirrored after, guarded by the version it was decided from.
//
// The parts (docs/architecture.md, "Who owns what"): ReplicaMirror holds
// what a decision reads (snapshot, catalog, queue, versions) under the one
// lock a decision needs; MirrorFeedSink and FeedFollower keep it current
// from the change log; PlacementPipeline places, drains the queue, stops
// and answers; NodeInventory registers nodes and takes heartbeats;
// DrainRequests says what the next queue drain tries; WatchHub wakes
// watchers; IdleMonitor runs the idle-GPU policy. This class has no lock
// and keeps no state of its own: callers use the parts directly.
#ifndef WSCHED_SERVER_SCHEDULER_SCHEDULER_H_
#define WSCHED_SERVER_SCHEDULER_SCHEDULER_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/core/clock.h"
#include "server/metrics/metrics.h"
#include "server/replica/feed_follower.h"
#include "server/idle/idle_actions.h"
#include "server/idle/idle_monitor.h"
#include "server/inventory/node_credentials.h"
#include "server/inventory/node_inventory.h"
#include "server/pipeline/placement_pipeline.h"
#include "server/inventory/credential_admin.h"
#include "server/replica/drain_requests.h"
#include "server/inventory/driver_rollouts.h"
#include "server/scheduler/scheduler_options.h"
#include "server/replica/replica_mirror.h"
#include "server/replica/settings_cache.h"
#include "server/replica/stores.h"
#include "server/usage/usage_accounting.h"
#include "server/replica/watch_hub.h"
#include "server/store/change_feed.h"
#include "server/store/database.h"
#include "server/watch/fanout.h"
#include "server/watch/history_follower.h"
#include "server/watch/history_source.h"

namespace wsched::scheduler {

// What the scheduler reads and writes. Without `db` (unit tests) there is
// no inventory, listener or background loop: placement and the feed only.
struct SchedulerStores {
  store::Database* db = nullptr;
  replica::PlacementStore* placement = nullptr;
  replica::StateStore* state = nullptr;
  replica::FeedSource* feed = nullptr;
};

class Scheduler {
 public:
  // On PostgreSQL: builds the database stores over `db`.
  Scheduler(store::Database* db, metrics::Metrics* metrics, SchedulerOptions options);
  Scheduler(SchedulerStores stores, metrics::Metrics* metrics, SchedulerOptions options,
            core::Clock clock);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Loads catalog, nodes, holds and pending work from the database and
  // starts the background loops (lost nodes, refresh, pending drain).
  absl::Status Start();
  // Stops the loops and wakes every watcher.
  void Stop();
  bool stopping() const { return drains_.stopping(); }

  // Brings the catalog up to date (after an apply on this replica).
  absl::Status ReloadCatalog();
  // Applies every change committed anywhere before the call (read your
  // writes across replicas); see docs/architecture.md.
  absl::Status CatchUp() { return follower_->CatchUp(); }
  // When this replica last had every change committed before then applied
  // (the health check's feed lag; InfinitePast before the first load).
  absl::Time FeedCaughtUpAt() const { return follower_->caught_up_at(); }
  // Blocks until the workspace's version exceeds `after`, about `timeout`
  // passes (real time, whatever the clock says) or the scheduler stops;
  // returns the current version.
  int64_t WaitForChange(const std::string& workspace_id, int64_t after, absl::Duration timeout);

  // The parts, for callers to use directly.
  pipeline::PlacementPipeline& pipeline() { return *pipeline_; }
  const pipeline::PlacementPipeline& pipeline() const { return *pipeline_; }
  inventory::NodeInventory& inventory() { return *inventory_; }
  const inventory::NodeInventory& inventory() const { return *inventory_; }
  inventory::DriverRollouts& rollouts() { return *rollouts_; }
  // Which node each agent token belongs to, and changing them.
  const inventory::NodeCredentials& credentials() const { return credentials_; }
  inventory::CredentialAdmin& credential_admin() { return credential_admin_; }
  // The agents' GPU samples and the GPU time charged from them.
  const usage::UsageAccounting& usage() const { return usage_; }
  // What this replica mirrors of the database; its View() is the newest
  // immutable picture, walked without a lock (cluster_view.h).
  const replica::ReplicaMirror& mirror() const { return *mirror_; }
  // The same, for the scaling leader's MIG re-layouts (SetRelayouts,
  // StepRelayouts), which mark the snapshot.
  replica::ReplicaMirror& mirror() { return *mirror_; }
  // WatchWorkspaces: the streams' fanout and where they read the change
  // log's history (a database scheduler only).
  watch::Fanout& workspace_fanout() { return fanout_; }
  watch::HistorySource& workspace_history() { return *history_; }
  // WatchNodes: the same for nodes.
  watch::NodeFanout &node_fanout() { return node_fanout_; }
  watch::NodeHistorySource &node_history() { return *node_history_; }
  idle::IdleMonitor& idle() { return *idle_; }
  const idle::IdleMonitor& idle() const { return *idle_; }
  const SchedulerOptions& options() const { return options_; }
  // The replica's clock, which its decisions and timers read (tests set it).
  const core::Clock& clock() const { return clock_; }

 private:
  struct OwnedStores;  // The database stores of the first constructor.
  Scheduler(std::unique_ptr<OwnedStores> owned, store::Database* db, metrics::Metrics* metrics,
            SchedulerOptions options);
  // The idle-GPU policy over this replica (from the constructor).
  void WireIdleMonitor();
  // The workspace and node streams' followers of the change log, and the
  // listener that wakes them (from Start).
  void StartHistoryFollowers();
  // Lost nodes, change-log pruning and the queue drain's timer.
  void Loop();

  std::unique_ptr<OwnedStores> owned_;
  const SchedulerStores stores_;
  metrics::Metrics* const metrics_;
  const SchedulerOptions options_;
  const core::Clock clock_;
  // Each part below has its own lock; the order they nest in is declared
  // on ReplicaMirror's (replica_mirror.h).
  replica::DrainRequests drains_;
  replica::WatchHub watches_;
  replica::SettingsCache settings_;
  usage::UsageAccounting usage_;
  inventory::NodeCredentials credentials_;
  inventory::CredentialAdmin credential_admin_;
  std::unique_ptr<replica::ReplicaMirror> mirror_;
  std::unique_ptr<replica::FeedSink> feed_sink_;
  std::unique_ptr<replica::FeedFollower> follower_;
  std::unique_ptr<inventory::NodeInventory::Mirror> inventory_reads_;
  std::unique_ptr<inventory::NodeInventory> inventory_;
  std::unique_ptr<inventory::DriverRollouts> rollouts_;
  std::unique_ptr<pipeline::PlacementPipeline> pipeline_;
  // After the usage accounting: its samples feed the monitor, which goes first.
  std::unique_ptr<idle::IdleActions> idle_actions_;
  std::unique_ptr<idle::IdleMonitor> idle_;
  std::unique_ptr<store::ChangeListener> listener_;
  watch::Fanout fanout_;
  std::unique_ptr<watch::HistorySource> history_;
  std::unique_ptr<watch::HistoryFollower> history_follower_;
  watch::NodeFanout node_fanout_;
  std::unique_ptr<watch::NodeHistorySource> node_history_;
  std::unique_ptr<watch::NodeHistoryFollower> node_history_follower_;
  // Hears every commit, this replica's own too: streams follow them all
  // (both followers; each reads its own kind of the log).
  std::unique_ptr<store::ChangeListener> history_listener_;
  std::thread loop_;
};

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_SCHEDULER_H_
