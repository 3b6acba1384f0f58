#include "server/store/workspace_repository.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace wsched::store {
namespace {

constexpr char kColumns[] =
    "w.id, w.org_id, w.project_id, w.user_id, w.class_id, w.class_source, w.explanation, "
    "w.state, w.priority, COALESCE(w.node_name, ''), COALESCE(w.pool, ''), w.cpu_millis, "
    "w.memory_bytes, COALESCE(w.placement::text, ''), w.pending_reason, "
    "extract(epoch from w.created_at)::float8, "
    "COALESCE(extract(epoch from w.placed_at)::float8, 0), "
    "COALESCE((SELECT string_agg(h.gpu_index::text || '/' || h.gpu_uuid, ',' ORDER BY "
    "h.gpu_index) FROM gpu_holds h WHERE h.workspace_id = w.id), ''), w.version, "
    "w.stopped_at IS NOT NULL";

absl::Time FromEpoch(const pqxx::field& field) {
  return absl::FromUnixMicros(static_cast<int64_t>(field.as<double>() * 1e6));
}

absl::StatusOr<WorkspaceRow> FromRow(const pqxx::row& row) {
  WorkspaceRow out;
  core::Workspace& w = out.workspace;
  w.id = row[0].c_str();
  w.org_id = row[1].c_str();
  w.project_id = row[2].c_str();
  w.user_id = row[3].c_str();
  w.class_id = row[4].c_str();
  w.class_source = row[5].c_str();
  w.explanation = row[6].c_str();
  auto state = core::ParseWorkspaceState(row[7].c_str());
  if (!state) return absl::DataLossError(absl::StrCat("workspace ", w.id, " has an unknown state"));
  w.state = *state;
  w.priority = row[8].as<int>();
  w.node_name = row[9].c_str();
  w.pool = row[10].c_str();
  w.cpu_millis = row[11].as<int64_t>();
  w.memory_bytes = row[12].as<int64_t>();
  w.placement_json = row[13].c_str();
  w.pending_reason = row[14].c_str();
  w.created_at = FromEpoch(row[15]);
  if (row[16].as<double>() > 0) w.placed_at = FromEpoch(row[16]);
  for (absl::string_view gpu : absl::StrSplit(row[17].c_str(), ',', absl::SkipEmpty())) {
    std::pair<std::string, std::string> parts = absl::StrSplit(gpu, absl::MaxSplits('/', 1));
    int index = 0;
    if (!absl::SimpleAtoi(parts.first, &index)) continue;
    w.gpu_indices.push_back(index);
    w.gpu_uuids.push_back(parts.second);
  }
  out.version = row[18].as<int64_t>();
  out.released = row[19].as<bool>();
  return out;
}

absl::StatusOr<std::vector<WorkspaceRow>> Rows(const pqxx::result& rows) {
  std::vector<WorkspaceRow> out;
  out.reserve(rows.size());
  for (const auto& row : rows) {
    auto w = FromRow(row);
    if (!w.ok()) return w.status();
    out.push_back(std::move(*w));
  }
  return out;
}

// Writes a new record (from.version 0) or restarts the released record of
// exactly version `from.version`. Returns the new version; 0 when the record
// is not the one the decision saw (active, or changed since).
int64_t WriteRecord(pqxx::work& txn, const core::Workspace& w, DecidedFrom from, bool placed) {
  const std::string columns =
      "org_id, project_id, user_id, class_id, class_source, explanation, state, priority, "
      "node_name, pool, cpu_millis, memory_bytes, gpu_count, placement, pending_reason, placed_at";
  const std::string values =
      "$2, $3, $4, $5, $6, $7, $8, $9, NULLIF($10, ''), NULLIF($11, ''), $12, $13, $14, "
      "NULLIF($15, '')::jsonb, $16, CASE WHEN $17 THEN now() END";
  std::string sql =
      from.version == 0
          ? absl::StrCat("INSERT INTO workspaces (id, ", columns, ", version) SELECT $1, ", values,
                         ", nextval('entity_versions') WHERE $18::bigint = 0 "
                         "ON CONFLICT (id) DO NOTHING RETURNING version")
          : absl::StrCat("UPDATE workspaces SET (", columns, ", created_at, stopped_at, version) = (",
                         values, ", now(), NULL, nextval('entity_versions')) WHERE id = $1 AND "
                         "version = $18 AND stopped_at IS NOT NULL RETURNING version");
  pqxx::result rows = txn.exec_params(
      sql, w.id, w.org_id, w.project_id, w.user_id, w.class_id, w.class_source, w.explanation,
      core::WorkspaceStateName(w.state), w.priority, w.node_name, w.pool, w.cpu_millis,
      w.memory_bytes, static_cast<int>(w.gpu_indices.size()), w.placement_json, w.pending_reason,
      placed, from.version);
  return rows.empty() ? 0 : rows[0][0].as<int64_t>();
}

// Moves exactly the pending record of version `from.version` to placed.
int64_t PlacePendingRecord(pqxx::work& txn, const core::Workspace& w, DecidedFrom from) {
  pqxx::result rows = txn.exec_params(
      "UPDATE workspaces SET state = 'placed', node_name = $2, pool = $3, cpu_millis = $4, "
      "memory_bytes = $5, gpu_count = $6, placement = NULLIF($7, '')::jsonb, pending_reason = '', "
      "placed_at = now(), version = nextval('entity_versions') "
      "WHERE id = $1 AND state = 'pending' AND version = $8 RETURNING version",
      w.id, w.node_name, w.pool, w.cpu_millis, w.memory_bytes,
      static_cast<int>(w.gpu_indices.size()), w.placement_json, from.version);
  return rows.empty() ? 0 : rows[0][0].as<int64_t>();
}

absl::Status MovedOn(const std::string& id) {
  return absl::AbortedError(
      absl::StrCat("workspace ", id, " was changed by another request since this decision"));
}

}  // namespace

