#include "server/store/node_repository.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/store/documents/documents.h"
#include "server/store/usage_repository.h"

namespace wsched::store {
namespace {

// The columns of a StoredNode (table alias `n`), around its last heartbeat,
// which lives apart (node_liveness `l`, or the change log's stored row).
#define WSCHED_NODE_COLUMNS_BEFORE_HEARTBEAT                                   \
  "n.info::text, n.state, n.driver_state, n.driver_detail, "                   \
  "n.driver_verified_kernel, "                                                 \
  "n.driver_failed_kernel, extract(epoch from n.registered_at)::float8, "
#define WSCHED_NODE_COLUMNS_AFTER_HEARTBEAT                                    \
  ", n.held_cpu_millis, "                                                      \
  "n.held_memory_bytes, n.version, n.name, n.info_schema, "                    \
  "n.driver_installing_kernel, "                                               \
  "n.driver_failure, n.driver_released, "                                      \
  "COALESCE(extract(epoch from n.driver_released_at)::float8, 'NaN'::float8)"
constexpr char kNodeColumns[] = WSCHED_NODE_COLUMNS_BEFORE_HEARTBEAT
    "COALESCE(extract(epoch from l.last_heartbeat)::float8, "
    "0)" WSCHED_NODE_COLUMNS_AFTER_HEARTBEAT;
// Seconds since the epoch as text; "" (stored as NULL) when the node was
// never released.
std::string ReleasedAtSeconds(const core::DriverHistory& history) {
  if (history.released_at == absl::InfinitePast()) return "";
  return absl::StrFormat("%.6f", absl::ToDoubleSeconds(history.released_at - absl::UnixEpoch()));
}

constexpr char kFrom[] = " FROM nodes n LEFT JOIN node_liveness l ON l.name = n.name ";

} // namespace

std::string NodeColumnsOverStoredRow(absl::string_view heartbeat_sql) {
  return absl::StrCat(WSCHED_NODE_COLUMNS_BEFORE_HEARTBEAT, heartbeat_sql,
                      WSCHED_NODE_COLUMNS_AFTER_HEARTBEAT);
}

#undef WSCHED_NODE_COLUMNS_BEFORE_HEARTBEAT
#undef WSCHED_NODE_COLUMNS_AFTER_HEARTBEAT

absl::StatusOr<StoredNode> NodeRowOf(const pqxx::row &row) {
  StoredNode node;
  auto info = documents::DecodeNodeInfo(row[0].c_str(), {"nodes", row[11].c_str(), row[12].as<int>()});
  if (!info.ok()) return info.status();
  node.info = std::move(*info);
  auto state = core::ParseNodeState(row[1].c_str());
  auto driver = core::ParseDriverState(row[2].c_str());
  if (!state || !driver) {
    return absl::DataLossError(absl::StrCat("node ", node.info.name, " has an unknown state"));
  }
  node.state = *state;
  node.driver_state = *driver;
  node.driver_detail = row[3].c_str();
  node.driver_history.verified_kernel = row[4].c_str();
  node.driver_history.failed_kernel = row[5].c_str();
  node.driver_history.installing_kernel = row[13].c_str();
  node.driver_history.failure = row[14].c_str();
  node.driver_history.released_driver = row[15].c_str();
  const double released_at = row[16].as<double>();
  if (!std::isnan(released_at)) {
    node.driver_history.released_at = absl::FromUnixMicros(static_cast<int64_t>(released_at * 1e6));
  }
  node.registered_at = absl::FromUnixMicros(static_cast<int64_t>(row[6].as<double>() * 1e6));
  node.last_heartbeat = absl::FromUnixMicros(static_cast<int64_t>(row[7].as<double>() * 1e6));
  node.held_cpu_millis = row[8].as<int64_t>();
  node.held_memory_bytes = row[9].as<int64_t>();
  node.version = row[10].as<int64_t>();
  return node;
}

absl::StatusOr<std::optional<StoredNode>> LoadNode(pqxx::work& txn, const std::string& name,
                                                   bool for_update) {
  pqxx::result rows = txn.exec_params(
      absl::StrCat("SELECT ", kNodeColumns, kFrom, "WHERE n.name = $1",
                   for_update ? " FOR UPDATE OF n" : ""),
      name);
  if (rows.empty()) return std::optional<StoredNode>();
  auto node = NodeRowOf(rows[0]);
  if (!node.ok()) return node.status();
  return std::optional<StoredNode>(std::move(*node));
}

namespace {

absl::StatusOr<std::vector<StoredNode>> NodeRows(const pqxx::result& rows) {
  std::vector<StoredNode> nodes;
  nodes.reserve(rows.size());
  for (const auto& row : rows) {
    auto node = NodeRowOf(row);
    if (!node.ok()) return node.status();
    nodes.push_back(std::move(*node));
  }
  return nodes;
}

// The lost workspaces on `node` get a new version each and are published.
// `rows` are (id, version, state before, org, project, pool, node,
// class): a loss
// changes the state only.
constexpr char kReturnedFacts[] =
    "RETURNING w.id, w.version, o.state, w.org_id, w.project_id, COALESCE(w.pool, ''), "
    "COALESCE(w.node_name, ''), w.class_id";
void PublishWorkspaces(const pqxx::result& rows, ChangeSet& changes) {
  for (const auto& row : rows) {
    changes.AddWorkspace(row[0].c_str(), row[1].as<int64_t>(),
                         {row[2].c_str(), row[3].c_str(), row[4].c_str(), row[5].c_str(),
                          row[6].c_str(), row[7].c_str()});
  }
}

}  // namespace

absl::StatusOr<std::vector<StoredNode>> LoadNodes(pqxx::work& txn, const std::string& pool) {
  return NodeRows(
      txn.exec_params(absl::StrCat("SELECT ", kNodeColumns, kFrom,
                                   "WHERE $1 = '' OR n.pool = $1 ORDER BY n.name"),
                      pool));
}

absl::StatusOr<std::vector<StoredNode>> LoadNodesPage(pqxx::work& txn, const std::string& pool,
                                                     const std::string& after_name, int limit) {
  return NodeRows(txn.exec_params(
      absl::StrCat("SELECT ", kNodeColumns, kFrom,
                   "WHERE ($1 = '' OR n.pool = $1) AND n.name > $2 ORDER BY n.name LIMIT $3"),
      pool, after_name, limit));
}

absl::StatusOr<std::vector<StoredNode>>
ListSelectedNodes(pqxx::work &txn, const std::string &pool,
                  const std::string &name) {
  return NodeRows(
      txn.exec_params(absl::StrCat("SELECT ", kNodeColumns, kFrom,
                                   "WHERE ($1 = '' OR n.pool = $1) AND ($2 = "
                                   "'' OR n.name = $2) ORDER BY n.name"),
                      pool, name));
}

absl::StatusOr<std::vector<StoredNode>> LoadNodesByName(pqxx::work& txn,
                                                       const std::vector<std::string>& names) {
  return NodeRows(txn.exec_params(
      absl::StrCat("SELECT ", kNodeColumns, kFrom, "WHERE n.name = ANY($1::text[])"),
      TextArray(names)));
}

int64_t SaveNode(pqxx::work& txn, const StoredNode& node, ChangeSet& changes) {
  pqxx::row saved = txn.exec_params1(
      "INSERT INTO nodes (name, pool, info, state, driver_state, "
      "driver_detail, "
      "driver_verified_kernel, driver_failed_kernel, alloc_cpu_millis, "
      "alloc_memory_bytes, "
      "registered_at, version, info_schema, driver_installing_kernel, "
      "driver_failure, "
      "driver_released, driver_released_at) "
      "VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7, $8, $9, $10, now(), "
      "nextval('entity_versions'), "
      "$11, $12, $13, $14, to_timestamp(NULLIF($15, '')::float8)) ON CONFLICT "
      "(name) DO UPDATE SET pool = EXCLUDED.pool, info = EXCLUDED.info, "
      "info_schema = EXCLUDED.info_schema, "
      "state = EXCLUDED.state, driver_state = EXCLUDED.driver_state, "
      "driver_detail = EXCLUDED.driver_detail, "
      "driver_verified_kernel = EXCLUDED.driver_verified_kernel, "
      "driver_failed_kernel = EXCLUDED.driver_failed_kernel, "
      "driver_installing_kernel = EXCLUDED.driver_installing_kernel, "
      "driver_failure = EXCLUDED.driver_failure, "
      "driver_released = EXCLUDED.driver_released, "
      "driver_released_at = EXCLUDED.driver_released_at, "
      "alloc_cpu_millis = EXCLUDED.alloc_cpu_millis, "
      "alloc_memory_bytes = EXCLUDED.alloc_memory_bytes, version = "
      "EXCLUDED.version "
      // xmax is 0 only for a row this statement inserted: a registration.
      "RETURNING version, xmax = 0",
      node.info.name, node.info.pool, documents::EncodeNodeInfo(node.info),
      core::NodeStateName(node.state), core::DriverStateName(node.driver_state),
      node.driver_detail, node.driver_history.verified_kernel,
      node.driver_history.failed_kernel, node.info.cpu_millis,
      node.info.memory_bytes, documents::kSchemaVersion,
      node.driver_history.installing_kernel, node.driver_history.failure,
      node.driver_history.released_driver,
      ReleasedAtSeconds(node.driver_history));
  const int64_t version = saved[0].as<int64_t>();
  txn.exec_params(
      "INSERT INTO node_liveness (name, last_heartbeat) VALUES ($1, now()) "
      "ON CONFLICT (name) DO UPDATE SET last_heartbeat = now()",
      node.info.name);
  changes.AddNode(node.info.name, version, node.info.pool,
                  /*created=*/saved[1].as<bool>());
  return version;
}

int64_t SetNodeState(pqxx::work& txn, const std::string& name, core::NodeState state,
                     ChangeSet& changes) {
  pqxx::row row = txn.exec_params1("UPDATE nodes SET state = $2, version = "
                                   "nextval('entity_versions') WHERE name = $1 "
                                   "RETURNING version, pool",
                                   name, core::NodeStateName(state));
  const int64_t version = row[0].as<int64_t>();
  changes.AddNode(name, version, row[1].c_str());
  return version;
}

int64_t RecordHeartbeats(pqxx::work& txn, const std::vector<std::string>& names) {
  return txn
      .exec_params("UPDATE node_liveness SET last_heartbeat = now() WHERE name = ANY($1::text[])",
                   TextArray(names))
      .affected_rows();
}

std::vector<std::string> MarkLostNodes(pqxx::work& txn, absl::Duration timeout,
                                       ChangeSet& changes) {
  std::vector<std::string> lost;
  for (const auto &row :
       txn.exec_params("UPDATE nodes n SET state = 'lost', version = "
                       "nextval('entity_versions') "
                       "FROM node_liveness l WHERE l.name = n.name AND n.state "
                       "<> 'lost' AND "
                       "l.last_heartbeat < now() - make_interval(secs => $1) "
                       "RETURNING n.name, n.version, n.pool",
                       absl::ToDoubleSeconds(timeout))) {
    lost.push_back(row[0].c_str());
    changes.AddNode(row[0].c_str(), row[1].as<int64_t>(), row[2].c_str());
  }
  if (lost.empty()) return lost;
  // Their placements end now: the usage records first, while the rows
  // still say placed.
  static const std::string* usage =
      new std::string(UsageInsertSql("'lost'", "WHERE w.node_name = ANY($1::text[])"));
  txn.exec_params(*usage, TextArray(lost));
  PublishWorkspaces(
      txn.exec_params(
          absl::StrCat("UPDATE workspaces w SET state = 'lost', pending_reason = 'node ' || "
                       "w.node_name || ' was lost', version = nextval('entity_versions') "
                       "FROM (SELECT id, state FROM workspaces WHERE node_name = ANY($1::text[]) "
                       "AND state = 'placed' FOR UPDATE) o WHERE w.id = o.id ",
                       kReturnedFacts),
          TextArray(lost)),
      changes);
  return lost;
}

std::vector<std::string> ReleaseLostWorkspaces(pqxx::work& txn, const std::string& node,
                                               ChangeSet& changes) {
  std::vector<std::string> ids;
  for (const auto& row : txn.exec_params(
           "SELECT id, cpu_millis, memory_bytes FROM workspaces "
           "WHERE node_name = $1 AND state = 'lost' AND stopped_at IS NULL FOR UPDATE",
           node)) {
    ids.push_back(row[0].c_str());
    txn.exec_params("DELETE FROM gpu_holds WHERE workspace_id = $1", row[0].c_str());
    txn.exec_params(
        "UPDATE nodes SET held_cpu_millis = held_cpu_millis - $2, "
        "held_memory_bytes = held_memory_bytes - $3 WHERE name = $1",
        node, row[1].as<int64_t>(), row[2].as<int64_t>());
    PublishWorkspaces(
        txn.exec_params(absl::StrCat("UPDATE workspaces w SET stopped_at = now(), "
                                     "version = nextval('entity_versions') FROM (SELECT id, state "
                                     "FROM workspaces WHERE id = $1) o WHERE w.id = o.id ",
                                     kReturnedFacts),
                        row[0].c_str()),
        changes);
  }
  return ids;
}

std::vector<std::string> DeleteNode(pqxx::work& txn, const std::string& name, ChangeSet& changes) {
  std::vector<std::string> ids;
  // Placements on it end now (lost ones ended when the node was lost).
  static const std::string* usage =
      new std::string(UsageInsertSql("'node_removed'", "WHERE w.node_name = $1"));
  txn.exec_params(*usage, name);
  pqxx::result lost = txn.exec_params(
      absl::StrCat("UPDATE workspaces w SET state = 'lost', "
                   "stopped_at = COALESCE(w.stopped_at, GREATEST(now(), w.placed_at)), "
                   "pending_reason = 'node ' || $1 || ' was removed', "
                   "version = nextval('entity_versions') FROM (SELECT id, state FROM workspaces "
                   "WHERE node_name = $1 AND state IN ('placed', 'lost') FOR UPDATE) o "
                   "WHERE w.id = o.id ",
                   kReturnedFacts),
      name);
  for (const auto& row : lost) ids.push_back(row[0].c_str());
  PublishWorkspaces(lost, changes);
  txn.exec_params("DELETE FROM gpu_holds WHERE node_name = $1", name);
  pqxx::result removed =
      txn.exec_params("DELETE FROM nodes WHERE name = $1 RETURNING pool", name);
  // No row carries it any more: a fresh version tells followers to forget
  // it, and its pool the streams that follow the pool.
  changes.AddNode(name, NextVersion(txn),
                  removed.empty() ? "" : removed[0][0].c_str());
  return ids;
}

std::map<std::string, int> WorkspaceCountsOnNodes(pqxx::work& txn, const std::vector<std::string>& nodes) {
  std::map<std::string, int> counts;
  for (const auto& row : txn.exec_params(
           "SELECT node_name, count(*) FROM workspaces WHERE node_name IS NOT NULL AND "
           "(cardinality($1::text[]) = 0 OR node_name = ANY($1::text[])) AND "
           "state IN ('placed', 'lost') AND stopped_at IS NULL GROUP BY node_name",
           TextArray(nodes))) {
    counts[row[0].c_str()] = row[1].as<int>();
  }
  return counts;
}

std::vector<std::pair<std::string, std::string>> GpuHolders(pqxx::work& txn,
                                                            const std::string& node) {
  std::vector<std::pair<std::string, std::string>> holders;
  pqxx::result rows =
      node.empty() ? txn.exec("SELECT gpu_uuid, workspace_id FROM gpu_holds")
                   : txn.exec_params(
                         "SELECT gpu_uuid, workspace_id FROM gpu_holds WHERE node_name = $1", node);
  for (const auto& row : rows) holders.emplace_back(row[0].c_str(), row[1].c_str());
  return holders;
}

std::vector<DriverRolloutRow> LoadDriverRollouts(pqxx::work& txn, const std::string& pool,
                                                 bool for_update) {
  std::vector<DriverRolloutRow> out;
  for (const auto& row : txn.exec_params(
           absl::StrCat("SELECT pool, canary, paused, reason, canary_failure_seen, "
                        "extract(epoch from updated_at)::float8 FROM driver_rollouts "
                        "WHERE $1 = '' OR pool = $1 ORDER BY pool",
                        for_update ? " FOR UPDATE" : ""),
           pool)) {
    DriverRolloutRow rollout;
    rollout.pool = row[0].c_str();
    rollout.record.canary = row[1].c_str();
    rollout.record.paused = row[2].as<bool>();
    rollout.record.reason = row[3].c_str();
    rollout.record.canary_failure_seen = row[4].as<bool>();
    rollout.updated_at = absl::FromUnixMicros(static_cast<int64_t>(row[5].as<double>() * 1e6));
    out.push_back(std::move(rollout));
  }
  return out;
}

void SaveDriverRollout(pqxx::work& txn, const std::string& pool, const core::RolloutRecord& record) {
  txn.exec_params(
      "INSERT INTO driver_rollouts (pool, canary, paused, reason, canary_failure_seen, updated_at) "
      "VALUES ($1, $2, $3, $4, $5, now()) ON CONFLICT (pool) DO UPDATE SET "
      "canary = EXCLUDED.canary, paused = EXCLUDED.paused, reason = EXCLUDED.reason, "
      "canary_failure_seen = EXCLUDED.canary_failure_seen, updated_at = now()",
      pool, record.canary, record.paused, record.reason, record.canary_failure_seen);
}

bool DeleteDriverRollout(pqxx::work& txn, const std::string& pool) {
  return txn.exec_params("DELETE FROM driver_rollouts WHERE pool = $1", pool).affected_rows() > 0;
}

std::optional<IdentityClaim> FindIdentityClaim(pqxx::work& txn, const std::string& name,
                                               const std::string& provider_id,
                                               const std::vector<std::string>& gpu_uuids) {
  txn.exec("SELECT pg_advisory_xact_lock(hashtext('wsched node identity'))");
  pqxx::result rows = txn.exec_params(
      "SELECT n.name, CASE WHEN $2 <> '' AND n.info->>'provider_id' = $2 THEN 'provider_id' "
      "ELSE (SELECT g->>'uuid' FROM jsonb_array_elements(n.info->'gpus') g "
      "      WHERE g->>'uuid' = ANY($3::text[]) ORDER BY g->>'uuid' LIMIT 1) END "
      // Both by index (migrations/0017): an equal provider id, or any of
      // the UUIDs among the node's.
      "FROM nodes n WHERE n.name <> $1 AND ("
      "  ($2 <> '' AND n.info->>'provider_id' = $2) OR n.gpu_uuids ?| $3::text[]) "
      "ORDER BY n.name LIMIT 1",
      name, provider_id, TextArray(gpu_uuids));
  if (rows.empty()) return std::nullopt;
  return IdentityClaim{rows[0][0].c_str(), rows[0][1].c_str()};
}

}  // namespace wsched::store
