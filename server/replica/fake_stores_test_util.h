// An in-memory database for the scheduler's unit tests: the same guards as
// PostgreSQL's (record versions, one holder per GPU, node readiness), and a
// change log that "other replicas" write to as well.
#ifndef WSCHED_SERVER_REPLICA_FAKE_STORES_TEST_UTIL_H_
#define WSCHED_SERVER_REPLICA_FAKE_STORES_TEST_UTIL_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "server/replica/feed_follower.h"
#include "server/replica/stores.h"

namespace wsched::replica::testing {

class FakeDatabase : public PlacementStore, public StateStore, public FeedSource {
 public:
  // Runs inside every placement's commit before its guards: where a test
  // lets "another replica" commit first.
  std::function<void(const core::Workspace&)> before_commit;
  int commits = 0;  // Placement commits, refused ones included.

  // ---- what other replicas (and the test) do ----
  void SetCatalog(core::Catalog catalog) {
    absl::MutexLock lock(&mu_);
    catalog_ = std::move(catalog);
    ++generation_;
    Publish("other", {{store::Entity::kCatalog, "", generation_}});
  }
  void AddNode(const core::NodeInfo& info) {
    absl::MutexLock lock(&mu_);
    store::StoredNode& node = nodes_[info.name];
    node.info = info;
    node.state = core::NodeState::kReady;
    node.driver_state = core::DriverState::kReady;
    node.version = ++versions_;
    Publish("other", {{store::Entity::kNode, info.name, node.version}});
  }
  // Another replica placed `id` on `node`'s GPUs `gpus`.
  void PlaceElsewhere(const std::string& id, const std::string& node, std::vector<int> gpus) {
    absl::MutexLock lock(&mu_);
    store::WorkspaceRow& row = rows_[id];
    row.workspace.id = id;
    row.workspace.org_id = "o";
    row.workspace.class_id = "gpu-1x";
    row.workspace.state = core::WorkspaceState::kPlaced;
    row.workspace.node_name = node;
    row.workspace.gpu_indices = gpus;
    for (int g : gpus) {
      row.workspace.gpu_uuids.push_back(absl::StrCat("GPU-", node, "-", g));
      holds_[row.workspace.gpu_uuids.back()] = id;
    }
    row.version = ++versions_;
    Publish("other", {{store::Entity::kWorkspace, id, row.version}});
  }
  // Another replica placed `w` as it is (a slice class's workspace too).
  void PlaceElsewhere(const core::Workspace& w) {
    absl::MutexLock lock(&mu_);
    store::WorkspaceRow& row = rows_[w.id];
    row.workspace = w;
    for (const auto& key : HeldKeys(w)) holds_[key] = w.id;
    row.version = ++versions_;
    Publish("other", {{store::Entity::kWorkspace, w.id, row.version}});
  }
  // Another replica stopped `id` (as StopWorkspace: whatever its version).
  void StopElsewhere(const std::string& id) {
    absl::MutexLock lock(&mu_);
    StopLocked(id, "other");
  }
  // The node missed its heartbeats (store::MarkLostNodes): its placed
  // workspaces are lost and keep what they hold.
  void LoseNode(const std::string& name) {
    absl::MutexLock lock(&mu_);
    store::StoredNode& node = nodes_[name];
    node.state = core::NodeState::kLost;
    node.version = ++versions_;
    std::vector<store::Change> changes = {{store::Entity::kNode, name, node.version}};
    for (auto& [id, row] : rows_) {
      if (row.workspace.node_name != name || row.workspace.state != core::WorkspaceState::kPlaced) continue;
      row.workspace.state = core::WorkspaceState::kLost;
      row.version = ++versions_;
      changes.push_back({store::Entity::kWorkspace, id, row.version});
    }
    Publish("other", std::move(changes));
  }
  // An admin removed the node (store::DeleteNode): its workspaces are lost
  // and released, and a fresh version tells followers to forget the node.
  void RemoveNode(const std::string& name) {
    absl::MutexLock lock(&mu_);
    nodes_.erase(name);
    std::vector<store::Change> changes = {{store::Entity::kNode, name, ++versions_}};
    for (auto& [id, row] : rows_) {
      if (row.workspace.node_name != name || row.released) continue;
      for (const auto& uuid : HeldKeys(row.workspace)) holds_.erase(uuid);
      row.workspace.state = core::WorkspaceState::kLost;
      row.released = true;
      row.version = ++versions_;
      changes.push_back({store::Entity::kWorkspace, id, row.version});
    }
    Publish("other", std::move(changes));
  }
  // An admin or project owner changed settings (store/settings_repository.h).
  void SetProjectSettings(core::ProjectSettings settings) {
    absl::MutexLock lock(&mu_);
    const std::string key = absl::StrCat("project:", settings.project_id);
    projects_[settings.project_id] = std::move(settings);
    Publish("other", {{store::Entity::kSettings, key, ++versions_}});
  }
  void SetOrgSettings(core::OrgSettings settings) {
    absl::MutexLock lock(&mu_);
    const std::string key = absl::StrCat("org:", settings.org_id);
    orgs_[settings.org_id] = std::move(settings);
    Publish("other", {{store::Entity::kSettings, key, ++versions_}});
  }
  store::WorkspaceRow Row(const std::string& id) {
    absl::MutexLock lock(&mu_);
    return rows_[id];
  }
  // The gpu_holds keys of a placement: its GPUs' UUIDs, or its slice's.
  static std::vector<std::string> HeldKeys(const core::Workspace& w) {
    std::vector<std::string> keys = w.gpu_uuids;
    if (w.slice) keys.push_back(w.slice->uuid);
    return keys;
  }

