#include "server/replica/replica_mirror.h"

#include <algorithm>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "server/log/log.h"
#include "server/placement/filters.h"
#include "server/placement/resources.h"
#include "server/store/change_feed.h"

namespace wsched::replica {
namespace {

// What a placed workspace holds besides GPUs: CPU and memory as stored, the
// rest from its class (the store keeps only what it guards).
placement::Resources HeldResources(const core::Workspace& w, const core::Catalog& catalog) {
  placement::Resources held;
  if (const core::WorkspaceClass* cls = catalog.FindClass(w.class_id)) held = placement::RequestOf(*cls);
  held.cpu_millis = w.cpu_millis;
  held.memory_bytes = w.memory_bytes;
  return held;
}

bool HoldsCapacity(const store::WorkspaceRow& row) {
  const core::Workspace& w = row.workspace;
  return !w.node_name.empty() && !row.released &&
         (w.state == core::WorkspaceState::kPlaced || w.state == core::WorkspaceState::kLost);
}

int64_t KnownIn(const absl::flat_hash_map<std::string, int64_t>& versions, const std::string& id) {
  auto it = versions.find(id);
  return it == versions.end() ? 0 : it->second;
}

// What a replica mirrors: everything else has ended and holds nothing.
bool IsLive(const store::WorkspaceRow& row) {
  return row.workspace.state == core::WorkspaceState::kPending || HoldsCapacity(row);
}

}  // namespace

ReplicaMirror::ReplicaMirror(Listeners listeners, RecentlyEnded::Limits ended_window,
                             core::Clock clock)
    : listeners_(listeners), clock_(std::move(clock)), ended_(ended_window) {}

// ---- applying the database's state ----

ReplicaMirror::ReadPlan ReplicaMirror::Plan(const std::vector<store::ChangeRecord>& records) {
  ReadPlan plan;
  absl::MutexLock lock(&mu_);
  absl::flat_hash_set<std::string> seen;
  const absl::Time now = clock_();
  for (const auto& record : records) {
    if (record.replica != store::ReplicaId() &&
        absl::c_any_of(record.changes, [](const store::Change& change) {
          return change.entity == store::Entity::kWorkspace;
        })) {
      races_.PeerWrote(record.replica, now);
    }
    for (const auto& change : record.changes) {
      switch (change.entity) {
        case store::Entity::kCatalog:
          plan.catalog |= change.version > catalog_generation_;
          break;
        case store::Entity::kNode:
          if (change.version > KnownIn(node_versions_, change.id)) {
            plan.nodes[change.id] = std::max(plan.nodes[change.id], change.version);
          }
          break;
        case store::Entity::kWorkspace:
          if (change.version > KnownVersionLocked(change.id) && seen.insert(change.id).second) {
            plan.workspaces.push_back(change.id);
          }
          break;
        case store::Entity::kSettings:
          listeners_.settings->Invalidate(change.id);  // Read again on next use; commits confirm versions.
          listeners_.drains->Everything();  // A policy or quota may let queued work through.
          break;
        case store::Entity::kNodeCredential:
          plan.credential_nodes.push_back(change.id);
          break;
      }
    }
  }
  return plan;
}

std::vector<std::string> ReplicaMirror::ApplyRows(StateStore::Rows& rows, ReadPlan& plan) {
  absl::MutexLock lock(&mu_);
  // Catalog first: holds take their resources from classes, pending work
  // its pools.
  if (rows.catalog) ApplyCatalogLocked(std::move(*rows.catalog), rows.catalog_generation);
  for (const auto& node : rows.nodes) {
    ApplyNodeLocked(node);
    plan.nodes.erase(node.info.name);
  }
  std::vector<std::string> removed;  // Named by the feed, gone from the table.
  for (const auto& [name, version] : plan.nodes) {
    if (ForgetNodeLocked(name, version)) removed.push_back(name);
  }
  for (const auto& row : rows.workspaces) {
    // Another replica is packing this node: place elsewhere for a moment
    // rather than race it for the same room (its next commit would win).
    if (ApplyWorkspaceLocked(row) && HoldsCapacity(row)) races_.Contended(row.workspace.node_name, clock_());
  }
  // What freed or changed capacity asked each pool's pending work to try
  // (ApplyWorkspaceLocked, ApplyNodeLocked) is already noted.
  return removed;
}

std::vector<std::string> ReplicaMirror::Replace(StateStore::Everything& all) {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> gone;  // Nodes removed while this replica was behind.
  {
    absl::flat_hash_set<std::string> stored;
    for (const auto& node : all.nodes) stored.insert(node.info.name);
    for (const auto& [name, node] : nodes_) {
      if (!stored.contains(name)) gone.push_back(name);
    }
  }
  StateChangedLocked();
  listeners_.drains->Everything();
  snapshot_ = placement::Snapshot();
  snapshot_.SetRelayouts(placement::RelayoutMarks(relayouts_));  // Laid on the nodes as they come.
  pending_ = placement::PendingQueue();
  nodes_.clear();
  // Only what is live now is mirrored again. The window of ended versions
  // stays: versions never repeat, so what it says is still true.
  versions_.clear();
  facts_.Clear();
  tentative_.clear();  // Decisions in flight re-check at commit, as always.
  listeners_.settings->Clear();
  catalog_ = std::make_shared<const core::Catalog>(std::move(all.catalog));
  catalog_generation_ = all.catalog_generation;
  for (const auto& node : all.nodes) {
    node_versions_[node.info.name] = node.version;
    nodes_[node.info.name] = std::make_shared<const store::StoredNode>(node);
    (void)snapshot_.UpsertNode(node.info, node.state, node.driver_state, node.registered_at,
                               node.driver_history.failure);
  }
  for (const auto& row : all.active) {
    // A reload may go back to an older picture than a local mirror: the
    // database's word is final here, and later entries bring it forward.
    ended_.Forget(row.workspace.id);
    ApplyWorkspaceLocked(row);
  }
  return gone;
}

bool ReplicaMirror::Apply(const store::WorkspaceRow& row) {
  absl::MutexLock lock(&mu_);
  return ApplyWorkspaceLocked(row);
}

void ReplicaMirror::ExpireEnded() {
  absl::MutexLock lock(&mu_);
  const size_t before = ended_.size();
  ended_.Expire(clock_());  // Also when nothing ends for a while.
  if (ended_.size() != before) StateChangedLocked();
}

bool ReplicaMirror::ApplyWorkspaceLocked(const store::WorkspaceRow& row) {
  const core::Workspace& w = row.workspace;
  if (row.version <= KnownVersionLocked(w.id)) return false;
  StateChangedLocked();
  const bool live = IsLive(row);
  if (std::optional<absl::Time> ended = facts_.Apply(row, live)) {
    // This replica's clock when it learns of the end: its own stop at once,
    // another's within the feed's lag.
    listeners_.usage->EndPlacement(w.id, *ended, clock_());
  }
  if (const placement::HoldRecord* hold = snapshot_.FindHold(w.id);
      hold != nullptr && !(HoldsCapacity(row) && hold->node == w.node_name)) {
    DrainPoolOfNodeLocked(hold->node);  // What it held is free again.
  }
  tentative_.erase(w.id);
  snapshot_.Release(w.id);
  pending_.Remove(w.id);
  if (!live) {
    // Ended: nothing of it stays but its version, for a while.
    versions_.erase(w.id);
    ended_.Add(w.id, row.version, clock_());
    listeners_.watches->Publish(w.id, row.version);
    return true;
  }
  versions_[w.id] = row.version;
  listeners_.watches->Publish(w.id, row.version);
  ended_.Forget(w.id);
  if (w.state == core::WorkspaceState::kPending) {
    pending_.Upsert(PendingEntryFor(w));
  } else if (HoldsCapacity(row)) {
    placement::HoldRecord record{w.id, w.node_name, w.gpu_indices, HeldResources(w, *catalog_),
                                 w.slice ? std::optional(w.slice->at) : std::nullopt};
    absl::Status held = snapshot_.HoldAsRecorded(record);
    if (!held.ok() && EvictTentativeHoldersLocked(record)) held = snapshot_.HoldAsRecorded(record);
    if (!held.ok()) {
      log::Warning("stored hold does not fit the snapshot",
                   {{"workspace", w.id}, {"error", std::string(held.message())}});
    }
  }
  return true;
}

int64_t ReplicaMirror::KnownVersionLocked(const std::string& id) const {
  if (int64_t live = KnownIn(versions_, id); live > 0) return live;
  return ended_.VersionOf(id);
}

bool ReplicaMirror::EvictTentativeHoldersLocked(const placement::HoldRecord& stored) {
  const placement::SnapshotNode* mirrored = snapshot_.FindNode(stored.node);
  if (mirrored == nullptr) return false;
  // A stored whole GPU conflicts with its holder and any slice's; a stored
  // slice with the GPU's whole holder and its own slice's.
  std::vector<std::string> in_the_way;
  std::vector<int> gpus = stored.gpu_indices;
  if (stored.slice) gpus.push_back(stored.slice->gpu_index);
  for (int index : gpus) {
    int pos = mirrored->PositionOf(index);
    if (pos < 0) continue;
    const placement::SnapshotGpu& gpu = mirrored->gpus[pos];
    in_the_way.push_back(gpu.holder);
    const auto& instances = mirrored->info.gpus[pos].mig;
    for (size_t k = 0; k < gpu.slice_holders.size() && instances; ++k) {
      if (!stored.slice || instances->instances[k].gpu_instance == stored.slice->gpu_instance) {
        in_the_way.push_back(gpu.slice_holders[k]);
      }
    }
  }
  std::vector<std::string> evict;
  for (const std::string& holder : in_the_way) {
    if (!holder.empty() && tentative_.contains(holder)) evict.push_back(holder);
  }
  std::sort(evict.begin(), evict.end());
  evict.erase(std::unique(evict.begin(), evict.end()), evict.end());
  // The database's word beats an uncommitted decision, which its commit
  // will refuse anyway (the GPU's primary key).
  if (!evict.empty()) StateChangedLocked();
  for (const auto& holder : evict) {
    tentative_.erase(holder);
    snapshot_.Release(holder);
  }
  return !evict.empty();
}

bool ReplicaMirror::ApplyNodeLocked(const store::StoredNode& node) {
  int64_t& known = node_versions_[node.info.name];
  if (node.version <= known) return false;
  known = node.version;
  StateChangedLocked();
  listeners_.drains->Pool(node.info.pool);  // A new, returning or changed node.
  auto before = nodes_.find(node.info.name);
  absl::Time since = node.registered_at;  // A new node.
  if (before != nodes_.end()) {
    const bool restated = before->second->state != node.state ||
                          before->second->driver_state != node.driver_state;
    const placement::SnapshotNode* mirrored = snapshot_.FindNode(node.info.name);
    if (restated) {
      since = clock_();
    } else {
      since = mirrored != nullptr ? mirrored->state_since : absl::InfinitePast();  // Unchanged.
    }
  }
  nodes_[node.info.name] = std::make_shared<const store::StoredNode>(node);
  (void)snapshot_.UpsertNode(node.info, node.state, node.driver_state, since,
                             node.driver_history.failure);
  return true;
}

bool ReplicaMirror::ForgetNodeLocked(const std::string& name, int64_t version) {
  int64_t& known = node_versions_[name];
  if (version <= known) return false;
  known = version;
  StateChangedLocked();
  nodes_.erase(name);
  snapshot_.RemoveNode(name);
  return true;
}

void ReplicaMirror::ApplyCatalogLocked(core::Catalog catalog, int64_t generation) {
  if (generation <= catalog_generation_) return;
  StateChangedLocked();
  listeners_.drains->Everything();  // New pools or classes may let pending work fit.
  catalog_ = std::make_shared<const core::Catalog>(std::move(catalog));
  catalog_generation_ = generation;
  // Pools that would hold pending work may have changed with the catalog.
  std::vector<placement::PendingEntry> entries;
  for (const auto* entry : pending_.Ordered()) entries.push_back(*entry);
  for (auto& entry : entries) {
    const core::WorkspaceClass* cls = catalog_->FindClass(entry.class_id);
    entry.pools = cls == nullptr ? std::vector<std::string>() : placement::CanEverFit(*cls, catalog_->pools).pools;
    pending_.Upsert(std::move(entry));
  }
}

void ReplicaMirror::DrainPoolOfNodeLocked(const std::string& node) {
  if (const placement::SnapshotNode* mirrored = snapshot_.FindNode(node)) {
    listeners_.drains->Pool(mirrored->info.pool);
  }
}

placement::PendingEntry ReplicaMirror::PendingEntryFor(const core::Workspace& w) const {
  // The one feasibility rule (core::CanEverHold through placement's pool
  // plan), preferred first: a selector match alone would send demand to a
  // pool that can never hold the class (wrong model, too few GPUs, max_size
  // 0) after a restart or a catalog change.
  const core::WorkspaceClass* cls = catalog_->FindClass(w.class_id);
  std::vector<std::string> pools;
  if (cls != nullptr) pools = placement::CanEverFit(*cls, catalog_->pools).pools;
  placement::PendingEntry entry{w.id, w.org_id, w.class_id, w.priority, w.created_at,
                                w.pending_reason, std::move(pools)};
  entry.project = w.project_id;
  return entry;
}

// ---- deciding ----

ReplicaMirror::HeldDecision ReplicaMirror::DecideAndHold(const core::WorkspaceClass& cls,
                                                         const core::Catalog& catalog,
                                                         const std::string& workspace) {
  absl::MutexLock lock(&mu_);
  return HoldLocked(races_.Decide(cls, catalog, snapshot_, clock_()), catalog, workspace);
}

ReplicaMirror::HeldDecision ReplicaMirror::DecideAndHold(const core::Catalog& catalog,
                                                         const std::string& workspace,
                                                         const Decider& decide) {
  absl::MutexLock lock(&mu_);
  return HoldLocked(decide(snapshot_), catalog, workspace);
}

ReplicaMirror::HeldDecision ReplicaMirror::HoldLocked(placement::Decision decision,
                                                      const core::Catalog& catalog,
                                                      const std::string& workspace) {
  HeldDecision held;
  held.decision = std::move(decision);
  auto* placed = std::get_if<placement::Placed>(&held.decision);
  if (placed == nullptr) return held;
  // Tentative hold: concurrent decisions on this replica see it.
  if (!snapshot_
           .HoldAsRecorded(
               {workspace, placed->node, placed->gpu_indices, placed->resources, placed->slice})
           .ok()) {
    held.id_busy = true;
    return held;
  }
  tentative_.insert(workspace);
  StateChangedLocked();
  held.node = snapshot_.FindNode(placed->node)->info;
  held.pool = *catalog.FindPool(placed->pool);
  return held;
}

placement::Snapshot ReplicaMirror::DecidingCopy() const {
  absl::MutexLock lock(&mu_);
  return snapshot_.ForDeciding();
}

void ReplicaMirror::ReleaseTentative(const std::string& workspace, const std::string& lost_race_on) {
  absl::MutexLock lock(&mu_);
  if (!lost_race_on.empty()) races_.Contended(lost_race_on, clock_());
  if (tentative_.erase(workspace) == 0) return;  // A newer picture replaced it.
  if (const placement::HoldRecord* hold = snapshot_.FindHold(workspace)) {
    DrainPoolOfNodeLocked(hold->node);  // The commit failed: its room is free again.
  }
  snapshot_.Release(workspace);
  StateChangedLocked();
}

std::pair<std::shared_ptr<const core::Catalog>, int64_t> ReplicaMirror::CatalogNow() const {
  absl::MutexLock lock(&mu_);
  return {catalog_, catalog_generation_};
}

int64_t ReplicaMirror::KnownVersion(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  return KnownVersionLocked(id);
}

// ---- the queue ----

int ReplicaMirror::QueuePosition(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  return pending_.Position(id);
}

std::vector<std::string> ReplicaMirror::Queued(const DrainRequests::Scope& scope) const {
  std::vector<std::string> ids;
  absl::MutexLock lock(&mu_);
  // Only work that may use a pool whose capacity came back: while half the
  // fleet is lost, the GPU queue is not re-decided at every CPU stop.
  for (const auto* entry : pending_.Ordered()) {
    if (scope.everything || absl::c_any_of(entry->pools, [&](const std::string& pool) {
          return scope.pools.contains(pool);
        })) {
      ids.push_back(entry->workspace);
    }
  }
  return ids;
}

std::optional<ReplicaMirror::QueuedWorkspace> ReplicaMirror::FindQueued(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  const placement::PendingEntry* entry = pending_.Find(id);
  if (entry == nullptr) return std::nullopt;
  return QueuedWorkspace{*entry, KnownVersionLocked(id), catalog_, catalog_generation_};
}

void ReplicaMirror::NoteQueuedPools(const std::string& id, std::vector<std::string> pools) {
  absl::MutexLock lock(&mu_);
  const placement::PendingEntry* entry = pending_.Find(id);
  if (entry == nullptr) return;
  placement::PendingEntry updated = *entry;
  updated.pools = std::move(pools);
  pending_.Upsert(std::move(updated));
  StateChangedLocked();
}

void ReplicaMirror::NoteQueuedReason(const std::string& id, std::string reason) {
  absl::MutexLock lock(&mu_);
  const placement::PendingEntry* entry = pending_.Find(id);
  if (entry == nullptr) return;
  placement::PendingEntry updated = *entry;
  updated.reason = std::move(reason);
  pending_.Upsert(std::move(updated));
}

void ReplicaMirror::ExplainQueue(placement::PendingContext ctx) {
  absl::MutexLock lock(&mu_);
  ctx.relayouts = relayouts_;
  ctx.pools = &catalog_->pools;
  ctx.snapshot = &snapshot_;
  ctx.driver_policy = &catalog_->driver_policy;
  std::vector<placement::PendingEntry> entries;
  std::vector<const core::WorkspaceClass*> classes;
  for (const placement::PendingEntry* entry : pending_.Ordered()) {
    entries.push_back(*entry);
    classes.push_back(catalog_->FindClass(entry->class_id));
  }
  std::vector<placement::PendingReason> reasons = placement::ExplainQueue(ctx, classes);
  for (size_t i = 0; i < entries.size(); ++i) {
    entries[i].reason = std::move(reasons[i].detail);
    pending_.Upsert(std::move(entries[i]));
  }
}

// ---- MIG re-layouts ----

void ReplicaMirror::SetRelayouts(std::vector<placement::RelayoutOrder> orders) {
  MarkPublished(orders);
  absl::MutexLock lock(&mu_);
  SetRelayoutsLocked(std::move(orders));
}

void ReplicaMirror::MarkPublished(const std::vector<placement::RelayoutOrder>& orders) {
  absl::MutexLock lock(&relayout_mu_);
  published_.clear();
  for (const placement::RelayoutOrder& order : orders) published_.emplace(order.node, order);
}

void ReplicaMirror::SetRelayoutsLocked(std::vector<placement::RelayoutOrder> orders) {
  if (orders == relayouts_) return;
  // Pending work of the pools whose orders came or went may fit now, or be
  // told otherwise why it waits.
  absl::flat_hash_set<std::string> pools;
  for (const auto* list : {&relayouts_, &orders}) {
    for (const placement::RelayoutOrder& order : *list) {
      const bool in_both =
          std::find(relayouts_.begin(), relayouts_.end(), order) != relayouts_.end() &&
          std::find(orders.begin(), orders.end(), order) != orders.end();
      if (!in_both) pools.insert(order.pool);
    }
  }
  relayouts_ = std::move(orders);
  snapshot_.SetRelayouts(placement::RelayoutMarks(relayouts_));
  StateChangedLocked();
  for (const std::string& pool : pools) listeners_.drains->Pool(pool);
}

std::vector<placement::RelayoutOrder> ReplicaMirror::Relayouts() const {
  absl::MutexLock lock(&mu_);
  return relayouts_;
}

ReplicaMirror::RelayoutStep ReplicaMirror::StepRelayouts(absl::Time now,
                                                         absl::Duration give_up_after,
                                                         const placement::RelayoutLimits& limits) {
  absl::MutexLock lock(&mu_);
  RelayoutStep step;
  for (const placement::RelayoutOrder& order : relayouts_) {
    placement::RelayoutStatus status =
        placement::ProgressOf(order, snapshot_, catalog_->pools, now, give_up_after);
    switch (status.progress) {
      case placement::RelayoutProgress::kUnderWay: step.orders.push_back(order); break;
      case placement::RelayoutProgress::kDone: step.ended.emplace_back(order, "done"); break;
      case placement::RelayoutProgress::kDropped:
        step.ended.emplace_back(order, std::move(status.why));
        break;
    }
  }
  // The ended orders' GPUs are unmarked first: a finished one's slices are
  // free for the plan, not a reason for another order.
  SetRelayoutsLocked(step.orders);
  placement::RelayoutInputs in;
  in.snapshot = &snapshot_;
  in.pools = &catalog_->pools;
  for (const placement::PendingEntry* entry : pending_.Ordered()) {
    in.pending.push_back(catalog_->FindClass(entry->class_id));
  }
  in.under_way = step.orders;
  in.now = now;
  in.limits = limits;
  std::vector<placement::RelayoutOrder> planned = placement::PlanRelayouts(in);
  step.planned = planned.size();
  for (placement::RelayoutOrder& order : planned) step.orders.push_back(std::move(order));
  SetRelayoutsLocked(step.orders);
  return step;
}

std::optional<ReplicaMirror::MigWork> ReplicaMirror::MigWorkFor(const std::string& node) const {
  placement::RelayoutOrder published;
  {
    absl::MutexLock nodes_lock(&relayout_mu_);
    auto found = published_.find(node);
    if (found == published_.end()) return std::nullopt;
    published = found->second;
  }
  absl::MutexLock lock(&mu_);
  // Still under way here: a step of this mirror may have ended it since.
  auto order = std::find(relayouts_.begin(), relayouts_.end(), published);
  const placement::SnapshotNode* mirrored = snapshot_.FindNode(node);
  if (order == relayouts_.end() || mirrored == nullptr) return std::nullopt;
  const int pos = mirrored->PositionOf(order->gpu_index);
  if (pos < 0 || !mirrored->gpus[pos].holder.empty()) return std::nullopt;
  for (const std::string& holder : mirrored->gpus[pos].slice_holders) {
    if (!holder.empty()) return std::nullopt;
  }
  return MigWork{*order, mirrored->info.gpus[pos].uuid};
}

// ---- for readers ----

std::shared_ptr<const ClusterView> ReplicaMirror::View() const {
  return views_.Get(state_generation_.load(), [this] {
    absl::MutexLock lock(&mu_);
    return CopyViewLocked();
  });
}

std::shared_ptr<const ClusterView> ReplicaMirror::CopyViewLocked() const {
  auto view = std::make_shared<ClusterView>();
  view->generation = state_generation_.load();
  view->snapshot = snapshot_.NodesOnly();
  view->catalog = catalog_;
  view->relayouts = relayouts_;
  for (const auto& [id, idle] : facts_.idle()) {
    const placement::HoldRecord* hold = snapshot_.FindHold(id);
    if (hold == nullptr) continue;
    view->idle.push_back(
        {id, idle.org_id, idle.project_id, idle.mark.since, *hold, idle.gpu_sevenths});
  }
  for (const auto* entry : pending_.Ordered()) {
    view->pending.push_back({entry->workspace, entry->class_id, entry->org, entry->pools, entry->since});
  }
  TrackedWorkspaces& tracked = view->tracked;
  tracked.live = versions_.size();
  tracked.recently_ended = ended_.size();
  tracked.classes = facts_.classes();
  tracked.pending = pending_.size();
  tracked.holds = snapshot_.hold_count();
  tracked.tentative = tentative_.size();
  return view;
}

ReplicaMirror::Node ReplicaMirror::MirroredNode(const std::string& name) const {
  Node out;
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return out;
  out.stored = it->second;  // Replaced, never changed in place: safe to read unlocked.
  const placement::SnapshotNode* mirrored = snapshot_.FindNode(name);
  if (mirrored == nullptr) return out;
  out.state_since = mirrored->state_since;
  out.holds_work = mirrored->held.cpu_millis > 0 || mirrored->held.memory_bytes > 0;
  for (size_t i = 0; i < mirrored->gpus.size() && i < mirrored->info.gpus.size(); ++i) {
    const std::string& holder = mirrored->gpus[i].holder;
    if (holder.empty()) continue;
    out.holders[mirrored->info.gpus[i].uuid] = {holder, facts_.ClassOf(holder),
                                                KnownIn(versions_, holder), facts_.PlacedAt(holder)};
  }
  out.holds_work = out.holds_work || !out.holders.empty();
  return out;
}

absl::flat_hash_map<std::string, ReplicaMirror::Placed> ReplicaMirror::PlacedOf(
    const std::vector<std::string>& ids) const {
  absl::flat_hash_map<std::string, Placed> placed;
  absl::MutexLock lock(&mu_);
  for (const std::string& id : ids) {
    auto version = versions_.find(id);
    // Placed and holding here: a pending workspace holds no GPU, a lost one
    // is not judged (its node is silent).
    if (version == versions_.end() || snapshot_.FindHold(id) == nullptr || tentative_.contains(id)) {
      continue;
    }
    placed[id] = {version->second, facts_.IdleMarkOf(id)};
  }
  return placed;
}

absl::Status ReplicaMirror::CheckInvariants() const {
  absl::MutexLock lock(&mu_);
  if (absl::Status snapshot = snapshot_.CheckInvariants(); !snapshot.ok()) return snapshot;
  for (const std::string& id : tentative_) {
    if (snapshot_.FindHold(id) == nullptr) {
      return absl::InternalError(absl::StrCat("decision in flight for ", id, " holds nothing"));
    }
  }
  if (snapshot_.hold_count() > versions_.size() + tentative_.size()) {
    return absl::InternalError(absl::StrCat(snapshot_.hold_count(), " holds for ", versions_.size(),
                                            " live workspaces and ", tentative_.size(),
                                            " decisions in flight"));
  }
  return absl::OkStatus();
}

}  // namespace wsched::replica