absl::StatusOr<std::optional<WorkspaceRow>> LoadWorkspace(pqxx::work& txn,
                                                         const std::string& id) {
  pqxx::result rows =
      txn.exec_params(absl::StrCat("SELECT ", kColumns, " FROM workspaces w WHERE w.id = $1"), id);
  if (rows.empty()) return std::optional<WorkspaceRow>();
  auto w = FromRow(rows[0]);
  if (!w.ok()) return w.status();
  return std::optional<WorkspaceRow>(std::move(*w));
}

absl::StatusOr<std::vector<WorkspaceRow>> LoadWorkspaces(pqxx::work& txn,
                                                        const std::vector<std::string>& ids) {
  return Rows(txn.exec_params(
      absl::StrCat("SELECT ", kColumns, " FROM workspaces w WHERE w.id = ANY($1::text[])"),
      TextArray(ids)));
}

absl::StatusOr<std::vector<WorkspaceRow>> LoadActiveWorkspaces(pqxx::work& txn) {
  return Rows(txn.exec(absl::StrCat(
      "SELECT ", kColumns, " FROM workspaces w WHERE w.state IN ('pending', 'placed', 'lost') "
      "AND w.stopped_at IS NULL ORDER BY w.created_at, w.id")));
}

absl::StatusOr<std::vector<core::Workspace>> ListWorkspaces(pqxx::work& txn,
                                                            const std::string& node,
                                                            const std::string& pool,
                                                            const std::string& state) {
  auto rows = Rows(txn.exec_params(
      absl::StrCat("SELECT ", kColumns,
                   " FROM workspaces w WHERE ($1 = '' OR w.node_name = $1) AND "
                   "($2 = '' OR w.pool = $2) AND ($3 = '' OR w.state = $3) "
                   "ORDER BY w.created_at, w.id LIMIT 10000"),
      node, pool, state));
  if (!rows.ok()) return rows.status();
  std::vector<core::Workspace> out;
  out.reserve(rows->size());
  for (auto& row : *rows) out.push_back(std::move(row.workspace));
  return out;
}

absl::StatusOr<int64_t> SavePending(pqxx::work& txn, const core::Workspace& workspace,
                                    DecidedFrom from, ChangeSet& changes) {
  int64_t version = WriteRecord(txn, workspace, from, /*placed=*/false);
  if (version == 0) return MovedOn(workspace.id);
  changes.Add(Entity::kWorkspace, workspace.id, version);
  return version;
}

