#include "server/store/write_batch.h"

#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "server/store/prepared.h"

namespace wsched::store {
namespace {

using Kind = WorkspaceWrite::Kind;

template <typename T>
std::string NumberArray(const std::vector<T>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) absl::StrAppend(&out, i > 0 ? "," : "", values[i]);
  return out + "}";
}

std::string BoolArray(const std::vector<bool>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) absl::StrAppend(&out, i > 0 ? "," : "", values[i] ? "t" : "f");
  return out + "}";
}

bool Places(Kind kind) { return kind == Kind::kPlace || kind == Kind::kQueuePlace; }

struct LockedNode {
  bool takes_work = false;
  int64_t free_cpu = 0;
  int64_t free_memory = 0;
};

// What the guards compare against, read under the batch's locks.
struct Current {
  absl::flat_hash_map<std::string, LockedNode> nodes;
  absl::flat_hash_map<std::string, WorkspaceRow> records;
  absl::flat_hash_set<std::string> held_gpus;
  int64_t catalog_generation = 0;
  absl::flat_hash_map<std::string, int64_t> project_versions, org_versions;  // Absent: no row (0).
  absl::flat_hash_map<std::string, int64_t> quotas;                         // Orgs with a quota.
  absl::flat_hash_map<std::string, int64_t> org_gpus;                       // Of those orgs.
};

class Batch {
 public:
  Batch(pqxx::work& txn, const std::vector<WorkspaceWrite>& writes, ChangeSet& changes,
        BatchStatements& stats)
      : txn_(txn), writes_(writes), changes_(changes), stats_(stats), out_(writes.size()) {}

  std::vector<WriteOutcome> Run() {
    Lock();
    ReadGuards();
    for (size_t i = 0; i < writes_.size(); ++i) out_[i].status = Check(i);
    WriteStops();
    WriteRecords();
    WriteHoldsAndCapacity();
    return std::move(out_);
  }

 private:
  // Every statement is prepared: the batch runs the same handful each time.
  template <typename... Args>
  pqxx::result Exec(const char* name, const std::string& sql, Args&&... args) {
    ++stats_.statements;
    return ExecPrepared(txn_, name, sql, std::forward<Args>(args)...);
  }

  // Nodes first, by name, then records (the order every writer uses, see
  // StopWorkspace), so batches and stops never wait on each other in a cycle.
  void Lock() {
    std::vector<std::string> nodes, stops, ids;
    for (const auto& w : writes_) {
      ids.push_back(w.workspace.id);
      if (Places(w.kind)) nodes.push_back(w.workspace.node_name);
      if (w.kind == Kind::kStop) stops.push_back(w.workspace.id);
    }
    for (const auto& row : Exec(
             "batch_lock_nodes",
             "SELECT name, state = 'ready' AND driver_state IN ('ready', 'not_needed'), "
             "alloc_cpu_millis - held_cpu_millis, alloc_memory_bytes - held_memory_bytes "
             "FROM nodes WHERE name = ANY($1::text[] || ARRAY(SELECT node_name FROM workspaces "
             "WHERE id = ANY($2::text[]) AND node_name IS NOT NULL)) ORDER BY name FOR UPDATE",
             TextArray(nodes), TextArray(stops))) {
      current_.nodes[row[0].c_str()] = {row[1].as<bool>(), row[2].as<int64_t>(), row[3].as<int64_t>()};
    }
    auto rows = WorkspaceRows(Exec("batch_lock_records", absl::StrCat("SELECT ", kWorkspaceColumns,
                                                " FROM workspaces w WHERE w.id = ANY($1::text[]) "
                                                "ORDER BY w.id FOR UPDATE"),
                                   TextArray(ids)));
    if (!rows.ok()) throw std::runtime_error(std::string(rows.status().message()));
    for (auto& row : *rows) current_.records[row.workspace.id] = std::move(row);
  }

