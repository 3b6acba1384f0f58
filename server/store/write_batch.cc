#include "server/store/write_batch.h"

#include <map>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"
#include "server/store/batch_budgets.h"
#include "server/store/documents/documents.h"
#include "server/store/statement_pipeline.h"
#include "server/store/usage_repository.h"

namespace wsched::store {
namespace {

using Kind = WorkspaceWrite::Kind;

std::string BoolArray(const std::vector<bool>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) absl::StrAppend(&out, i > 0 ? "," : "", values[i] ? "t" : "f");
  return out + "}";
}

// Every statement a batch may run, prepared once per connection.
//
// The nodes of the batch's stops are found by joining from the ids, not by
// `WHERE id = ANY($2)`: for a batch without stops ($2 empty) PostgreSQL's
// custom plan took the smallest index, workspaces_active, and filtered every
// active workspace through it. Its statistics are from the last ANALYZE, so
// after one of a quiet hour that index looks empty however full it is now:
// the single writer paid 3 ms a batch at 10,000 placed workspaces, growing
// with each placement (docs/performance-history.md).
constexpr Statement kLockNodes{
    "batch_lock_nodes",
    "SELECT name, state = 'ready' AND driver_state IN ('ready', 'not_needed'), "
    "alloc_cpu_millis - held_cpu_millis, alloc_memory_bytes - held_memory_bytes "
    "FROM nodes WHERE name = ANY($1::text[] || ARRAY(SELECT w.node_name "
    "FROM unnest($2::text[]) AS s(id) JOIN workspaces w ON w.id = s.id "
    "WHERE w.node_name IS NOT NULL)) ORDER BY name FOR UPDATE"};
// kLockRecords is built from kWorkspaceColumns (see LockRecordsStatement).
// What the guards compare against, in one statement: the catalog's
// generation, the settings' versions, the orgs' GPU quotas, the GPUs
// already held, the MIG GPUs being laid out anew, and the spending limits
// (migration 0021) of the GPU placements' orgs ($3) and projects ($6) with
// the transaction's now(): the clock the ledger counts by, so a limit's
// period is the ledger's. Folded in here rather than read by a statement
// of their own, so a batch pays nothing more for limits that do not exist.
constexpr Statement kGuards{
    "batch_guards",
    "SELECT 'catalog', '', generation, NULL::text FROM catalog_generation "
    "UNION ALL SELECT 'project', project_id, version, NULL FROM project_settings "
    "WHERE project_id = ANY($1::text[]) "
    "UNION ALL SELECT 'org', org_id, version, NULL FROM org_settings WHERE org_id = ANY($2::text[]) "
    "UNION ALL SELECT 'quota', org_id, gpu_quota, NULL FROM org_settings "
    "WHERE org_id = ANY($3::text[]) AND gpu_quota >= 0 "
    "UNION ALL SELECT 'gpu', gpu_uuid, 0, NULL FROM gpu_holds WHERE gpu_uuid = ANY($4::text[]) "
    "UNION ALL SELECT 'relayout', node, gpu_index, NULL FROM mig_relayouts "
    "WHERE node = ANY($5::text[]) "
    "UNION ALL SELECT 'org limit', org_id, (extract(epoch FROM now()) * 1000000)::bigint, "
    "spending_limit::text FROM org_settings "
    "WHERE org_id = ANY($3::text[]) AND spending_limit IS NOT NULL "
    "UNION ALL SELECT 'project limit', project_id, (extract(epoch FROM now()) * 1000000)::bigint, "
    "spending_limit::text FROM project_settings "
    "WHERE project_id = ANY($6::text[]) AND spending_limit IS NOT NULL"};
// Orgs with a quota or a spending limit: serialized across replicas by an
// advisory lock per org (taken in order), then counted.
constexpr Statement kLockOrgs{
    "batch_lock_orgs",
    "SELECT pg_advisory_xact_lock(hashtextextended('org:' || o, 0)) "
    "FROM unnest($1::text[]) WITH ORDINALITY AS t(o, n) ORDER BY n"};
// In sevenths of a GPU: a slice counts its share (migrations/0019).
constexpr Statement kOrgGpus{"batch_org_gpus",
                             "SELECT w.org_id, sum(h.compute_slices) FROM gpu_holds h JOIN "
                             "workspaces w ON w.id = h.workspace_id "
                             "WHERE w.org_id = ANY($1::text[]) GROUP BY w.org_id"};
constexpr Statement kStop{
    "batch_stop",
    "UPDATE workspaces SET state = 'stopped', "
    "stopped_at = COALESCE(stopped_at, GREATEST(now(), placed_at)), "
    "version = nextval('entity_versions') WHERE id = ANY($1::text[]) RETURNING id, version"};
constexpr Statement kStopHolds{"batch_stop_holds",
                               "DELETE FROM gpu_holds WHERE workspace_id = ANY($1::text[])"};
// The document schema the placement column is written in (a literal: the
// statements are constants).
#define WSCHED_PLACEMENT_SCHEMA "1"
static_assert(documents::kSchemaVersion == 1, "WSCHED_PLACEMENT_SCHEMA names another version");
// A record's placed_at in microseconds (0 for a pending one), returned so
// the replica mirrors the database's time rather than its own.
#define WSCHED_PLACED_MICROS(column) \
  "COALESCE((extract(epoch FROM " column ") * 1000000)::bigint, 0)"
#define WSCHED_BATCH_RECORDS                                                                   \
  "unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], " \
  "$8::text[], $9::int[], $10::text[], $11::text[], $12::bigint[], $13::bigint[], $14::int[], " \
  "$15::text[], $16::text[], $17::boolean[]) AS u(id, org, project, usr, cls, source, why, "    \
  "state, priority, node, pool, cpu, mem, gpus, placement, reason, placed)"
// A write these do not return lost to a concurrent insert of the same id.
constexpr Statement kInsert{
    "batch_insert",
    "INSERT INTO workspaces (id, org_id, project_id, user_id, class_id, class_source, "
    "explanation, state, priority, node_name, pool, cpu_millis, memory_bytes, gpu_count, "
    "placement, placement_schema, pending_reason, placed_at, version) "
    "SELECT u.id, u.org, u.project, u.usr, u.cls, u.source, u.why, u.state, u.priority, "
    "NULLIF(u.node, ''), NULLIF(u.pool, ''), u.cpu, u.mem, u.gpus, "
    "NULLIF(u.placement, '')::jsonb, " WSCHED_PLACEMENT_SCHEMA ", u.reason, "
    "CASE WHEN u.placed THEN now() END, "
    "nextval('entity_versions') FROM " WSCHED_BATCH_RECORDS
    " ON CONFLICT (id) DO NOTHING RETURNING id, version, " WSCHED_PLACED_MICROS("placed_at")};
constexpr Statement kRestart{
    "batch_restart",
    "UPDATE workspaces w SET (org_id, project_id, user_id, class_id, class_source, "
    "explanation, state, priority, node_name, pool, cpu_millis, memory_bytes, gpu_count, "
    "placement, placement_schema, pending_reason, placed_at, created_at, stopped_at, "
    "idle_since, idle_stops_at, ready_at, version) = "
    "(u.org, u.project, u.usr, u.cls, u.source, u.why, u.state, u.priority, "
    "NULLIF(u.node, ''), NULLIF(u.pool, ''), u.cpu, u.mem, u.gpus, "
    "NULLIF(u.placement, '')::jsonb, " WSCHED_PLACEMENT_SCHEMA ", u.reason, "
    "CASE WHEN u.placed THEN now() END, "
    "now(), NULL, NULL, NULL, NULL, nextval('entity_versions')) FROM " WSCHED_BATCH_RECORDS
    " WHERE w.id = u.id RETURNING w.id, w.version, " WSCHED_PLACED_MICROS("w.placed_at")};
constexpr Statement kQueuePlace{
    "batch_queue_place",
    "UPDATE workspaces w SET state = 'placed', node_name = u.node, pool = u.pool, "
    "cpu_millis = u.cpu, memory_bytes = u.mem, gpu_count = u.gpus, "
    "placement = NULLIF(u.placement, '')::jsonb, placement_schema = " WSCHED_PLACEMENT_SCHEMA
    ", pending_reason = '', placed_at = now(), "
    "version = nextval('entity_versions') FROM " WSCHED_BATCH_RECORDS
    " WHERE w.id = u.id RETURNING w.id, w.version, " WSCHED_PLACED_MICROS("w.placed_at")};
#undef WSCHED_BATCH_RECORDS
#undef WSCHED_PLACED_MICROS
#undef WSCHED_PLACEMENT_SCHEMA
// The primary key on gpu_uuid (a slice's own UUID for a slice) stays the
// last word on a second holder.
constexpr Statement kHolds{
    "batch_holds",
    "INSERT INTO gpu_holds (gpu_uuid, node_name, gpu_index, workspace_id, gpu_instance, "
    "compute_slices) SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], "
    "$5::int[], $6::smallint[])"};
// The check constraints stay the last word on an overcommit.
constexpr Statement kCapacity{
    "batch_capacity",
    "UPDATE nodes n SET held_cpu_millis = GREATEST(n.held_cpu_millis + d.cpu, 0), "
    "held_memory_bytes = GREATEST(n.held_memory_bytes + d.mem, 0) "
    "FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS d(name, cpu, mem) WHERE n.name = d.name"};

// The usage records of the stops that end a placement ($1 ids, $2 end
// reasons), queued before kStop changes their state: the workspace row as
// it was placed, ended now(), the time kStop gives stopped_at.
const Statement& StopUsageStatement() {
  static const std::string* sql = new std::string(UsageInsertSql(
      "r.reason", "JOIN unnest($1::text[], $2::text[]) AS r(id, reason) ON r.id = w.id WHERE true"));
  static const Statement statement{"batch_stop_usage", sql->c_str()};
  return statement;
}

const Statement& LockRecordsStatement() {
  static const std::string* sql = new std::string(absl::StrCat(
      "SELECT ", kWorkspaceColumns, " FROM workspaces w WHERE w.id = ANY($1::text[]) ORDER BY w.id FOR UPDATE"));
  static const Statement statement{"batch_lock_records", sql->c_str()};
  return statement;
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
  // MIG GPUs being laid out anew (migrations/0020), by node and GPU index.
  absl::flat_hash_set<std::pair<std::string, int>> relayouts;
  int64_t catalog_generation = 0;
  absl::flat_hash_map<std::string, int64_t> project_versions, org_versions;  // Absent: no row (0).
  absl::flat_hash_map<std::string, int64_t> quotas;                         // Orgs with a quota.
  absl::flat_hash_map<std::string, int64_t> org_gpus;  // Of those orgs, in sevenths of a GPU.
};

class Batch {
 public:
  Batch(pqxx::nontransaction& session, const std::vector<WorkspaceWrite>& writes,
        BatchStatements& stats, absl::Duration budget_interval)
      : pipeline_(session),
        writes_(writes),
        stats_(stats),
        budgets_(budget_interval),
        out_(writes.size()) {}

