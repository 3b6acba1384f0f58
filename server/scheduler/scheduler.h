// The stateful heart of one replica: the in-memory snapshot the placement
// engine decides on, the catalog it decides with, the pending queue, and the
// watchers of workspace changes. PostgreSQL stays the arbiter: every change
// is committed first (or raced for, and retried) and mirrored here after,
// guarded by the version it was decided from.
//
// The parts around it own their state (docs/architecture.md, "Who owns
// what"): FeedFollower reads the change log and hands deltas to this class;
// NodeInventory registers nodes, takes heartbeats and admin states against
// this class's mirror; ClusterView is the immutable copy readers walk;
// WatchHub wakes watchers. This class's methods are grouped by concern:
// place_attempt.cc (PlaceWorkspace: one attempt and its retry driver),
// decision_commit.cc (decide -> hold -> build -> commit -> mirror, shared by
// Place and the drain), queue_drain.cc (the pending queue's drain),
// workspace_views.cc (stop, get, list, pending reasons), replica_state.cc
// (applying deltas and reloads, the mirror the inventory reads),
// scheduler.cc (start-up, background loop, watch, views).
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
#include "server/scheduler/recently_ended.h"
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

struct SchedulerOptions {
  absl::Duration heartbeat_interval = absl::Seconds(10);  // Told to agents.
  absl::Duration node_lost_after = absl::Seconds(60);     // Missed heartbeats.
  absl::Duration refresh_interval = absl::Seconds(2);     // Retry pending work this often.
  absl::Duration feed_poll_interval = absl::Seconds(1);   // Read the change log at least this often.
  absl::Duration feed_gap = absl::Milliseconds(10);  // Between background reads (FeedFollower::StartFollowing).
  absl::Duration feed_retention = absl::Minutes(15);      // Change-log entries kept for followers.
  // One writer: batches never hold node rows at the same time, so they
  // cannot deadlock or wait on each other's locks; requests that arrive
  // during a commit form the next batch (docs/performance.md).
  int max_commit_batch = 128;
  absl::Duration max_commit_wait = absl::ZeroDuration();  // See store::CommitBatcher::Options.
  int place_attempts = 10;  // Decide + commit rounds before giving up on races.
  // A GPU that went unhealthy returns to service once its agent has reported
  // it healthy for this long (scheduler/gpu_health.h).
  absl::Duration gpu_healthy_for = absl::Minutes(10);
  // Time to GPU while nothing is measured (placement/time_to_gpu.h).
  absl::Duration default_node_start = absl::Minutes(5);
  absl::Duration default_driver_install = absl::Minutes(10);
  // How long, and for how many workspaces at most, the version of a
  // workspace that ended is kept after it stops being mirrored: the change
  // feed's entries for it arrive a moment after this replica's own mirror
  // (scheduler/recently_ended.h).
  RecentlyEnded::Limits ended_window;
  // The idle-GPU policy (idle_monitor.h): a workspace whose samples stopped
  // for this long is not judged here any more; zero = 3 heartbeat intervals.
  absl::Duration idle_stale_after = absl::ZeroDuration();
  // Whether this replica drains the pending queue now: with one placer
  // (docs/architecture.md), only the placer does, so the front doors add
  // no writes of their own. Empty: always.
  std::function<bool()> drains_queue;
};

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
  std::shared_ptr<const ClusterView> View() const ABSL_LOCKS_EXCLUDED(mu_);
  // The catalog decisions use now (replaced whole, never changed in place).
  std::shared_ptr<const core::Catalog> CurrentCatalog() const ABSL_LOCKS_EXCLUDED(mu_);
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
  class StateSink;
  struct OwnedStores;  // The database stores of the first constructor.
  Scheduler(std::unique_ptr<OwnedStores> owned, store::Database* db, metrics::Metrics* metrics,
            SchedulerOptions options);

  // scheduler.cc
  void Loop();
  void KickDrain();  // Everything, soon.
  // The next drain tries the workspaces that may use `pool` (kWhatChanged).
  void DrainPoolLocked(const std::string& pool) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DrainPoolOfNodeLocked(const std::string& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DrainEverythingLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Every change of what a ClusterView copies calls this, so the next
  // View() copies again.
  void StateChangedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { state_generation_++; }
  std::shared_ptr<const ClusterView> CopyViewLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // replica_state.cc: the replica's state as the feed describes it.
  absl::Status ApplyRecords(const std::vector<store::ChangeRecord>& records);
  absl::StatusOr<int64_t> ReloadState();
  // The locked halves of the two: they return the nodes that left, whose
  // usage is forgotten after the lock (UsageAccounting's own lock).
  std::vector<std::string> ApplyRowsLocked(StateStore::Rows& rows,
                                           absl::flat_hash_map<std::string, int64_t>& named_nodes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<std::string> ReplaceStateLocked(StateStore::Everything& all)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Each mirrors a stored row when it is newer than what this replica knows
  // (versions never repeat), so local mirrors and feed deltas may arrive in
  // any order. True when applied.
  bool ApplyWorkspaceLocked(const store::WorkspaceRow& row) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The newest version of the workspace this replica knows: live or
  // recently ended; 0 when it keeps none.
  int64_t KnownVersionLocked(const std::string& id) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ApplyNodeLocked(const store::StoredNode& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Releases uncommitted holds on these GPUs; true when there were any.
  bool EvictTentativeHoldersLocked(const std::string& node, const std::vector<int>& gpu_indices)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ForgetNodeLocked(const std::string& name, int64_t version) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyCatalogLocked(core::Catalog catalog, int64_t generation) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  placement::PendingEntry PendingEntryFor(const core::Workspace& w) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Pools that can ever hold the class (the one feasibility rule,
  // core/feasibility.h), in catalog order.
  std::vector<std::string> PoolsFor(const std::string& class_id) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A hold taken for a decision before its commit; released only if the
  // commit fails and no newer picture of the workspace replaced it.
  absl::Status HoldTentatively(absl::string_view workspace, absl::string_view node,
                               std::vector<int> gpu_indices, const placement::Resources& resources)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReleaseTentative(const std::string& workspace) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The catalog decisions use now, with its generation (one read of both).
  std::pair<std::shared_ptr<const core::Catalog>, int64_t> CatalogNow() const
      ABSL_LOCKS_EXCLUDED(mu_);
  // A decision and, when it places, the tentative hold on what it chose plus
  // the node and pool the answer is built from. `id_busy`: the id already
  // holds tentatively (a concurrent request for it): nothing was held.
  struct HeldDecision {
    placement::Decision decision;
    core::NodeInfo node;
    core::NodePool pool;
    bool id_busy = false;
  };
  HeldDecision DecideAndHold(const core::WorkspaceClass& cls, const core::Catalog& catalog,
                             const std::string& workspace) ABSL_LOCKS_EXCLUDED(mu_);
  // Decide, keeping off nodes recently lost to another replica.
  placement::Decision DecideLocked(const core::WorkspaceClass& cls, const core::Catalog& catalog)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MarkContended(const std::string& node);
  void MarkContendedLocked(const std::string& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Mirrors a row this replica just committed.
  void MirrorCommitted(const core::Workspace& workspace, int64_t version, bool released);

  // replica_state.cc: the mirror as the inventory reads it.
  class InventoryMirror;
  NodeInventory::Mirror::Node MirroredNode(const std::string& name) const ABSL_LOCKS_EXCLUDED(mu_);
  void DrainPool(const std::string& pool) ABSL_LOCKS_EXCLUDED(mu_);
  // workspace_views.cc: why a pending workspace of `cls` waits, on this replica's
  // snapshot and the scaler's view of each pool.
  struct PendingLimits {
    std::optional<placement::QuotaFigures> quota;
    std::optional<std::string> policy_denial;
  };
  // The org quota and class policy as they apply to a pending workspace now
  // (reads the org's GPU count when it has a quota).
  PendingLimits LimitsOf(const core::Workspace& w) ABSL_LOCKS_EXCLUDED(mu_);
  // Reads a project's and org's settings (and, with a quota and
  // `org_gpus_held`, the org's held GPUs) and caches the settings.
  absl::StatusOr<CachedSettings> ReadSettings(const std::string& project_id,
                                              const std::string& org_id, int64_t* org_gpus_held)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Cached settings, else read from the database and cached; nullopt when
  // unreadable.
  std::optional<CachedSettings> SettingsFor(const std::string& project_id,
                                            const std::string& org_id) ABSL_LOCKS_EXCLUDED(mu_);
  // Why a workspace of `class_id` at `queue_position` (0: not queued) waits,
  // on the newest ClusterView and without the placement lock: the queue's
  // simulation walks every node (about 1 ms at 10,000, placement_benchmark
  // BM_ExplainPendingGpu8), which every placement would otherwise wait for.
  // nullopt when the view's catalog has no such class.
  std::optional<placement::PendingReason> ExplainPending(const std::string& class_id,
                                                         int queue_position, ScalingViews scaling,
                                                         const PendingLimits& limits) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // The node's held GPUs, by UUID: workspace, class and version.
  GpuHolders HoldersLocked(const std::string& node) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

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
    bool read = false;      // The next attempt reads from the database.
    bool catch_up = false;  // Apply what other replicas committed first...
    bool confirms = false;  // ...which confirms this call's negative answers.
    bool spread_out = false;  // Pause a moment (a lost race).
    std::optional<int64_t> wait_past_version;  // Wait for another request for the id.
  };
  using PlaceNext = std::variant<PlaceAnswer, PlaceRetry>;
  PlaceNext AttemptPlace(const PlaceRequest& request, PlaceProgress& progress);
  // Saves a workspace nothing can hold now as pending (the queue's tail).
  PlaceNext SavePending(core::Workspace w, const core::WorkspaceClass& cls,
                        store::WorkspaceWrite write);
  // What a placement decides with: from memory on the hot path (a workspace
  // this replica never saw, cached settings), else (`read`) from the database.
  absl::StatusOr<PlacementInputs> InputsFor(const PlaceRequest& request, bool read);

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
  absl::StatusOr<HeldPlacement> BuildHeld(const core::WorkspaceClass& cls, const HeldDecision& held,
                                          core::Workspace workspace, store::WorkspaceWrite write)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Commits them together; mirrors each that landed, releases the hold of
  // each that did not (keeping off its node after a lost race). Outcomes in
  // the order given.
  std::vector<store::WriteOutcome> CommitHeld(std::vector<HeldPlacement>& held)
      ABSL_LOCKS_EXCLUDED(mu_);

  // workspace_views.cc
  // `limits_memo`, when given, keeps the settings read for each
  // (project, org, class) across the rows of one listing: one read each.
  using LimitsMemo = std::map<std::string, PendingLimits>;
  absl::StatusOr<WorkspaceView> ViewOfStored(const store::WorkspaceRow& row,
                                             LimitsMemo* limits_memo = nullptr);

  // queue_drain.cc
  // Decides for the queued workspace and holds what it chose; nullopt when
  // it stays pending (no room, policy, class gone, placed or stopped meanwhile).
  absl::StatusOr<std::optional<HeldPlacement>> PrepareQueuePlacement(const std::string& workspace_id);
  // Commits `batch` together (CommitHeld), then notes what each outcome
  // means for the queue.
  void CommitQueuePlacements(std::vector<HeldPlacement>& batch);
  // The queued workspace's pools that would hold it, or why its commit was
  // refused (unchanged when it left the queue).
  void NotePendingPools(const std::string& id, std::vector<std::string> pools) ABSL_LOCKS_EXCLUDED(mu_);
  void NotePendingReason(const std::string& id, std::string reason) ABSL_LOCKS_EXCLUDED(mu_);
  // `expected_version` 0: whatever the record's version (a stop always
  // wins); otherwise only that version, once (ABORTED when it moved on).
  absl::StatusOr<store::WorkspaceRow> StopAndMirror(const std::string& id,
                                                    core::EndReason reason = core::EndReason::kStopped,
                                                    int64_t expected_version = 0);

  std::unique_ptr<OwnedStores> owned_;
  store::Database* const db_;
  PlacementStore* const placement_;
  StateStore* const state_;
  FeedSource* const feed_source_;
  metrics::Metrics* const metrics_;
  const SchedulerOptions options_;
  const Clock clock_;

  // Lock order: mu_ is taken inside the lock of a view's one copy (views_,
  // View), of a drain (drain_mu_) and of a catch-up (follower_: the feed
  // sink applies under mu_). Under mu_ the mirror tells the watch hub (a
  // workspace's new version), the settings cache (a feed entry, a reload)
  // and the GPU usage accounting (a placement that ended); their locks take
  // no other. Clang checks the order wherever one function takes two of
  // these locks (tests/lint/thread_safety.py).
  mutable absl::Mutex mu_ ABSL_ACQUIRED_AFTER(views_.mutex(), drain_mu_, follower_->mutex())
      ABSL_ACQUIRED_BEFORE(watches_.mutex(), settings_.mutex(), inventory_->gpu_usage().mutex());
  // Bumped under mu_ by StateChangedLocked; read without it by View().
  std::atomic<uint64_t> state_generation_{1};
  mutable ClusterViewCache views_;
  placement::Snapshot snapshot_ ABSL_GUARDED_BY(mu_);
  // Replaced, never changed in place: a decision keeps the one it began with.
  std::shared_ptr<const core::Catalog> catalog_ ABSL_GUARDED_BY(mu_) =
      std::make_shared<const core::Catalog>();
  int64_t catalog_generation_ ABSL_GUARDED_BY(mu_) = -1;
  placement::PendingQueue pending_ ABSL_GUARDED_BY(mu_);
  // Stored version of every live workspace (pending, placed, lost and still
  // holding); also what watchers wait on. A workspace that ends leaves it
  // for ended_, so memory follows what is live, not what ever ran.
  absl::flat_hash_map<std::string, int64_t> versions_ ABSL_GUARDED_BY(mu_);
  RecentlyEnded ended_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> tentative_ ABSL_GUARDED_BY(mu_);
  // Nodes this replica just lost a commit race on, until when: decisions
  // keep off them while other nodes fit (placement::DecideAvoiding).
  absl::flat_hash_map<std::string, absl::Time> contended_ ABSL_GUARDED_BY(mu_);
  // Other replicas that wrote workspaces lately (seen in the feed), with
  // when: while they place, each packs its own share of the nodes
  // (placement/node_ownership.h).
  absl::flat_hash_map<std::string, absl::Time> peers_ ABSL_GUARDED_BY(mu_);
  // The inventory as stored (heartbeats compare against it), and the
  // version of every node seen, removed ones included.
  // Each entry is replaced, never changed in place, so a heartbeat compares
  // against its node without the lock.
  absl::flat_hash_map<std::string, std::shared_ptr<const store::StoredNode>> nodes_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, int64_t> node_versions_ ABSL_GUARDED_BY(mu_);
  // Class of every live workspace: what GPU usage is charged to.
  absl::flat_hash_map<std::string, std::string> class_of_workspace_ ABSL_GUARDED_BY(mu_);
  // The idle mark of every live workspace that has one (idle_monitor.h).
  absl::flat_hash_map<std::string, core::IdleMark> idle_marks_ ABSL_GUARDED_BY(mu_);
  // placed_at of every workspace placed now: held GPU time is charged from
  // it, and its end (stopped, lost, removed) is told to the GPU usage
  // accounting when the mirror sees it go.
  absl::flat_hash_map<std::string, absl::Time> placed_at_ ABSL_GUARDED_BY(mu_);
  // Tells the accounting that the placement of `row`'s workspace ended
  // when it is no longer the one placed now.
  void NotePlacementLocked(const store::WorkspaceRow& row) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool drain_requested_ ABSL_GUARDED_BY(mu_) = false;
  // What the next drain tries (DrainScope::kWhatChanged).
  bool drain_everything_ ABSL_GUARDED_BY(mu_) = true;
  absl::flat_hash_set<std::string> drain_pools_ ABSL_GUARDED_BY(mu_);
  std::atomic<int64_t> queue_decisions_{0};
  absl::Mutex drain_mu_;  // One drain at a time.

  // Watchers of workspaces, woken per id by ApplyWorkspaceLocked (its own
  // lock, taken under mu_, never the reverse).
  WatchHub watches_;
  std::unique_ptr<FeedSink> feed_sink_;
  std::unique_ptr<FeedFollower> follower_;
  SettingsCache settings_;
  std::unique_ptr<InventoryMirror> inventory_mirror_;
  std::unique_ptr<NodeInventory> inventory_;
  // After the inventory: its heartbeats feed the monitor, which goes first.
  class IdleActions;  // idle_actions.h
  void WireIdleMonitor();  // idle.cc; from the constructor.
  std::unique_ptr<IdleActions> idle_actions_;
  std::unique_ptr<IdleMonitor> idle_;
  std::unique_ptr<store::ChangeListener> listener_;
  std::thread loop_;
  std::function<ScalingViews()> scaling_views_;
};

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_SCHEDULER_H_
