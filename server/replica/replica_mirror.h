// The replica's copy of what the database holds, and the state a placement
// decision reads: the snapshot (nodes, their capacity and holds), the
// catalog, the pending queue, the version of every live workspace and the
// stored nodes. The change feed's sink (mirror_feed_sink.h) and this
// replica's own commits bring it up to date; every row is applied only
// when newer than what is known (versions never repeat), so both may
// arrive in any order.
//
// One lock, because one decision needs it all at one moment: deciding for
// a workspace reads the snapshot, the catalog and the queue, and takes its
// tentative hold, before any other decision may see the snapshot; applying
// a row changes the snapshot, the queue and the versions together. Nothing
// else is under it: readers (metrics, scaling, listings, heartbeats) walk
// the immutable ClusterView it publishes; the drain's requests, the
// watchers, the settings cache and the usage accounting have locks of
// their own, taken under this one, never the reverse.
#ifndef WSCHED_SERVER_REPLICA_REPLICA_MIRROR_H_
#define WSCHED_SERVER_REPLICA_REPLICA_MIRROR_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "server/core/catalog.h"
#include "server/core/clock.h"
#include "server/placement/decide.h"
#include "server/placement/pending_queue.h"
#include "server/placement/pending_reason.h"
#include "server/placement/snapshot.h"
#include "server/replica/cluster_view.h"
#include "server/replica/drain_requests.h"
#include "server/replica/live_workspace_facts.h"
#include "server/replica/race_avoidance.h"
#include "server/replica/recently_ended.h"
#include "server/replica/settings_cache.h"
#include "server/replica/stores.h"
#include "server/replica/watch_hub.h"
#include "server/store/types.h"
#include "server/usage/usage_accounting.h"

namespace wsched::replica {

class ReplicaMirror {
 public:
  // The parts the mirror tells of what it applies; each has its own lock,
  // taken under the mirror's.
  struct Listeners {
    WatchHub* watches;              // A workspace's new version.
    SettingsCache* settings;        // A settings entry, a reload.
    usage::UsageAccounting* usage;  // A placement that ended.
    DrainRequests* drains;          // Capacity that came back or changed.
  };
  ReplicaMirror(Listeners listeners, RecentlyEnded::Limits ended_window, core::Clock clock);
  ReplicaMirror(const ReplicaMirror&) = delete;
  ReplicaMirror& operator=(const ReplicaMirror&) = delete;

  // ---- applying the database's state (mirror_feed_sink.h) ----
  // What a batch of feed entries asks to read: only what this replica does
  // not know yet (its own entries and repeats cost nothing).
  struct ReadPlan {
    bool catalog = false;
    absl::flat_hash_map<std::string, int64_t> nodes;  // Name -> newest version named.
    std::vector<std::string> workspaces;
    std::vector<std::string> credential_nodes;  // Read again, own entries too (rare).
  };
  ReadPlan Plan(const std::vector<store::ChangeRecord>& records) ABSL_LOCKS_EXCLUDED(mu_);
  // Applies what `plan` read; returns the nodes that left (their usage is
  // forgotten by the caller, after this lock).
  std::vector<std::string> ApplyRows(StateStore::Rows& rows, ReadPlan& plan) ABSL_LOCKS_EXCLUDED(mu_);
  // Replaces everything with a full load; returns the nodes that left.
  std::vector<std::string> Replace(StateStore::Everything& all) ABSL_LOCKS_EXCLUDED(mu_);
  // A row this replica just wrote; true when it was newer than known.
  bool Apply(const store::WorkspaceRow& row) ABSL_LOCKS_EXCLUDED(mu_);
  // Drops recently ended versions past their window.
  void ExpireEnded() ABSL_LOCKS_EXCLUDED(mu_);

  // ---- deciding (pipeline/decision_commit.h) ----
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
  // The same with `decide` in place of the replica's decision (a quoted
  // request: placement/quote.h's DecideAsQuoted), run on the live snapshot
  // under the lock.
  using Decider = std::function<placement::Decision(const placement::Snapshot&)>;
  HeldDecision DecideAndHold(const core::Catalog& catalog, const std::string& workspace,
                             const Decider& decide) ABSL_LOCKS_EXCLUDED(mu_);
  // Releases an uncommitted hold (its commit failed, or its answer could
  // not be built). `lost_race_on`: the node another replica's commit won,
  // which decisions keep off for a moment.
  void ReleaseTentative(const std::string& workspace, const std::string& lost_race_on = "")
      ABSL_LOCKS_EXCLUDED(mu_);
  // The catalog decisions use now, with its generation (one read of both).
  std::pair<std::shared_ptr<const core::Catalog>, int64_t> CatalogNow() const
      ABSL_LOCKS_EXCLUDED(mu_);
  // The newest version of the workspace this replica knows: live or
  // recently ended; 0 when it keeps none.
  int64_t KnownVersion(const std::string& id) const ABSL_LOCKS_EXCLUDED(mu_);

