// The replica's state as the database describes it: deltas from the change
// log, the full reload (at start, or after a gap), and the version rule that
// lets local mirrors and feed deltas arrive in any order.
#include "server/scheduler/replica_state.h"

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "server/log/log.h"
#include "server/placement/filters.h"
#include "server/placement/resources.h"

namespace wsched::scheduler {
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

int64_t KnownVersion(const absl::flat_hash_map<std::string, int64_t>& versions,
                     const std::string& id) {
  auto it = versions.find(id);
  return it == versions.end() ? 0 : it->second;
}

// What a replica mirrors: everything else has ended and holds nothing.
bool IsLive(const store::WorkspaceRow& row) {
  return row.workspace.state == core::WorkspaceState::kPending || HoldsCapacity(row);
}

}  // namespace

absl::Status Scheduler::ApplyRecords(const std::vector<store::ChangeRecord>& records) {
  // Only what this replica does not know yet is read back: its own entries
  // (mirrored already at commit) and repeats cost nothing.
  bool catalog_changed = false;
  absl::flat_hash_map<std::string, int64_t> nodes;  // name -> newest version in the entries
  std::vector<std::string> workspace_ids;
  std::vector<std::string> credential_nodes;  // Read again, own entries too (they are rare).
  {
    absl::MutexLock lock(&mu_);
    absl::flat_hash_set<std::string> seen;
    const absl::Time now = clock_();
    for (const auto& record : records) {
      if (record.replica != store::ReplicaId() &&
          absl::c_any_of(record.changes, [](const store::Change& change) {
            return change.entity == store::Entity::kWorkspace;
          })) {
        peers_[record.replica] = now;
      }
      for (const auto& change : record.changes) {
        switch (change.entity) {
          case store::Entity::kCatalog:
            catalog_changed |= change.version > catalog_generation_;
            break;
          case store::Entity::kNode:
            if (change.version > KnownVersion(node_versions_, change.id)) {
              nodes[change.id] = std::max(nodes[change.id], change.version);
            }
            break;
          case store::Entity::kWorkspace:
            if (change.version > KnownVersionLocked(change.id) && seen.insert(change.id).second) {
              workspace_ids.push_back(change.id);
            }
            break;
          case store::Entity::kSettings:
            settings_.Invalidate(change.id);  // Read again on next use; commits confirm versions.
            DrainEverythingLocked();  // A policy or quota may let queued work through.
            break;
          case store::Entity::kNodeCredential:
            credential_nodes.push_back(change.id);
            break;
        }
      }
    }
  }
  // Its own lock, never taken under ours; on error the entries come again.
  if (absl::Status refreshed = inventory_->credentials().Refresh(credential_nodes);
      !refreshed.ok()) {
    return refreshed;
  }
  if (!catalog_changed && nodes.empty() && workspace_ids.empty()) return absl::OkStatus();

  std::vector<std::string> node_names;
  for (const auto& [name, version] : nodes) node_names.push_back(name);
  absl::StatusOr<StateStore::Rows> rows = state_->Load(catalog_changed, node_names, workspace_ids);
  if (!rows.ok()) return rows.status();

  std::vector<std::string> removed;
  {
    absl::MutexLock lock(&mu_);
    removed = ApplyRowsLocked(*rows, nodes);
  }
  // After mu_, only to keep the placement lock short: the accounting's lock
  // may be taken under mu_ (NotePlacementLocked), never the reverse.
  for (const auto& name : removed) inventory_->usage().ForgetNode(name);
  return absl::OkStatus();
}

std::vector<std::string> Scheduler::ApplyRowsLocked(
    StateStore::Rows& rows, absl::flat_hash_map<std::string, int64_t>& named_nodes) {
  // Catalog first: holds take their resources from classes, pending work
  // its pools.
  if (rows.catalog) ApplyCatalogLocked(std::move(*rows.catalog), rows.catalog_generation);
  for (const auto& node : rows.nodes) {
    ApplyNodeLocked(node);
    named_nodes.erase(node.info.name);
  }
  std::vector<std::string> removed;  // Named by the feed, gone from the table.
  for (const auto& [name, version] : named_nodes) {
    if (ForgetNodeLocked(name, version)) removed.push_back(name);
  }
  for (const auto& row : rows.workspaces) {
    // Another replica is packing this node: place elsewhere for a moment
    // rather than race it for the same room (its next commit would win).
    if (ApplyWorkspaceLocked(row) && HoldsCapacity(row)) MarkContendedLocked(row.workspace.node_name);
  }
  // What freed or changed capacity asked each pool's pending work to try
  // (ApplyWorkspaceLocked, ApplyNodeLocked) is already noted.
  return removed;
}

