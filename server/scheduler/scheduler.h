// One replica's placement service: it wires the parts that own the
// replica's state and runs the placement pipeline over them. PostgreSQL
// stays the arbiter: every change is committed first (or raced for, and
// retried) and mirrored after, guarded by the version it was decided from.
//
// The parts (docs/architecture.md, "Who owns what"): ReplicaMirror holds
// what a decision reads (snapshot, catalog, queue, versions) under the one
// lock a decision needs; MirrorFeedSink and FeedFollower keep it current
// from the change log; NodeInventory registers nodes and takes heartbeats;
// DrainRequests says what the next queue drain tries; WatchHub wakes
// watchers; IdleMonitor runs the idle-GPU policy. This class has no lock of
// its own over state: its files are place_attempt.cc (PlaceWorkspace: one
// attempt and its bounded retry driver), decision_commit.cc (decide ->
// hold -> build -> commit -> mirror, shared by Place and the queue drain),
// queue_drain.cc, workspace_views.cc (stop, get, list, pending reasons),
// idle.cc and scheduler.cc (start-up, the background loop, watches).
#ifndef WSCHED_SERVER_SCHEDULER_SCHEDULER_H_
#define WSCHED_SERVER_SCHEDULER_SCHEDULER_H_

#include <functional>
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/core/catalog.h"
#include "server/core/class_resolution.h"
#include "server/core/clock.h"
#include "server/core/node.h"
#include "server/core/paging.h"
#include "server/core/usage.h"
#include "server/core/workspace.h"
#include "server/metrics/metrics.h"
#include "server/scheduler/cluster_view.h"
#include "server/scheduler/feed_follower.h"
#include "server/scheduler/idle_monitor.h"
#include "server/scheduler/node_inventory.h"
#include "server/scheduler/drain_requests.h"
#include "server/scheduler/recently_ended.h"
#include "server/scheduler/scheduler_options.h"
#include "server/scheduler/replica_mirror.h"
#include "server/scheduler/settings_cache.h"
#include "server/scheduler/stores.h"
#include "server/scheduler/watch_hub.h"
#include "server/placement/decide.h"
#include "server/placement/pending_queue.h"
#include "server/placement/pending_reason.h"
#include "server/placement/snapshot.h"
#include "server/store/change_feed.h"
#include "server/store/database.h"
#include "server/store/types.h"

namespace wsched::scheduler {

// A workspace with what the answer adds while it waits.
struct WorkspaceView {
  core::Workspace workspace;
  int queue_position = 0;  // 1-based; 0 when not pending.
  std::optional<absl::Duration> estimated_wait;
  // Pending: why it waits (placement/pending_reason.h), and how the
  // estimate was made.
  std::optional<placement::PendingReason> pending;
  std::string estimate_basis;
  int64_t version = 0;  // The stored record's version (every change bumps it).
};

// What the scheduler reads and writes. Without `db` (unit tests) there is
// no inventory, listener or background loop: placement and the feed only.
struct SchedulerStores {
  store::Database* db = nullptr;
  PlacementStore* placement = nullptr;
  StateStore* state = nullptr;
  FeedSource* feed = nullptr;
};

class Scheduler {
 public:
  using Clock = core::Clock;
  // On PostgreSQL: builds the database stores over `db`.
  Scheduler(store::Database* db, metrics::Metrics* metrics, SchedulerOptions options);
  Scheduler(SchedulerStores stores, metrics::Metrics* metrics, SchedulerOptions options,
            Clock clock);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Loads catalog, nodes, holds and pending work from the database and
  // starts the background loops (lost nodes, refresh, pending drain).
  absl::Status Start();
  // Stops the loops and wakes every watcher.
  void Stop();

  // ---- catalog (scheduler.cc) ----
  // Brings the catalog up to date (after an apply on this replica).
  absl::Status ReloadCatalog();
  // Applies every change committed anywhere before the call (read your
  // writes across replicas); see docs/architecture.md.
  absl::Status CatchUp();
  // When this replica last had every change committed before then applied
  // (the health check's feed lag; InfinitePast before the first load).
  absl::Time FeedCaughtUpAt() const { return follower_->caught_up_at(); }

  // ---- inventory (node_inventory.h), wired to this replica's mirror ----
  // Callers register, heartbeat, list and administer nodes on it directly.
  NodeInventory& inventory() { return *inventory_; }
  const NodeInventory& inventory() const { return *inventory_; }
  const SchedulerOptions& options() const { return options_; }