  std::string HolderOf(const std::string& gpu_uuid) {
    absl::MutexLock lock(&mu_);
    auto it = holds_.find(gpu_uuid);
    return it == holds_.end() ? "" : it->second;
  }
  int64_t head() {
    absl::MutexLock lock(&mu_);
    return log_.empty() ? 0 : log_.back().seq;
  }

  // ---- PlacementStore ----
  absl::StatusOr<PlacementInputs> ReadInputs(const PlaceRequest& request) override {
    absl::MutexLock lock(&mu_);
    PlacementInputs in;
    if (auto it = rows_.find(request.workspace_id); it != rows_.end()) in.existing = it->second;
    in.catalog_generation = generation_;
    StoredSettings settings = SettingsLocked(request.project_id, request.org_id);
    in.project = std::move(settings.project);
    in.org = std::move(settings.org);
    in.org_gpu_sevenths = settings.org_gpu_sevenths_held;
    return in;
  }
  absl::StatusOr<StoredSettings> ReadSettings(const std::string& project_id,
                                              const std::string& org_id,
                                              bool count_org_gpus) override {
    absl::MutexLock lock(&mu_);
    ++settings_reads;
    StoredSettings settings = SettingsLocked(project_id, org_id);
    if (!count_org_gpus) settings.org_gpu_sevenths_held = 0;
    return settings;
  }
  int settings_reads = 0;
  absl::StatusOr<std::vector<core::Workspace>> ListWorkspaces(const store::WorkspaceFilter& filter,
                                                              const std::string& after,
                                                              int limit) override {
    absl::MutexLock lock(&mu_);
    std::vector<core::Workspace> listed;
    for (auto it = rows_.upper_bound(after); it != rows_.end(); ++it) {
      if (static_cast<int>(listed.size()) >= limit) break;
      const core::Workspace& w = it->second.workspace;
      if (!filter.node.empty() && w.node_name != filter.node) continue;
      if (!filter.pool.empty() && w.pool != filter.pool) continue;
      if (!filter.state.empty() && filter.state != core::WorkspaceStateName(w.state)) continue;
      listed.push_back(w);
    }
    return listed;
  }
  absl::StatusOr<std::optional<store::WorkspaceRow>> LoadWorkspace(const std::string& id) override {
    absl::MutexLock lock(&mu_);
    ++workspace_loads;
    auto it = rows_.find(id);
    if (it == rows_.end()) return std::optional<store::WorkspaceRow>();
    return std::optional<store::WorkspaceRow>(it->second);
  }
  store::WriteOutcome Write(store::WorkspaceWrite write) override {
    using Kind = store::WorkspaceWrite::Kind;
    const core::Workspace& w = write.workspace;
    if (write.kind == Kind::kStop) {
      absl::MutexLock lock(&mu_);
      if (!rows_.contains(w.id)) return {absl::NotFoundError(absl::StrCat("workspace ", w.id, " does not exist"))};
      // As store/write_batch.h: a stop that names a version lands only on it.
      if (write.from.version != 0 && rows_[w.id].version != write.from.version) {
        return {absl::AbortedError(absl::StrCat("workspace ", w.id, " changed since this decision"))};
      }
      store::WorkspaceRow row = StopLocked(w.id, "self");
      return {absl::OkStatus(), row.version, row};
    }
    if (write.kind == Kind::kSavePending) {
      absl::MutexLock lock(&mu_);
      if (absl::Status ok = GuardLocked(w.id, write.from); !ok.ok()) return {ok};
      return {absl::OkStatus(), WriteLocked(w, false)};
    }
    if (before_commit) before_commit(w);
    absl::MutexLock lock(&mu_);
    ++commits;
    if (write.kind == Kind::kQueuePlace) write.from.pending = true;
    if (absl::Status ok = GuardLocked(w.id, write.from); !ok.ok()) return {ok};
    if (write.catalog_generation && *write.catalog_generation != generation_) {
      return {absl::AbortedError("the catalog changed since this decision")};
    }
    auto node = nodes_.find(w.node_name);
    if (node == nodes_.end() || node->second.state != core::NodeState::kReady) {
      return {absl::AbortedError(absl::StrCat("node ", w.node_name, " no longer takes workspaces"))};
    }
    for (const auto& uuid : HeldKeys(w)) {
      if (holds_.contains(uuid)) return {absl::AbortedError(absl::StrCat("GPU ", uuid, " is held"))};
    }
    // The guarded capacity update of store/write_batch.h: a node never
    // holds more than its allocatable CPU and memory.
    store::StoredNode& target = node->second;
    if (target.held_cpu_millis + w.cpu_millis > target.info.cpu_millis ||
        target.held_memory_bytes + w.memory_bytes > target.info.memory_bytes) {
      return {absl::AbortedError(absl::StrCat("node ", w.node_name, " has no room for ", w.id))};
    }
    target.held_cpu_millis += w.cpu_millis;
    target.held_memory_bytes += w.memory_bytes;
    for (const auto& uuid : HeldKeys(w)) holds_[uuid] = w.id;
    return {absl::OkStatus(), WriteLocked(w, true)};
  }