  // Three round trips whatever the batch's size: BEGIN and the locked
  // reads; the record writes; GPU holds, capacity, change log and COMMIT.
  // (A fourth when an org in the batch has a GPU quota or a spending limit.)
  std::vector<WriteOutcome> Run() {
    pipeline_.Raw("BEGIN");  // Sent with the first reads.
    ReadUnderLocks();
    LockAndCountOrgs();
    for (size_t i = 0; i < writes_.size(); ++i) out_[i].status = Check(i);
    auto stops = QueueStops();
    auto records = QueueRecords();
    if (stops) ApplyStops(*stops);
    for (const auto& [indices, id] : records) ApplyRecords(indices, pipeline_.Get(id));
    QueueHoldsAndCapacity();
    QueuePublish(pipeline_, changes_);
    pipeline_.Raw("COMMIT");
    pipeline_.Finish();  // Throws if any write failed; COMMIT then did not run.
    stats_.statements = pipeline_.executed();
    stats_.round_trips = pipeline_.round_trips();
    return std::move(out_);
  }

 private:
  // Nodes first, by name, then records (the order every writer uses, see
  // StopWorkspace), so batches and stops never wait on each other in a
  // cycle; then what the guards compare against.
  void ReadUnderLocks() {
    std::vector<std::string> nodes, stops, ids, uuids, projects, orgs, gpu_orgs, gpu_projects,
        slice_nodes;
    bool any_decision = false;
    for (const auto& w : writes_) {
      ids.push_back(w.workspace.id);
      if (w.kind == Kind::kStop) {
        stops.push_back(w.workspace.id);
        continue;
      }
      any_decision = true;
      if (w.project_settings_version) projects.push_back(w.workspace.project_id);
      if (w.org_settings_version) orgs.push_back(w.workspace.org_id);
      if (!Places(w.kind)) continue;
      nodes.push_back(w.workspace.node_name);
      std::vector<std::string> held = core::HeldUuids(w.workspace);
      if (!held.empty()) {
        gpu_orgs.push_back(w.workspace.org_id);
        gpu_projects.push_back(w.workspace.project_id);
      }
      uuids.insert(uuids.end(), held.begin(), held.end());
      if (w.workspace.slice) slice_nodes.push_back(w.workspace.node_name);
    }
    auto locked_nodes = pipeline_.Execute(kLockNodes, TextArray(nodes), TextArray(stops));
    auto locked_records = pipeline_.Execute(LockRecordsStatement(), TextArray(ids));
    std::optional<StatementPipeline::Id> guards;
    if (any_decision) {
      guards = pipeline_.Execute(kGuards, TextArray(projects), TextArray(orgs), TextArray(gpu_orgs),
                                 TextArray(uuids), TextArray(slice_nodes), TextArray(gpu_projects));
    }
    for (const auto& row : pipeline_.Get(locked_nodes)) {
      current_.nodes[row[0].c_str()] = {row[1].as<bool>(), row[2].as<int64_t>(), row[3].as<int64_t>()};
    }
    auto rows = WorkspaceRows(pipeline_.Get(locked_records));
    if (!rows.ok()) throw std::runtime_error(std::string(rows.status().message()));
    for (auto& row : *rows) current_.records[row.workspace.id] = std::move(row);
    if (!guards) return;
    for (const auto& row : pipeline_.Get(*guards)) {
      std::string kind = row[0].c_str();
      int64_t value = row[2].as<int64_t>();
      if (kind == "catalog") current_.catalog_generation = value;
      if (kind == "project") current_.project_versions[row[1].c_str()] = value;
      if (kind == "org") current_.org_versions[row[1].c_str()] = value;
      if (kind == "quota") current_.quotas[row[1].c_str()] = value;
      if (kind == "gpu") current_.held_gpus.insert(row[1].c_str());
      if (kind == "relayout") current_.relayouts.emplace(row[1].c_str(), static_cast<int>(value));
      if (kind == "org limit" || kind == "project limit") {
        budgets_.AddLimit(kind == "org limit" ? "org" : "project", row[1].c_str(), row[3].c_str(),
                          absl::FromUnixMicros(value));
      }
    }
  }