  void ReadGuards() {
    std::vector<std::string> uuids, projects, orgs, gpu_orgs;
    bool any_decision = false;
    for (const auto& w : writes_) {
      if (w.kind == Kind::kStop) continue;
      any_decision = true;
      if (w.project_settings_version) projects.push_back(w.workspace.project_id);
      if (w.org_settings_version) orgs.push_back(w.workspace.org_id);
      if (!Places(w.kind)) continue;
      uuids.insert(uuids.end(), w.workspace.gpu_uuids.begin(), w.workspace.gpu_uuids.end());
      if (!w.workspace.gpu_uuids.empty()) gpu_orgs.push_back(w.workspace.org_id);
    }
    if (!any_decision) return;
    // The catalog generation, settings versions and GPU quotas, in one read.
    for (const auto& row : Exec(
             "batch_guards",
             "SELECT 'catalog', '', generation FROM catalog_generation "
             "UNION ALL SELECT 'project', project_id, version FROM project_settings "
             "WHERE project_id = ANY($1::text[]) "
             "UNION ALL SELECT 'org', org_id, version FROM org_settings WHERE org_id = ANY($2::text[]) "
             "UNION ALL SELECT 'quota', org_id, gpu_quota FROM org_settings "
             "WHERE org_id = ANY($3::text[]) AND gpu_quota >= 0",
             TextArray(projects), TextArray(orgs), TextArray(gpu_orgs))) {
      std::string kind = row[0].c_str();
      int64_t value = row[2].as<int64_t>();
      if (kind == "catalog") current_.catalog_generation = value;
      if (kind == "project") current_.project_versions[row[1].c_str()] = value;
      if (kind == "org") current_.org_versions[row[1].c_str()] = value;
      if (kind == "quota") current_.quotas[row[1].c_str()] = value;
    }
    if (!uuids.empty()) {
      for (const auto& row : Exec("batch_held_gpus", "SELECT gpu_uuid FROM gpu_holds WHERE gpu_uuid = ANY($1::text[])",
                                  TextArray(uuids))) {
        current_.held_gpus.insert(row[0].c_str());
      }
    }
    if (current_.quotas.empty()) return;
    // Orgs with a quota: serialized across replicas by an advisory lock per
    // org (taken in order), then counted.
    std::vector<std::string> limited;
    for (const auto& [org, quota] : current_.quotas) limited.push_back(org);
    std::sort(limited.begin(), limited.end());
    Exec("batch_lock_orgs", "SELECT pg_advisory_xact_lock(hashtextextended('org:' || o, 0)) "
         "FROM unnest($1::text[]) WITH ORDINALITY AS t(o, n) ORDER BY n",
         TextArray(limited));
    for (const auto& row : Exec(
             "batch_org_gpus",
             "SELECT w.org_id, count(*) FROM gpu_holds h JOIN workspaces w ON w.id = h.workspace_id "
             "WHERE w.org_id = ANY($1::text[]) GROUP BY w.org_id",
             TextArray(limited))) {
      current_.org_gpus[row[0].c_str()] = row[1].as<int64_t>();
    }
  }

  absl::Status MovedOn(const std::string& id) {
    return absl::AbortedError(
        absl::StrCat("workspace ", id, " was changed by another request since this decision"));
  }

  // Every guard of write i, against the state as earlier writes of this
  // batch leave it.
  absl::Status Check(size_t i) {
    const WorkspaceWrite& write = writes_[i];
    const core::Workspace& w = write.workspace;
    if (!written_.insert(w.id).second) {
      return absl::AbortedError(absl::StrCat("workspace ", w.id, " is written twice in one batch"));
    }
    auto record = current_.records.find(w.id);
    const WorkspaceRow* cur = record == current_.records.end() ? nullptr : &record->second;
    if (write.kind == Kind::kStop) {
      if (cur == nullptr) return absl::NotFoundError(absl::StrCat("workspace ", w.id, " does not exist"));
      if (cur->workspace.state != core::WorkspaceState::kStopped) {
        stops_.push_back(i);
      } else {
        out_[i].version = cur->version;
        out_[i].row = *cur;
      }
      return absl::OkStatus();
    }
    bool matches = write.kind == Kind::kQueuePlace
                       ? cur != nullptr && cur->version == write.from.version &&
                             cur->workspace.state == core::WorkspaceState::kPending
                       : (write.from.version == 0 ? cur == nullptr
                                                  : cur != nullptr && cur->version == write.from.version &&
                                                        cur->released);
    if (!matches) return MovedOn(w.id);
    if (absl::Status basis = CheckBasis(write); !basis.ok()) return basis;
    if (Places(write.kind)) {
      if (absl::Status fits = CheckNodeAndGpus(w); !fits.ok()) return fits;
    }
    records_.push_back(i);
    return absl::OkStatus();
  }