  // Sizes of the WriteAll calls (the queue drain's batches).
  std::vector<size_t> write_all_sizes;
  std::vector<store::WriteOutcome> WriteAll(std::vector<store::WorkspaceWrite> writes) override {
    {
      absl::MutexLock lock(&mu_);
      write_all_sizes.push_back(writes.size());
    }
    return PlacementStore::WriteAll(std::move(writes));
  }

  // ---- StateStore ----
  absl::StatusOr<Rows> Load(bool catalog, const std::vector<std::string>& nodes,
                            const std::vector<std::string>& workspaces) override {
    absl::MutexLock lock(&mu_);
    Rows rows;
    if (catalog) {
      rows.catalog = catalog_;
      rows.catalog_generation = generation_;
    }
    for (const auto& name : nodes) {
      if (auto it = nodes_.find(name); it != nodes_.end()) rows.nodes.push_back(it->second);
    }
    for (const auto& id : workspaces) {
      ++workspace_rows_read;
      if (auto it = rows_.find(id); it != rows_.end()) rows.workspaces.push_back(it->second);
    }
    return rows;
  }
  // Workspace rows the replica asked for because the feed named a version
  // it did not know.
  int workspace_rows_read = 0;
  absl::StatusOr<Everything> LoadAll() override {
    absl::MutexLock lock(&mu_);
    ++reloads;
    Everything all;
    all.position = log_.empty() ? 0 : log_.back().seq;
    all.catalog = catalog_;
    all.catalog_generation = generation_;
    for (const auto& [name, node] : nodes_) all.nodes.push_back(node);
    for (const auto& [id, row] : rows_) {
      // As store::LoadActiveWorkspaces: what still is, or holds, something.
      if (row.workspace.state != core::WorkspaceState::kStopped && !row.released) {
        all.active.push_back(row);
      }
    }
    return all;
  }
  int reloads = 0;
  int workspace_loads = 0;  // LoadWorkspace calls (a read of one row).