  // The orgs to serialize: those with a quota, and those of a GPU placement
  // under an org or project spending limit (a project's limit is judged
  // under its org's lock: its placements are the org's).
  std::vector<std::string> OrgsToLock() const {
    std::set<std::string> orgs;
    for (const auto& [org, quota] : current_.quotas) orgs.insert(org);
    if (!budgets_.empty()) {
      for (const auto& w : writes_) {
        if (Places(w.kind) && budgets_.Limits(w.workspace)) orgs.insert(w.workspace.org_id);
      }
    }
    return {orgs.begin(), orgs.end()};
  }

  void LockAndCountOrgs() {
    const std::vector<std::string> locked_orgs = OrgsToLock();
    if (locked_orgs.empty()) return;
    auto locked = pipeline_.Execute(kLockOrgs, TextArray(locked_orgs));
    std::optional<StatementPipeline::Id> counted;
    if (!current_.quotas.empty()) {
      std::vector<std::string> limited;
      for (const auto& [org, quota] : current_.quotas) limited.push_back(org);
      counted = pipeline_.Execute(kOrgGpus, TextArray(limited));
    }
    std::optional<StatementPipeline::Id> spent = budgets_.QueueSpent(pipeline_);
    pipeline_.Get(locked);
    if (counted) {
      for (const auto& row : pipeline_.Get(*counted)) {
        current_.org_gpus[row[0].c_str()] = row[1].as<int64_t>();
      }
    }
    if (spent) budgets_.ReadSpent(pipeline_.Get(*spent));
  }