absl::StatusOr<int64_t> Scheduler::ReloadState() {
  absl::StatusOr<StateStore::Everything> all = state_->LoadAll();
  if (!all.ok()) return all.status();
  // Read after the snapshot: a change between the two is in the feed
  // after the snapshot's position, and refreshing it again is harmless.
  if (absl::Status reloaded = inventory_->credentials().ReloadAll(); !reloaded.ok()) {
    return reloaded;
  }
  std::vector<std::string> gone;
  {
    absl::MutexLock lock(&mu_);
    gone = ReplaceStateLocked(*all);
  }
  // After mu_, as in ApplyRecords: the placement lock is held for the swap only.
  for (const auto& name : gone) inventory_->usage().ForgetNode(name);
  return all->position;
}

std::vector<std::string> Scheduler::ReplaceStateLocked(StateStore::Everything& all) {
  std::vector<std::string> gone;  // Nodes removed while this replica was behind.
  {
    absl::flat_hash_set<std::string> stored;
    for (const auto& node : all.nodes) stored.insert(node.info.name);
    for (const auto& [name, node] : nodes_) {
      if (!stored.contains(name)) gone.push_back(name);
    }
  }
  StateChangedLocked();
  DrainEverythingLocked();
  snapshot_ = placement::Snapshot();
  pending_ = placement::PendingQueue();
  nodes_.clear();
  // Only what is live now is mirrored again. The window of ended versions
  // stays: versions never repeat, so what it says is still true.
  versions_.clear();
  class_of_workspace_.clear();
  idle_marks_.clear();
  // Placements that ended while this replica fell behind are dropped
  // uncharged for their last stretch (the accounting forgets them within
  // the hour); those still placed come back below.
  placed_at_.clear();
  tentative_.clear();  // Decisions in flight re-check at commit, as always.
  settings_.Clear();
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

int64_t Scheduler::KnownVersionLocked(const std::string& id) const {
  if (int64_t live = KnownVersion(versions_, id); live > 0) return live;
  return ended_.VersionOf(id);
}

void Scheduler::NotePlacementLocked(const store::WorkspaceRow& row) {
  const core::Workspace& w = row.workspace;
  const bool placed = w.state == core::WorkspaceState::kPlaced && !row.released;
  auto open = placed_at_.find(w.id);
  if (open != placed_at_.end() && (!placed || open->second != w.placed_at)) {
    // This replica's clock when it learns of the end: its own stop at once,
    // another's within the feed's lag. The accounting's lock nests under
    // mu_ (the order is declared on mu_, scheduler.h).
    inventory_->usage().EndPlacement(w.id, open->second, clock_());
    placed_at_.erase(open);
  }
  if (placed) placed_at_[w.id] = w.placed_at;
}

bool Scheduler::ApplyWorkspaceLocked(const store::WorkspaceRow& row) {
  const core::Workspace& w = row.workspace;
  if (row.version <= KnownVersionLocked(w.id)) return false;
  StateChangedLocked();
  NotePlacementLocked(row);
  if (const placement::HoldRecord* hold = snapshot_.FindHold(w.id);
      hold != nullptr && !(HoldsCapacity(row) && hold->node == w.node_name)) {
    DrainPoolOfNodeLocked(hold->node);  // What it held is free again.
  }
  tentative_.erase(w.id);
  snapshot_.Release(w.id);
  pending_.Remove(w.id);
  if (!IsLive(row)) {
    // Ended: nothing of it stays but its version, for a while.
    versions_.erase(w.id);
    class_of_workspace_.erase(w.id);
    idle_marks_.erase(w.id);
    ended_.Add(w.id, row.version, clock_());
    watches_.Publish(w.id, row.version);
    return true;
  }
  versions_[w.id] = row.version;
  watches_.Publish(w.id, row.version);
  ended_.Forget(w.id);
  class_of_workspace_[w.id] = w.class_id;
  if (w.idle) {
    idle_marks_[w.id] = *w.idle;
  } else {
    idle_marks_.erase(w.id);
  }
  if (w.state == core::WorkspaceState::kPending) {
    pending_.Upsert(PendingEntryFor(w));
  } else if (HoldsCapacity(row)) {
    absl::Status held = snapshot_.Hold(w.id, w.node_name, w.gpu_indices, HeldResources(w, *catalog_));
    if (!held.ok() && EvictTentativeHoldersLocked(w.node_name, w.gpu_indices)) {
      held = snapshot_.Hold(w.id, w.node_name, w.gpu_indices, HeldResources(w, *catalog_));
    }
    if (!held.ok()) {
      log::Warning("stored hold does not fit the snapshot",
                   {{"workspace", w.id}, {"error", std::string(held.message())}});
    }
  }
  return true;
}

bool Scheduler::EvictTentativeHoldersLocked(const std::string& node,
                                            const std::vector<int>& gpu_indices) {
  const placement::SnapshotNode* mirrored = snapshot_.FindNode(node);
  if (mirrored == nullptr) return false;
  std::vector<std::string> evict;
  for (int index : gpu_indices) {
    int pos = mirrored->PositionOf(index);
    if (pos < 0) continue;
    const std::string& holder = mirrored->gpus[pos].holder;
    if (!holder.empty() && tentative_.contains(holder)) evict.push_back(holder);
  }
  // The database's word beats an uncommitted decision, which its commit
  // will refuse anyway (the GPU's primary key).
  if (!evict.empty()) StateChangedLocked();
  for (const auto& holder : evict) {
    tentative_.erase(holder);
    snapshot_.Release(holder);
  }
  return !evict.empty();
}

bool Scheduler::ApplyNodeLocked(const store::StoredNode& node) {
  int64_t& known = node_versions_[node.info.name];
  if (node.version <= known) return false;
  known = node.version;
  StateChangedLocked();
  DrainPoolLocked(node.info.pool);  // A new, returning or changed node.
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

bool Scheduler::ForgetNodeLocked(const std::string& name, int64_t version) {
  int64_t& known = node_versions_[name];
  if (version <= known) return false;
  known = version;
  StateChangedLocked();
  nodes_.erase(name);
  snapshot_.RemoveNode(name);
  return true;
}

void Scheduler::ApplyCatalogLocked(core::Catalog catalog, int64_t generation) {
  if (generation <= catalog_generation_) return;
  StateChangedLocked();
  DrainEverythingLocked();  // New pools or classes may let pending work fit.
  catalog_ = std::make_shared<const core::Catalog>(std::move(catalog));
  catalog_generation_ = generation;
  // Pools that would hold pending work may have changed with the catalog.
  std::vector<placement::PendingEntry> entries;
  for (const auto* entry : pending_.Ordered()) entries.push_back(*entry);
  for (auto& entry : entries) {
    entry.pools = PoolsFor(entry.class_id);
    pending_.Upsert(std::move(entry));
  }
}

std::vector<std::string> Scheduler::PoolsFor(const std::string& class_id) const {
  // The one feasibility rule (core::CanEverHold through placement's pool
  // plan), preferred first: a selector match alone would send demand to a
  // pool that can never hold the class (wrong model, too few GPUs, max_size
  // 0) after a restart or a catalog change.
  const core::WorkspaceClass* cls = catalog_->FindClass(class_id);
  if (cls == nullptr) return {};
  return placement::CanEverFit(*cls, catalog_->pools).pools;
}

placement::PendingEntry Scheduler::PendingEntryFor(const core::Workspace& w) const {
  placement::PendingEntry entry{w.id, w.org_id, w.class_id, w.priority, w.created_at,
                                w.pending_reason, PoolsFor(w.class_id)};
  entry.project = w.project_id;
  return entry;
}

absl::Status Scheduler::HoldTentatively(absl::string_view workspace, absl::string_view node,
                                        std::vector<int> gpu_indices,
                                        const placement::Resources& resources) {
  absl::Status held = snapshot_.Hold(workspace, node, std::move(gpu_indices), resources);
  if (held.ok()) {
    tentative_.insert(std::string(workspace));
    StateChangedLocked();
  }
  return held;
}

void Scheduler::ReleaseTentative(const std::string& workspace) {
  if (tentative_.erase(workspace) > 0) {
    if (const placement::HoldRecord* hold = snapshot_.FindHold(workspace)) {
      DrainPoolOfNodeLocked(hold->node);  // The commit failed: its room is free again.
    }
    snapshot_.Release(workspace);
    StateChangedLocked();
  }
}

void Scheduler::MirrorCommitted(const core::Workspace& workspace, int64_t version, bool released) {
  absl::MutexLock lock(&mu_);
  ApplyWorkspaceLocked({workspace, version, released});
}

NodeInventory::Mirror::Node Scheduler::MirroredNode(const std::string& name) const {
  NodeInventory::Mirror::Node out;
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return out;
  out.stored = it->second;  // Replaced, never changed in place: safe to read unlocked.
  out.holders = HoldersLocked(name);
  if (const placement::SnapshotNode* mirrored = snapshot_.FindNode(name); mirrored != nullptr) {
    out.state_since = mirrored->state_since;
  }
  return out;
}

void Scheduler::DrainPool(const std::string& pool) {
  absl::MutexLock lock(&mu_);
  DrainPoolLocked(pool);
}

GpuHolders Scheduler::HoldersLocked(const std::string& node) const {
  GpuHolders holders;
  const placement::SnapshotNode* mirrored = snapshot_.FindNode(node);
  if (mirrored == nullptr) return holders;
  for (size_t i = 0; i < mirrored->gpus.size() && i < mirrored->info.gpus.size(); ++i) {
    const std::string& holder = mirrored->gpus[i].holder;
    if (holder.empty()) continue;
    auto cls = class_of_workspace_.find(holder);
    auto version = versions_.find(holder);
    auto placed = placed_at_.find(holder);
    holders[mirrored->info.gpus[i].uuid] = {
        holder, cls == class_of_workspace_.end() ? "unknown" : cls->second,
        version == versions_.end() ? 0 : version->second,
        placed == placed_at_.end() ? absl::InfinitePast() : placed->second};
  }
  return holders;
}


}  // namespace wsched::scheduler