absl::StatusOr<int64_t> CommitPlacement(pqxx::work& txn, const core::Workspace& w,
                                        DecidedFrom from, ChangeSet& changes) {
  // The node row first (see StopWorkspace), and the guard: it refuses a node
  // that stopped taking work since the decision.
  pqxx::result node = txn.exec_params(
      "SELECT 1 FROM nodes WHERE name = $1 AND state = 'ready' "
      "AND driver_state IN ('ready', 'not_needed') FOR UPDATE", w.node_name);
  if (node.empty()) {
    return absl::AbortedError(absl::StrCat("node ", w.node_name, " no longer takes workspaces"));
  }
  int64_t version = from.pending ? PlacePendingRecord(txn, w, from)
                                 : WriteRecord(txn, w, from, /*placed=*/true);
  if (version == 0) return MovedOn(w.id);
  // Guarded capacity: the check constraints refuse an overcommit.
  txn.exec_params(
      "UPDATE nodes SET held_cpu_millis = held_cpu_millis + $2, "
      "held_memory_bytes = held_memory_bytes + $3 WHERE name = $1",
      w.node_name, w.cpu_millis, w.memory_bytes);
  for (size_t i = 0; i < w.gpu_indices.size(); ++i) {
    // The primary key on gpu_uuid makes a second holder impossible.
    txn.exec_params(
        "INSERT INTO gpu_holds (gpu_uuid, node_name, gpu_index, workspace_id) "
        "VALUES ($1, $2, $3, $4)",
        w.gpu_uuids[i], w.node_name, w.gpu_indices[i], w.id);
  }
  changes.Add(Entity::kWorkspace, w.id, version);
  return version;
}

absl::StatusOr<WorkspaceRow> StopWorkspace(pqxx::work& txn, const std::string& id,
                                           ChangeSet& changes) {
  // Lock order: node row, then workspace row, as placements take them, so
  // a stop and a group commit never wait on each other in a cycle.
  txn.exec_params("SELECT 1 FROM nodes WHERE name = (SELECT node_name FROM workspaces "
                  "WHERE id = $1) FOR UPDATE", id);
  pqxx::result rows = txn.exec_params(
      absl::StrCat("SELECT ", kColumns, " FROM workspaces w WHERE w.id = $1 FOR UPDATE"), id);
  if (rows.empty()) return absl::NotFoundError(absl::StrCat("workspace ", id, " does not exist"));
  auto row = FromRow(rows[0]);
  if (!row.ok()) return row.status();
  core::Workspace& w = row->workspace;
  if (w.state == core::WorkspaceState::kStopped) return row;
  bool holds_capacity = !row->released && (w.state == core::WorkspaceState::kPlaced ||
                                           w.state == core::WorkspaceState::kLost);
  txn.exec_params("DELETE FROM gpu_holds WHERE workspace_id = $1", id);
  if (holds_capacity) {
    txn.exec_params(
        "UPDATE nodes SET held_cpu_millis = GREATEST(held_cpu_millis - $2, 0), "
        "held_memory_bytes = GREATEST(held_memory_bytes - $3, 0) WHERE name = $1",
        w.node_name, w.cpu_millis, w.memory_bytes);
  }
  row->version = txn.exec_params1(
      "UPDATE workspaces SET state = 'stopped', stopped_at = COALESCE(stopped_at, now()), "
      "version = nextval('entity_versions') WHERE id = $1 RETURNING version", id)[0].as<int64_t>();
  w.state = core::WorkspaceState::kStopped;
  row->released = true;
  changes.Add(Entity::kWorkspace, id, row->version);
  return row;
}

int64_t OrgGpusHeld(pqxx::work& txn, const std::string& org_id) {
  return txn
      .exec_params("SELECT count(*) FROM gpu_holds h JOIN workspaces w ON w.id = h.workspace_id "
                   "WHERE w.org_id = $1",
                   org_id)[0][0]
      .as<int64_t>();
}

void LockOrg(pqxx::work& txn, const std::string& org_id) {
  txn.exec_params("SELECT pg_advisory_xact_lock(hashtextextended('org:' || $1, 0))", org_id);
}

}  // namespace wsched::store