  // ---- the queue (pipeline/queue_drain.h) ----
  int QueuePosition(const std::string& id) const ABSL_LOCKS_EXCLUDED(mu_);
  // Queued workspaces, in order, that may use a pool in `scope`.
  std::vector<std::string> Queued(const DrainRequests::Scope& scope) const ABSL_LOCKS_EXCLUDED(mu_);
  // A queued workspace with what a decision for it rests on.
  struct QueuedWorkspace {
    placement::PendingEntry entry;
    int64_t version = 0;
    std::shared_ptr<const core::Catalog> catalog;
    int64_t catalog_generation = 0;
  };
  std::optional<QueuedWorkspace> FindQueued(const std::string& id) const ABSL_LOCKS_EXCLUDED(mu_);
  // The pools that would hold it, or why its commit was refused (nothing
  // when it left the queue meanwhile).
  void NoteQueuedPools(const std::string& id, std::vector<std::string> pools) ABSL_LOCKS_EXCLUDED(mu_);
  void NoteQueuedReason(const std::string& id, std::string reason) ABSL_LOCKS_EXCLUDED(mu_);
  // Tells every queued workspace why it waits, in queue order, in one pass
  // (placement/pending_reason.h).
  void ExplainQueue(placement::PendingContext ctx) ABSL_LOCKS_EXCLUDED(mu_);

  // ---- MIG re-layouts (placement/relayout_plan.h) ----
  // The orders under way as the scaling leader published them (a follower
  // reads them each second): their GPUs are marked in the snapshot, so
  // placement keeps off them, and the pending reasons count their slices as
  // coming. The pools of the orders that changed are drained again.
  // These are the published orders, as the database has them.
  void SetRelayouts(std::vector<placement::RelayoutOrder> orders) ABSL_LOCKS_EXCLUDED(mu_);
  // The leader's orders as its publish stored them: only these are handed to
  // agents (MigWorkFor), so an order the publish dropped for a hold this
  // mirror has not seen yet never reaches a node.
  void MarkPublished(const std::vector<placement::RelayoutOrder>& orders)
      ABSL_LOCKS_EXCLUDED(relayout_mu_);
  std::vector<placement::RelayoutOrder> Relayouts() const ABSL_LOCKS_EXCLUDED(mu_);
  // The scaling leader's step, on this mirror: the orders under way that
  // are done or must be dropped end (`ended`, each with "done" or why), then
  // new ones are planned for the queue as it is now; the result is this
  // mirror's orders (SetRelayouts) and what the leader publishes.
  struct RelayoutStep {
    std::vector<placement::RelayoutOrder> orders;  // Under way now, the new ones last.
    std::vector<std::pair<placement::RelayoutOrder, std::string>> ended;
    size_t planned = 0;  // New orders, at the end of `orders`.
  };
  RelayoutStep StepRelayouts(absl::Time now, absl::Duration give_up_after,
                             const placement::RelayoutLimits& limits) ABSL_LOCKS_EXCLUDED(mu_);
  // The order for `node`'s agent (wsched.v1.MigWork) with the GPU's UUID;
  // nullopt when there is none published, or this replica sees something
  // held on the GPU (it never hands out the cutting of a GPU that holds
  // work). Cheap for a node without an order: heartbeats ask.
  struct MigWork {
    placement::RelayoutOrder order;
    std::string gpu_uuid;
  };
  std::optional<MigWork> MigWorkFor(const std::string& node) const
      ABSL_LOCKS_EXCLUDED(mu_, relayout_mu_);