  absl::Status MovedOn(const std::string& id) {
    return absl::AbortedError(
        absl::StrCat("workspace ", id, " was changed by another request since this decision"));
  }

  absl::Status BasisChanged(size_t i, absl::Status status) {
    out_[i].basis_changed = true;
    return status;
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
      if (cur == nullptr) {
        return core::NotFoundError(core::ErrorReason::kWorkspaceNotFound, "workspace", w.id);
      }
      if (!core::IsStopReason(write.end_reason)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "a stop cannot end a workspace as \"", core::EndReasonName(write.end_reason), "\""));
      }
      // The idle-GPU policy stops only the record it judged.
      if (write.from.version != 0 && cur->version != write.from.version) return MovedOn(w.id);
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
    if (!matches) return BasisChanged(i, MovedOn(w.id));
    if (absl::Status basis = CheckBasis(write); !basis.ok()) return BasisChanged(i, basis);
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
    const std::vector<std::string> uuids = core::HeldUuids(w);
    for (const auto& uuid : uuids) {
      if (current_.held_gpus.contains(uuid)) {
        return absl::AbortedError(
            absl::StrCat(w.slice ? "MIG slice " : "GPU ", uuid, " is held by another workspace"));
      }
    }
    // The node's row lock orders this against the leader publishing a
    // re-layout (ScalingRepository::ReplaceRelayouts locks it too): either
    // the order is seen here, or the publish sees this hold and drops it.
    if (w.slice && current_.relayouts.contains(std::pair{w.node_name, w.slice->at.gpu_index})) {
      return absl::AbortedError(absl::StrCat("GPU ", w.slice->at.gpu_index, " on node ",
                                             w.node_name, " is being laid out anew"));
    }
    const int64_t sevenths = core::HeldGpuSevenths(w);
    auto quota = current_.quotas.find(w.org_id);
    const bool quota_counts = sevenths > 0 && quota != current_.quotas.end();
    if (quota_counts) {
      const int64_t held = current_.org_gpus[w.org_id];
      if (held + sevenths > quota->second * core::kMigComputeSlices) {
        return core::OrgGpuQuotaExceededInSevenths(w.org_id, w.class_id, held, quota->second,
                                                   sevenths);
      }
    }
    if (absl::Status budget = budgets_.Admit(w, sevenths); !budget.ok()) return budget;
    if (quota_counts) current_.org_gpus[w.org_id] += sevenths;
    node->second.free_cpu -= w.cpu_millis;
    node->second.free_memory -= w.memory_bytes;
    current_.held_gpus.insert(uuids.begin(), uuids.end());
    return absl::OkStatus();
  }

  std::optional<StatementPipeline::Id> QueueStops() {
    if (stops_.empty()) return std::nullopt;
    std::vector<std::string> ids, ended, reasons;
    for (size_t i : stops_) {
      const std::string& id = writes_[i].workspace.id;
      ids.push_back(id);
      const WorkspaceRow& row = current_.records[id];
      if (row.workspace.state == core::WorkspaceState::kPlaced && !row.released) {
        ended.push_back(id);
        reasons.push_back(core::EndReasonName(writes_[i].end_reason));
      }
    }
    // Only when a placement ends: cancelling queued work costs nothing more.
    if (!ended.empty()) pipeline_.Execute(StopUsageStatement(), TextArray(ended), TextArray(reasons));
    auto stopped = pipeline_.Execute(kStop, TextArray(ids));
    pipeline_.Execute(kStopHolds, TextArray(ids));
    return stopped;
  }

  void ApplyStops(StatementPipeline::Id stopped) {
    absl::flat_hash_map<std::string, int64_t> versions;
    for (const auto& row : pipeline_.Get(stopped)) versions[row[0].c_str()] = row[1].as<int64_t>();
    for (size_t i : stops_) {
      WorkspaceRow row = current_.records[writes_[i].workspace.id];
      const core::Workspace& w = row.workspace;
      WorkspaceFacts before = FactsOf(w);
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
      changes_.AddWorkspace(out_[i].row->workspace.id, out_[i].version, std::move(before));
    }
  }

  // New and restarted records (placed or pending) and queue placements:
  // one statement per kind present, with the writes it covers.
  std::vector<std::pair<std::vector<size_t>, StatementPipeline::Id>> QueueRecords() {
    std::vector<size_t> fresh, restarts, queued;
    for (size_t i : records_) {
      const WorkspaceWrite& w = writes_[i];
      (w.kind == Kind::kQueuePlace ? queued : w.from.version == 0 ? fresh : restarts).push_back(i);
    }
    std::vector<std::pair<std::vector<size_t>, StatementPipeline::Id>> queued_statements;
    for (auto& [indices, statement] : {std::pair{std::move(fresh), &kInsert},
                                       std::pair{std::move(restarts), &kRestart},
                                       std::pair{std::move(queued), &kQueuePlace}}) {
      if (indices.empty()) continue;
      queued_statements.emplace_back(indices, QueueRecordStatement(indices, *statement));
    }
    return queued_statements;
  }

  StatementPipeline::Id QueueRecordStatement(const std::vector<size_t>& indices, const Statement& statement) {
    std::vector<std::string> id, org, project, user, cls, source, why, state, node, pool, placement, reason;
    std::vector<int64_t> priority, cpu, mem, gpus;
    std::vector<bool> placed;
    for (size_t i : indices) {
      const WorkspaceWrite& write = writes_[i];
      const core::Workspace& w = write.workspace;
      const bool places = Places(write.kind);
      id.push_back(w.id);
      org.push_back(w.org_id);
      project.push_back(w.project_id);
      user.push_back(w.user_id);
      cls.push_back(w.class_id);
      source.push_back(w.class_source);
      why.push_back(w.explanation);
      state.push_back(places ? "placed" : "pending");
      priority.push_back(w.priority);
      node.push_back(places ? w.node_name : "");
      pool.push_back(places ? w.pool : "");
      cpu.push_back(places ? w.cpu_millis : 0);
      mem.push_back(places ? w.memory_bytes : 0);
      gpus.push_back(places ? static_cast<int64_t>(w.gpu_uuids.size()) : 0);
      placement.push_back(places && w.hand_off ? documents::EncodeHandOff(*w.hand_off) : "");
      reason.push_back(places ? "" : w.pending_reason);
      placed.push_back(places);
    }
    return pipeline_.Execute(statement, TextArray(id), TextArray(org), TextArray(project), TextArray(user),
                             TextArray(cls), TextArray(source), TextArray(why), TextArray(state),
                             NumberArray(priority), TextArray(node), TextArray(pool), NumberArray(cpu),
                             NumberArray(mem), NumberArray(gpus), TextArray(placement), TextArray(reason),
                             BoolArray(placed));
  }

  // `result` returns (id, version, placed_at) of each write it landed; a
  // write it does not return lost to a concurrent insert of the same id.
  void ApplyRecords(const std::vector<size_t>& indices, const pqxx::result& result) {
    absl::flat_hash_map<std::string, std::pair<int64_t, int64_t>> landed;
    for (const auto& row : result) landed[row[0].c_str()] = {row[1].as<int64_t>(), row[2].as<int64_t>()};
    for (size_t i : indices) {
      const core::Workspace& w = writes_[i].workspace;
      auto it = landed.find(w.id);
      if (it == landed.end()) {
        out_[i].status = BasisChanged(i, MovedOn(w.id));
        continue;
      }
      out_[i].version = it->second.first;
      if (it->second.second != 0) out_[i].placed_at = absl::FromUnixMicros(it->second.second);
      auto was = current_.records.find(w.id);  // None for a new record.
      changes_.AddWorkspace(w.id, out_[i].version,
                            was == current_.records.end()
                                ? WorkspaceFacts{}
                                : FactsOf(was->second.workspace));
      if (Places(writes_[i].kind)) placed_.push_back(i);
    }
  }

  // Queued only: their results are checked with the COMMIT's.
  void QueueHoldsAndCapacity() {
    std::vector<std::string> uuids, nodes, holders;
    std::vector<int64_t> indices, instances, shares;
    for (size_t i : placed_) {
      const core::Workspace& w = writes_[i].workspace;
      capacity_[w.node_name].first += w.cpu_millis;
      capacity_[w.node_name].second += w.memory_bytes;
      auto add = [&](const std::string& uuid, int index, int instance, int sevenths) {
        uuids.push_back(uuid);
        nodes.push_back(w.node_name);
        indices.push_back(index);
        holders.push_back(w.id);
        instances.push_back(instance);
        shares.push_back(sevenths);
      };
      for (size_t g = 0; g < w.gpu_uuids.size() && g < w.gpu_indices.size(); ++g) {
        add(w.gpu_uuids[g], w.gpu_indices[g], -1, core::kMigComputeSlices);
      }
      if (w.slice)
        add(w.slice->uuid, w.slice->at.gpu_index, w.slice->at.gpu_instance,
            w.slice->compute_slices);
    }
    if (!uuids.empty()) {
      pipeline_.Execute(kHolds, TextArray(uuids), TextArray(nodes), NumberArray(indices),
                        TextArray(holders), NumberArray(instances), NumberArray(shares));
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
    pipeline_.Execute(kCapacity, TextArray(names), NumberArray(cpu), NumberArray(mem));
  }

  StatementPipeline pipeline_;
  const std::vector<WorkspaceWrite>& writes_;
  BatchStatements& stats_;
  BatchBudgets budgets_;
  std::vector<WriteOutcome> out_;
  ChangeSet changes_;
  Current current_;
  absl::flat_hash_set<std::string> written_;
  std::vector<size_t> stops_, records_, placed_;
  std::map<std::string, std::pair<int64_t, int64_t>> capacity_;  // Node -> (cpu, memory) delta.
};

}  // namespace

void PrepareWriteStatements(pqxx::connection_base& connection) {
  pqxx::nontransaction(connection).exec0("SET plan_cache_mode = force_generic_plan");
  for (const Statement* statement :
       {&kLockNodes, &LockRecordsStatement(), &kGuards, &kLockOrgs, &kOrgGpus, &BatchBudgets::SpentStatement(),
        &StopUsageStatement(), &kStop, &kStopHolds, &kInsert, &kRestart, &kQueuePlace, &kHolds,
        &kCapacity}) {
    StatementPipeline::Prepare(connection, *statement);
  }
  PreparePublish(connection);
}

std::vector<WriteOutcome> CommitWrites(pqxx::connection_base& connection,
                                       const std::vector<WorkspaceWrite>& writes,
                                       BatchStatements& stats, absl::Duration budget_interval) {
  pqxx::nontransaction session(connection);
  return Batch(session, writes, stats, budget_interval).Run();
}

}  // namespace wsched::store