  // ---- FeedSource ----
  absl::StatusOr<store::FeedRead> ReadSince(int64_t after, int limit) override {
    absl::MutexLock lock(&mu_);
    store::FeedRead read;
    read.head = log_.empty() ? 0 : log_.back().seq;
    for (const auto& record : log_) {
      if (record.seq > after && static_cast<int>(read.records.size()) < limit) {
        read.records.push_back(record);
      }
    }
    return read;
  }

 private:
  void Publish(const std::string& replica, std::vector<store::Change> changes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    int64_t seq = log_.empty() ? 1 : log_.back().seq + 1;
    log_.push_back({seq, replica, absl::UnixEpoch(), std::move(changes)});
  }
  // As store/settings_repository.h: what is not stored reads as the
  // defaults; the org's GPUs are those its unreleased workspaces hold.
  StoredSettings SettingsLocked(const std::string& project_id, const std::string& org_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    StoredSettings settings;
    settings.project.project_id = project_id;
    settings.org.org_id = org_id;
    if (auto it = projects_.find(project_id); it != projects_.end()) {
      settings.project = it->second;
      settings.project_version = 1;
    }
    if (auto it = orgs_.find(org_id); it != orgs_.end()) {
      settings.org = it->second;
      settings.org_version = 1;
    }
    for (const auto& [id, row] : rows_) {
      if (row.workspace.org_id == org_id && !row.released) {
        settings.org_gpu_sevenths_held +=
            static_cast<int64_t>(row.workspace.gpu_uuids.size()) * core::kMigComputeSlices +
            (row.workspace.slice ? row.workspace.slice->compute_slices : 0);
      }
    }
    return settings;
  }
  // The version guard of store/workspace_repository.h.
  absl::Status GuardLocked(const std::string& id, store::DecidedFrom from)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = rows_.find(id);
    int64_t version = it == rows_.end() ? 0 : it->second.version;
    bool pending = it != rows_.end() && it->second.workspace.state == core::WorkspaceState::kPending;
    if (version != from.version || (from.pending && !pending) ||
        (!from.pending && it != rows_.end() && !it->second.released)) {
      return absl::AbortedError(absl::StrCat("workspace ", id, " changed since this decision"));
    }
    return absl::OkStatus();
  }
  int64_t WriteLocked(const core::Workspace& w, bool placed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    store::WorkspaceRow& row = rows_[w.id];
    row.workspace = w;
    row.workspace.state = placed ? core::WorkspaceState::kPlaced : core::WorkspaceState::kPending;
    row.released = false;
    row.version = ++versions_;
    Publish("self", {{store::Entity::kWorkspace, w.id, row.version}});
    return row.version;
  }
  store::WorkspaceRow StopLocked(const std::string& id, const std::string& replica)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    store::WorkspaceRow& row = rows_[id];
    if (row.workspace.state == core::WorkspaceState::kStopped) return row;
    for (const auto& uuid : HeldKeys(row.workspace)) holds_.erase(uuid);
    if (!row.released && row.workspace.state != core::WorkspaceState::kPending) {
      if (auto node = nodes_.find(row.workspace.node_name); node != nodes_.end()) {
        node->second.held_cpu_millis -= row.workspace.cpu_millis;
        node->second.held_memory_bytes -= row.workspace.memory_bytes;
      }
    }
    row.workspace.state = core::WorkspaceState::kStopped;
    row.released = true;
    row.version = ++versions_;
    Publish(replica, {{store::Entity::kWorkspace, id, row.version}});
    return row;
  }

  absl::Mutex mu_;
  core::Catalog catalog_ ABSL_GUARDED_BY(mu_);
  int64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t versions_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, store::StoredNode> nodes_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, store::WorkspaceRow> rows_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> holds_ ABSL_GUARDED_BY(mu_);  // GPU uuid -> workspace.
  std::vector<store::ChangeRecord> log_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, core::ProjectSettings> projects_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, core::OrgSettings> orgs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace wsched::replica::testing

#endif  // WSCHED_SERVER_REPLICA_FAKE_STORES_TEST_UTIL_H_