  // ---- for readers and the parts beside the pipeline ----
  // The newest immutable view (cluster_view.h): walk it as long as needed.
  std::shared_ptr<const ClusterView> View() const ABSL_LOCKS_EXCLUDED(mu_);
  // A copy of the live snapshot to decide on off the lock (a view's has no
  // pools' indexes): a pointer per node and per pool, no hold records
  // (Snapshot::ForDeciding). For a dry run's quotes and a quote's check
  // (placement/quote.h).
  placement::Snapshot DecidingCopy() const ABSL_LOCKS_EXCLUDED(mu_);
  struct Node {
    std::shared_ptr<const store::StoredNode> stored;  // Null when not mirrored.
    usage::GpuHolders holders;  // By GPU UUID: workspace, class and version.
    std::optional<absl::Time> state_since;
    bool holds_work = false;  // Some workspace holds CPU, memory or GPUs here.
  };
  Node MirroredNode(const std::string& name) const ABSL_LOCKS_EXCLUDED(mu_);
  // Of these workspaces, those placed and holding here: version and idle mark.
  struct Placed {
    int64_t version = 0;
    std::optional<core::IdleMark> idle;
  };
  absl::flat_hash_map<std::string, Placed> PlacedOf(const std::vector<std::string>& ids) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // The snapshot's rules (placement::Snapshot::CheckInvariants), and every
  // hold belongs to a live workspace or a decision in flight. Walks
  // everything: tests call it after each scenario.
  absl::Status CheckInvariants() const ABSL_LOCKS_EXCLUDED(mu_);

  const absl::Mutex& mutex() const ABSL_LOCK_RETURNED(mu_) { return mu_; }

 private:
  bool ApplyWorkspaceLocked(const store::WorkspaceRow& row) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int64_t KnownVersionLocked(const std::string& id) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ApplyNodeLocked(const store::StoredNode& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ForgetNodeLocked(const std::string& name, int64_t version) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyCatalogLocked(core::Catalog catalog, int64_t generation) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Releases uncommitted holds in the way of `stored` (a hold the database
  // has); true when there were any.
  bool EvictTentativeHoldersLocked(const placement::HoldRecord& stored)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DrainPoolOfNodeLocked(const std::string& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  placement::PendingEntry PendingEntryFor(const core::Workspace& w) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Every change of what a ClusterView copies calls this, so the next
  // View() copies again.
  void StateChangedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { state_generation_++; }
  // DecideAndHold's hold of what `decision` chose.
  HeldDecision HoldLocked(placement::Decision decision, const core::Catalog& catalog,
                          const std::string& workspace) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::shared_ptr<const ClusterView> CopyViewLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes `orders` this mirror's: marks, drains.
  void SetRelayoutsLocked(std::vector<placement::RelayoutOrder> orders)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) ABSL_LOCKS_EXCLUDED(relayout_mu_);

  const Listeners listeners_;
  const core::Clock clock_;
  // Taken inside the lock of a view's one copy (views_) and of a catch-up
  // (the feed follower's); the listeners' locks nest inside it. Clang checks
  // the order wherever one function takes two of these locks.
  mutable absl::Mutex mu_ ABSL_ACQUIRED_AFTER(views_.mutex())
      ABSL_ACQUIRED_BEFORE(listeners_.watches->mutex(), listeners_.settings->mutex(),
                           listeners_.usage->mutex(), listeners_.drains->mutex());
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
  RaceAvoidance races_ ABSL_GUARDED_BY(mu_);
  // The inventory as stored (heartbeats compare against it), each entry
  // replaced, never changed in place, so a heartbeat reads it unlocked; and
  // the version of every node seen, removed ones included.
  absl::flat_hash_map<std::string, std::shared_ptr<const store::StoredNode>> nodes_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, int64_t> node_versions_ ABSL_GUARDED_BY(mu_);
  LiveWorkspaceFacts facts_ ABSL_GUARDED_BY(mu_);
  std::vector<placement::RelayoutOrder> relayouts_ ABSL_GUARDED_BY(mu_);
  // The published orders by node, apart so that a heartbeat of a node
  // without one never takes mu_ (the placement lock).
  mutable absl::Mutex relayout_mu_ ABSL_ACQUIRED_AFTER(mu_);
  absl::flat_hash_map<std::string, placement::RelayoutOrder> published_
      ABSL_GUARDED_BY(relayout_mu_);
  // Bumped under mu_ by StateChangedLocked; read without it by View().
  std::atomic<uint64_t> state_generation_{1};
  mutable ClusterViewCache views_;
};

}  // namespace wsched::replica

#endif  // WSCHED_SERVER_REPLICA_REPLICA_MIRROR_H_