  // What the decision read from the replica's state is still current.
  absl::Status CheckBasis(const WorkspaceWrite& write) {
    auto version_of = [](const absl::flat_hash_map<std::string, int64_t>& versions,
                         const std::string& key) {
      auto it = versions.find(key);
      return it == versions.end() ? int64_t{0} : it->second;
    };
    if (write.catalog_generation && *write.catalog_generation != current_.catalog_generation) {
      return absl::AbortedError("the catalog changed since this decision");
    }
    if ((write.project_settings_version &&
         *write.project_settings_version != version_of(current_.project_versions, write.workspace.project_id)) ||
        (write.org_settings_version &&
         *write.org_settings_version != version_of(current_.org_versions, write.workspace.org_id))) {
      return absl::AbortedError("class settings changed since this decision");
    }
    return absl::OkStatus();
  }

  absl::Status CheckNodeAndGpus(const core::Workspace& w) {
    auto node = current_.nodes.find(w.node_name);
    if (node == current_.nodes.end() || !node->second.takes_work) {
      return absl::AbortedError(absl::StrCat("node ", w.node_name, " no longer takes workspaces"));
    }
    if (node->second.free_cpu < w.cpu_millis || node->second.free_memory < w.memory_bytes) {
      return absl::AbortedError(absl::StrCat("node ", w.node_name, " has no room left"));
    }
    for (const auto& uuid : w.gpu_uuids) {
      if (current_.held_gpus.contains(uuid)) {
        return absl::AbortedError(absl::StrCat("GPU ", uuid, " is held by another workspace"));
      }
    }
    const int gpus = static_cast<int>(w.gpu_uuids.size());
    auto quota = current_.quotas.find(w.org_id);
    if (gpus > 0 && quota != current_.quotas.end()) {
      int64_t& held = current_.org_gpus[w.org_id];
      if (held + gpus > quota->second) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "org ", w.org_id, " holds ", held, " GPUs of its quota of ", quota->second,
            "; class ", w.class_id, " needs ", gpus, " more"));
      }
      held += gpus;
    }
    node->second.free_cpu -= w.cpu_millis;
    node->second.free_memory -= w.memory_bytes;
    current_.held_gpus.insert(w.gpu_uuids.begin(), w.gpu_uuids.end());
    return absl::OkStatus();
  }

  void WriteStops() {
    if (stops_.empty()) return;
    std::vector<std::string> ids;
    for (size_t i : stops_) ids.push_back(writes_[i].workspace.id);
    absl::flat_hash_map<std::string, int64_t> versions;
    for (const auto& row : Exec(
             "batch_stop",
             "UPDATE workspaces SET state = 'stopped', stopped_at = COALESCE(stopped_at, now()), "
             "version = nextval('entity_versions') WHERE id = ANY($1::text[]) RETURNING id, version",
             TextArray(ids))) {
      versions[row[0].c_str()] = row[1].as<int64_t>();
    }
    Exec("batch_stop_holds", "DELETE FROM gpu_holds WHERE workspace_id = ANY($1::text[])", TextArray(ids));
    for (size_t i : stops_) {
      WorkspaceRow row = current_.records[writes_[i].workspace.id];
      const core::Workspace& w = row.workspace;
      if (!row.released && !w.node_name.empty() &&
          (w.state == core::WorkspaceState::kPlaced || w.state == core::WorkspaceState::kLost)) {
        capacity_[w.node_name].first -= w.cpu_millis;
        capacity_[w.node_name].second -= w.memory_bytes;
      }
      row.workspace.state = core::WorkspaceState::kStopped;
      row.released = true;
      row.version = versions[w.id];
      out_[i].version = row.version;
      out_[i].row = std::move(row);
      changes_.Add(Entity::kWorkspace, out_[i].row->workspace.id, out_[i].version);
    }
  }

  // New and restarted records (placed or pending) and queue placements.
  void WriteRecords() {
    std::vector<size_t> fresh, restarts, queued;
    for (size_t i : records_) {
      const WorkspaceWrite& w = writes_[i];
      (w.kind == Kind::kQueuePlace ? queued : w.from.version == 0 ? fresh : restarts).push_back(i);
    }
    if (!fresh.empty()) {
      Record(fresh, "batch_insert", "INSERT INTO workspaces (id, org_id, project_id, user_id, class_id, class_source, "
                    "explanation, state, priority, node_name, pool, cpu_millis, memory_bytes, gpu_count, "
                    "placement, pending_reason, placed_at, version) "
                    "SELECT u.id, u.org, u.project, u.usr, u.cls, u.source, u.why, u.state, u.priority, "
                    "NULLIF(u.node, ''), NULLIF(u.pool, ''), u.cpu, u.mem, u.gpus, "
                    "NULLIF(u.placement, '')::jsonb, u.reason, CASE WHEN u.placed THEN now() END, "
                    "nextval('entity_versions') FROM ", " ON CONFLICT (id) DO NOTHING RETURNING id, version");
    }
    if (!restarts.empty()) {
      Record(restarts, "batch_restart", "UPDATE workspaces w SET (org_id, project_id, user_id, class_id, class_source, "
                       "explanation, state, priority, node_name, pool, cpu_millis, memory_bytes, gpu_count, "
                       "placement, pending_reason, placed_at, created_at, stopped_at, version) = "
                       "(u.org, u.project, u.usr, u.cls, u.source, u.why, u.state, u.priority, "
                       "NULLIF(u.node, ''), NULLIF(u.pool, ''), u.cpu, u.mem, u.gpus, "
                       "NULLIF(u.placement, '')::jsonb, u.reason, CASE WHEN u.placed THEN now() END, "
                       "now(), NULL, nextval('entity_versions')) FROM ",
             " WHERE w.id = u.id RETURNING w.id, w.version");
    }
    if (!queued.empty()) {
      Record(queued, "batch_queue_place", "UPDATE workspaces w SET state = 'placed', node_name = u.node, pool = u.pool, "
                     "cpu_millis = u.cpu, memory_bytes = u.mem, gpu_count = u.gpus, "
                     "placement = NULLIF(u.placement, '')::jsonb, pending_reason = '', placed_at = now(), "
                     "version = nextval('entity_versions') FROM ",
             " WHERE w.id = u.id RETURNING w.id, w.version");
    }
  }

  // One statement for the writes `indices`: `head` + the writes as a set
  // (alias u) + `tail`, which must return (id, version). A write it does not
  // return lost to a concurrent insert of the same id.
  void Record(const std::vector<size_t>& indices, const char* name, const std::string& head,
              const std::string& tail) {
    std::vector<std::string> id, org, project, user, cls, source, why, state, node, pool, placement, reason;
    std::vector<int64_t> priority, cpu, mem, gpus;
    std::vector<bool> placed;
    for (size_t i : indices) {
      const WorkspaceWrite& write = writes_[i];
      const core::Workspace& w = write.workspace;
      id.push_back(w.id);
      org.push_back(w.org_id);
      project.push_back(w.project_id);
      user.push_back(w.user_id);
      cls.push_back(w.class_id);
      source.push_back(w.class_source);
      why.push_back(w.explanation);
      state.push_back(Places(write.kind) ? "placed" : "pending");
      priority.push_back(w.priority);
      node.push_back(Places(write.kind) ? w.node_name : "");
      pool.push_back(Places(write.kind) ? w.pool : "");
      cpu.push_back(Places(write.kind) ? w.cpu_millis : 0);
      mem.push_back(Places(write.kind) ? w.memory_bytes : 0);
      gpus.push_back(Places(write.kind) ? static_cast<int64_t>(w.gpu_uuids.size()) : 0);
      placement.push_back(Places(write.kind) ? w.placement_json : "");
      reason.push_back(Places(write.kind) ? "" : w.pending_reason);
      placed.push_back(Places(write.kind));
    }
    absl::flat_hash_map<std::string, int64_t> versions;
    for (const auto& row : Exec(
             name, absl::StrCat(head,
                          "unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], "
                          "$6::text[], $7::text[], $8::text[], $9::int[], $10::text[], $11::text[], "
                          "$12::bigint[], $13::bigint[], $14::int[], $15::text[], $16::text[], "
                          "$17::boolean[]) AS u(id, org, project, usr, cls, source, why, state, "
                          "priority, node, pool, cpu, mem, gpus, placement, reason, placed)",
                          tail),
             TextArray(id), TextArray(org), TextArray(project), TextArray(user), TextArray(cls),
             TextArray(source), TextArray(why), TextArray(state), NumberArray(priority),
             TextArray(node), TextArray(pool), NumberArray(cpu), NumberArray(mem), NumberArray(gpus),
             TextArray(placement), TextArray(reason), BoolArray(placed))) {
      versions[row[0].c_str()] = row[1].as<int64_t>();
    }
    for (size_t i : indices) {
      const core::Workspace& w = writes_[i].workspace;
      auto it = versions.find(w.id);
      if (it == versions.end()) {
        out_[i].status = MovedOn(w.id);
        continue;
      }
      out_[i].version = it->second;
      changes_.Add(Entity::kWorkspace, w.id, it->second);
      if (Places(writes_[i].kind)) placed_.push_back(i);
    }
  }

  void WriteHoldsAndCapacity() {
    std::vector<std::string> uuids, nodes, holders;
    std::vector<int64_t> indices;
    for (size_t i : placed_) {
      const core::Workspace& w = writes_[i].workspace;
      capacity_[w.node_name].first += w.cpu_millis;
      capacity_[w.node_name].second += w.memory_bytes;
      for (size_t g = 0; g < w.gpu_uuids.size() && g < w.gpu_indices.size(); ++g) {
        uuids.push_back(w.gpu_uuids[g]);
        nodes.push_back(w.node_name);
        indices.push_back(w.gpu_indices[g]);
        holders.push_back(w.id);
      }
    }
    if (!uuids.empty()) {
      // The primary key on gpu_uuid stays the last word on a second holder.
      Exec("batch_holds", "INSERT INTO gpu_holds (gpu_uuid, node_name, gpu_index, workspace_id) "
           "SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[])",
           TextArray(uuids), TextArray(nodes), NumberArray(indices), TextArray(holders));
    }
    std::vector<std::string> names;
    std::vector<int64_t> cpu, mem;
    for (const auto& [name, delta] : capacity_) {
      if (delta.first == 0 && delta.second == 0) continue;
      names.push_back(name);
      cpu.push_back(delta.first);
      mem.push_back(delta.second);
    }
    if (names.empty()) return;
    // The check constraints stay the last word on an overcommit.
    Exec("batch_capacity", "UPDATE nodes n SET held_cpu_millis = GREATEST(n.held_cpu_millis + d.cpu, 0), "
         "held_memory_bytes = GREATEST(n.held_memory_bytes + d.mem, 0) "
         "FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS d(name, cpu, mem) WHERE n.name = d.name",
         TextArray(names), NumberArray(cpu), NumberArray(mem));
  }

  pqxx::work& txn_;
  const std::vector<WorkspaceWrite>& writes_;
  ChangeSet& changes_;
  BatchStatements& stats_;
  std::vector<WriteOutcome> out_;
  Current current_;
  absl::flat_hash_set<std::string> written_;
  std::vector<size_t> stops_, records_, placed_;
  std::map<std::string, std::pair<int64_t, int64_t>> capacity_;  // Node -> (cpu, memory) delta.
};

}  // namespace

std::vector<WriteOutcome> ApplyWrites(pqxx::work& txn, const std::vector<WorkspaceWrite>& writes,
                                      ChangeSet& changes, BatchStatements& stats) {
  return Batch(txn, writes, changes, stats).Run();
}

}  // namespace wsched::store