  // ---- placement (place_attempt.cc, queue_drain.cc, workspace_views.cc) ----
  absl::StatusOr<WorkspaceView> Place(const PlaceRequest& request);
  // Stops the workspace; a placed one leaves its usage record with
  // `reason` (kStopped for StopWorkspace, kIdle for the idle-GPU policy;
  // InvalidArgument for a reason only a node path may write).
  absl::StatusOr<WorkspaceView> StopWorkspace(const std::string& id,
                                              core::EndReason reason = core::EndReason::kStopped);
  absl::StatusOr<WorkspaceView> GetWorkspace(const std::string& id);
  // For a watcher: `last` brought up to date. While this replica has seen
  // no newer version of the workspace (the change feed tells it of every
  // write, whichever replica made it), nothing is read from the database:
  // only what changes without a write (GPU health, the pending reason) is
  // derived again from memory. Null `last`, or a newer version: read anew.
  absl::StatusOr<WorkspaceView> RefreshWorkspace(const std::string& id, const WorkspaceView* last);
  absl::StatusOr<core::Page<WorkspaceView>> ListWorkspaces(const store::WorkspaceFilter& filter,
                                                          const core::PageRequest& page);
  // Tries to place pending work on the snapshot's free capacity now:
  // every pending workspace (kEverything), or only those that may use a pool
  // where capacity came back or changed since the last drain (kWhatChanged,
  // what a feed batch, a stop or a heartbeat asks for). The background loop
  // drains everything each --refresh_interval, so a workspace held back by
  // something no pool event names (an org quota freed in another pool, a
  // clock) waits for that at most.
  enum class DrainScope { kEverything, kWhatChanged };
  void DrainPending(DrainScope scope = DrainScope::kEverything);
  // Queue placements decided so far (each pending workspace a drain tried).
  int64_t QueueDecisions() const { return queue_decisions_.load(); }

  // ---- watch (scheduler.cc) ----
  // Blocks until the workspace's version exceeds `after`, about `timeout`
  // passes (real time, whatever the clock says) or the scheduler stops;
  // returns the current version.
  int64_t WaitForChange(const std::string& workspace_id, int64_t after, absl::Duration timeout);
  // The replica's clock, which its decisions and timers read (tests set it).
  const Clock& clock() const { return clock_; }
  bool stopping() const;

  // ---- idle GPUs (idle.cc, idle_monitor.h) ----
  IdleMonitor& idle() { return *idle_; }
  const IdleMonitor& idle() const { return *idle_; }
  // Stops the workspace with end reason "idle", only at exactly `version`
  // (ABORTED when it moved on): the StopWorkspace path, guarded.
  absl::Status StopIdleWorkspace(const std::string& id, int64_t version);

  // ---- read-only views for metrics, scaling and listings ----
  // The newest immutable view of this replica's state (cluster_view.h):
  // walk it as long as needed, no lock held.
  std::shared_ptr<const ClusterView> View() const { return mirror_->View(); }
  // The catalog decisions use now (replaced whole, never changed in place).
  std::shared_ptr<const core::Catalog> CurrentCatalog() const { return mirror_->CatalogNow().first; }
  // What this replica mirrors of the database (replica_mirror.h).
  const ReplicaMirror& mirror() const { return *mirror_; }
  using PendingDemand = scheduler::PendingDemand;
  std::vector<PendingDemand> Pending() const { return View()->pending; }
  using TrackedWorkspaces = scheduler::TrackedWorkspaces;
  TrackedWorkspaces Tracked() const { return View()->tracked; }
  // The agents' GPU samples, by pool and class (usage_accounting.h).
  // What the scaler says of each pool, for pending reasons; set once by the
  // scaling controller before serving. Called without the scheduler's lock.
  using ScalingViews = std::map<std::string, placement::PoolScalingView>;
  void SetScalingViews(std::function<ScalingViews()> fn) { scaling_views_ = std::move(fn); }

 private:
  struct OwnedStores;  // The database stores of the first constructor.
  Scheduler(std::unique_ptr<OwnedStores> owned, store::Database* db, metrics::Metrics* metrics,
            SchedulerOptions options);

  // scheduler.cc
  void Loop();

  // place_attempt.cc: PlaceWorkspace as attempts run by a bounded driver.
  // What the call carries from one attempt to the next.
  struct PlaceProgress {
    bool read = false;       // Read the inputs from the database, not memory.
    bool confirmed = false;  // Caught up with the feed: negative answers may stand.
    std::string class_label = "unresolved";  // For the placement metric.
  };
  // The call ends with this answer (`outcome` labels the metric).
  struct PlaceAnswer {
    absl::StatusOr<WorkspaceView> result;
    absl::string_view outcome;
  };
  // Another attempt, after what this one asks for.
  struct PlaceRetry {
    bool read = false;        // The next attempt reads from the database.
    bool catch_up = false;    // Apply what other replicas committed first...
    bool confirms = false;    // ...which confirms this call's negative answers.
    bool spread_out = false;  // Pause a moment (a lost race).
    std::optional<int64_t> wait_past_version;  // Wait for another request for the id.
  };
  using PlaceNext = std::variant<PlaceAnswer, PlaceRetry>;
  PlaceNext AttemptPlace(const PlaceRequest& request, PlaceProgress& progress);
  // Saves a workspace nothing can hold now as pending (the queue's tail).
  PlaceNext SavePending(core::Workspace w, const core::WorkspaceClass& cls,
                        store::WorkspaceWrite write);
  // What a placement decides with: from memory on the hot path (a workspace
  // this replica never saw, cached settings), else (`read`) from the
  // database. From memory, the catalog generation is the mirror's
  // (`catalog_generation`, read by the caller).
  absl::StatusOr<PlacementInputs> InputsFor(const PlaceRequest& request, bool read,
                                            int64_t catalog_generation);

