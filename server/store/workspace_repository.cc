#include "server/store/workspace_repository.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/store/change_feed.h"

namespace wsched::store {
namespace {

constexpr char kColumns[] =
    "w.id, w.org_id, w.project_id, w.user_id, w.class_id, w.class_source, w.explanation, "
    "w.state, w.priority, COALESCE(w.node_name, ''), COALESCE(w.pool, ''), w.cpu_millis, "
    "w.memory_bytes, COALESCE(w.placement::text, ''), w.pending_reason, "
    "extract(epoch from w.created_at)::float8, "
    "COALESCE(extract(epoch from w.placed_at)::float8, 0), "
    "COALESCE((SELECT string_agg(h.gpu_index::text || '/' || h.gpu_uuid, ',' ORDER BY "
    "h.gpu_index) FROM gpu_holds h WHERE h.workspace_id = w.id), '')";

absl::Time FromEpoch(const pqxx::field& field) {
  return absl::FromUnixMicros(static_cast<int64_t>(field.as<double>() * 1e6));
}

absl::StatusOr<core::Workspace> FromRow(const pqxx::row& row) {
  core::Workspace w;
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
  return w;
}

absl::StatusOr<std::vector<core::Workspace>> Rows(const pqxx::result& rows) {
  std::vector<core::Workspace> out;
  out.reserve(rows.size());
  for (const auto& row : rows) {
    auto w = FromRow(row);
    if (!w.ok()) return w.status();
    out.push_back(std::move(*w));
  }
  return out;
}

// Inserts the record, or revives a stopped/lost one under the same id.
// Zero rows means the id is pending or placed already.
bool UpsertRecord(pqxx::work& txn, const core::Workspace& w, bool placed) {
  pqxx::result rows = txn.exec_params(
      "INSERT INTO workspaces (id, org_id, project_id, user_id, class_id, class_source, "
      "explanation, state, priority, node_name, pool, cpu_millis, memory_bytes, gpu_count, "
      "placement, pending_reason, placed_at) "
      "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULLIF($10, ''), NULLIF($11, ''), $12, $13, "
      "$14, NULLIF($15, '')::jsonb, $16, CASE WHEN $17 THEN now() END) "
      "ON CONFLICT (id) DO UPDATE SET org_id = EXCLUDED.org_id, "
      "project_id = EXCLUDED.project_id, user_id = EXCLUDED.user_id, "
      "class_id = EXCLUDED.class_id, class_source = EXCLUDED.class_source, "
      "explanation = EXCLUDED.explanation, state = EXCLUDED.state, "
      "priority = EXCLUDED.priority, node_name = EXCLUDED.node_name, pool = EXCLUDED.pool, "
      "cpu_millis = EXCLUDED.cpu_millis, memory_bytes = EXCLUDED.memory_bytes, "
      "gpu_count = EXCLUDED.gpu_count, placement = EXCLUDED.placement, "
      "pending_reason = EXCLUDED.pending_reason, placed_at = EXCLUDED.placed_at, "
      "created_at = now(), stopped_at = NULL "
      "WHERE workspaces.state IN ('stopped', 'lost') "
      "   OR (workspaces.state = 'pending' AND EXCLUDED.state = 'placed') "
      "RETURNING id",
      w.id, w.org_id, w.project_id, w.user_id, w.class_id, w.class_source, w.explanation,
      core::WorkspaceStateName(w.state), w.priority, w.node_name, w.pool, w.cpu_millis,
      w.memory_bytes, static_cast<int>(w.gpu_indices.size()), w.placement_json,
      w.pending_reason, placed);
  return !rows.empty();
}

}  // namespace

absl::StatusOr<std::optional<core::Workspace>> LoadWorkspace(pqxx::work& txn,
                                                             const std::string& id) {
  pqxx::result rows =
      txn.exec_params(absl::StrCat("SELECT ", kColumns, " FROM workspaces w WHERE w.id = $1"), id);
  if (rows.empty()) return std::optional<core::Workspace>();
  auto w = FromRow(rows[0]);
  if (!w.ok()) return w.status();
  return std::optional<core::Workspace>(std::move(*w));
}

absl::StatusOr<std::vector<core::Workspace>> LoadWorkspacesInState(
    pqxx::work& txn, const std::vector<core::WorkspaceState>& states) {
  std::vector<std::string> names;
  for (auto state : states) names.push_back(absl::StrCat("'", core::WorkspaceStateName(state), "'"));
  return Rows(txn.exec(absl::StrCat("SELECT ", kColumns, " FROM workspaces w WHERE w.state IN (",
                                    absl::StrJoin(names, ","), ") AND w.stopped_at IS NULL "
                                    "ORDER BY w.created_at, w.id")));
}

absl::StatusOr<std::vector<core::Workspace>> ListWorkspaces(pqxx::work& txn,
                                                            const std::string& node,
                                                            const std::string& pool,
                                                            const std::string& state) {
  return Rows(txn.exec_params(
      absl::StrCat("SELECT ", kColumns,
                   " FROM workspaces w WHERE ($1 = '' OR w.node_name = $1) AND "
                   "($2 = '' OR w.pool = $2) AND ($3 = '' OR w.state = $3) "
                   "ORDER BY w.created_at, w.id LIMIT 10000"),
      node, pool, state));
}

absl::Status SavePending(pqxx::work& txn, const core::Workspace& workspace) {
  if (!UpsertRecord(txn, workspace, /*placed=*/false)) {
    return absl::AbortedError(absl::StrCat("workspace ", workspace.id, " is already active"));
  }
  NotifyChange(txn);
  return absl::OkStatus();
}

absl::Status CommitPlacement(pqxx::work& txn, const core::Workspace& w) {
  if (!UpsertRecord(txn, w, /*placed=*/true)) {
    return absl::AbortedError(
        absl::StrCat("workspace ", w.id, " was placed or changed by another request"));
  }
  // Guarded capacity: the check constraints refuse an overcommit, and the
  // state guard refuses a node that stopped taking work since the decision.
  pqxx::result node = txn.exec_params(
      "UPDATE nodes SET held_cpu_millis = held_cpu_millis + $2, "
      "held_memory_bytes = held_memory_bytes + $3 WHERE name = $1 AND state = 'ready' "
      "AND driver_state IN ('ready', 'not_needed') RETURNING name",
      w.node_name, w.cpu_millis, w.memory_bytes);
  if (node.empty()) {
    return absl::AbortedError(absl::StrCat("node ", w.node_name, " no longer takes workspaces"));
  }
  for (size_t i = 0; i < w.gpu_indices.size(); ++i) {
    // The primary key on gpu_uuid makes a second holder impossible.
    txn.exec_params(
        "INSERT INTO gpu_holds (gpu_uuid, node_name, gpu_index, workspace_id) "
        "VALUES ($1, $2, $3, $4)",
        w.gpu_uuids[i], w.node_name, w.gpu_indices[i], w.id);
  }
  NotifyChange(txn);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<core::Workspace>> StopWorkspace(pqxx::work& txn,
                                                             const std::string& id) {
  pqxx::result rows = txn.exec_params(
      absl::StrCat("SELECT ", kColumns, " FROM workspaces w WHERE w.id = $1 FOR UPDATE"), id);
  if (rows.empty()) return absl::NotFoundError(absl::StrCat("workspace ", id, " does not exist"));
  auto before = FromRow(rows[0]);
  if (!before.ok()) return before.status();
  if (before->state == core::WorkspaceState::kStopped) return std::optional<core::Workspace>();
  bool holds_capacity = before->state == core::WorkspaceState::kPlaced ||
                        (before->state == core::WorkspaceState::kLost &&
                         txn.exec_params("SELECT 1 FROM workspaces WHERE id = $1 AND "
                                         "stopped_at IS NULL AND node_name IS NOT NULL",
                                         id).size() == 1);
  txn.exec_params("DELETE FROM gpu_holds WHERE workspace_id = $1", id);
  if (holds_capacity) {
    txn.exec_params(
        "UPDATE nodes SET held_cpu_millis = GREATEST(held_cpu_millis - $2, 0), "
        "held_memory_bytes = GREATEST(held_memory_bytes - $3, 0) WHERE name = $1",
        before->node_name, before->cpu_millis, before->memory_bytes);
  }
  txn.exec_params(
      "UPDATE workspaces SET state = 'stopped', stopped_at = now() WHERE id = $1", id);
  NotifyChange(txn);
  return std::optional<core::Workspace>(std::move(*before));
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