  // decision_commit.cc: the steps every placement shares (Place, the drain).
  // A decision that placed, held tentatively, with the record and the
  // guarded write that commit it.
  struct HeldPlacement {
    core::Workspace workspace;
    placement::Placed placed;
    store::WorkspaceWrite write;
  };
  // Builds the record (device answer included) for `held`, a decision that
  // placed; releases its hold when that fails.
  absl::StatusOr<HeldPlacement> BuildHeld(const core::WorkspaceClass& cls,
                                          const ReplicaMirror::HeldDecision& held,
                                          core::Workspace workspace, store::WorkspaceWrite write);
  // Commits them together; mirrors each that landed, releases the hold of
  // each that did not (keeping off its node after a lost race). Outcomes in
  // the order given.
  std::vector<store::WriteOutcome> CommitHeld(std::vector<HeldPlacement>& held);

  // queue_drain.cc
  // The queued workspace, when a drain may decide for it now: nullopt when
  // it left the queue, its class is gone, or a policy holds it back.
  std::optional<ReplicaMirror::QueuedWorkspace> DecidableQueued(const std::string& workspace_id);
  // Decides for it and, when that places, holds what it chose and builds
  // the commit (`held`).
  struct QueueDecision {
    placement::Decision decision;
    std::optional<HeldPlacement> held;
  };
  absl::StatusOr<QueueDecision> DecideQueued(const ReplicaMirror::QueuedWorkspace& queued);
  // Commits `batch` together (CommitHeld), then notes what each outcome
  // means for the queue.
  void CommitQueuePlacements(std::vector<HeldPlacement>& batch);

  // workspace_views.cc: why a pending workspace waits.
  struct PendingLimits {
    std::optional<placement::QuotaFigures> quota;
    std::optional<std::string> policy_denial;
  };
  // The org quota and class policy as they apply to a pending workspace now
  // (reads the org's GPU count when it has a quota).
  PendingLimits LimitsOf(const core::Workspace& w);
  // Reads a project's and org's settings (and, with a quota and
  // `org_gpus_held`, the org's held GPUs) and caches the settings.
  absl::StatusOr<CachedSettings> ReadSettings(const std::string& project_id,
                                              const std::string& org_id, int64_t* org_gpus_held);
  // Cached settings, else read from the database and cached; nullopt when
  // unreadable.
  std::optional<CachedSettings> SettingsFor(const std::string& project_id,
                                            const std::string& org_id);
  // Why a workspace of `class_id` at `queue_position` (0: not queued) waits,
  // on the newest ClusterView and without the mirror's lock: the queue's
  // simulation walks every node (about 1 ms at 10,000, placement_benchmark
  // BM_ExplainPendingGpu8), which every placement would otherwise wait for.
  // nullopt when the view's catalog has no such class.
  std::optional<placement::PendingReason> ExplainPending(const std::string& class_id,
                                                         int queue_position, ScalingViews scaling,
                                                         const PendingLimits& limits) const;
  // `limits_memo`, when given, keeps the settings read for each
  // (project, org, class) across the rows of one listing: one read each.
  using LimitsMemo = std::map<std::string, PendingLimits>;
  absl::StatusOr<WorkspaceView> ViewOfStored(const store::WorkspaceRow& row,
                                             LimitsMemo* limits_memo = nullptr);
  // `expected_version` 0: whatever the record's version (a stop always
  // wins); otherwise only that version, once (ABORTED when it moved on).
  absl::StatusOr<store::WorkspaceRow> StopAndMirror(const std::string& id,
                                                    core::EndReason reason = core::EndReason::kStopped,
                                                    int64_t expected_version = 0);

  // idle.cc
  class IdleActions;  // idle_actions.h
  void WireIdleMonitor();  // From the constructor.

  std::unique_ptr<OwnedStores> owned_;
  const SchedulerStores stores_;
  metrics::Metrics* const metrics_;
  const SchedulerOptions options_;
  const Clock clock_;
  // Each part below has its own lock; the order they nest in is declared
  // on ReplicaMirror's (replica_mirror.h).
  DrainRequests drains_;
  WatchHub watches_;
  SettingsCache settings_;
  std::unique_ptr<NodeInventory::Mirror> inventory_window_;
  std::unique_ptr<NodeInventory> inventory_;
  std::unique_ptr<ReplicaMirror> mirror_;
  std::unique_ptr<FeedSink> feed_sink_;
  std::unique_ptr<FeedFollower> follower_;
  // After the inventory: its heartbeats feed the monitor, which goes first.
  std::unique_ptr<IdleActions> idle_actions_;
  std::unique_ptr<IdleMonitor> idle_;
  std::unique_ptr<store::ChangeListener> listener_;
  std::thread loop_;
  std::function<ScalingViews()> scaling_views_;
  absl::Mutex drain_mu_ ABSL_ACQUIRED_BEFORE(mirror_->mutex());  // One drain at a time.
  std::atomic<int64_t> queue_decisions_{0};
};

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_SCHEDULER_H_
