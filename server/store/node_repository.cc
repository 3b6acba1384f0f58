#include "server/store/node_repository.h"

#include "absl/strings/str_cat.h"
#include "server/convert/convert.h"
#include "server/store/change_feed.h"

namespace wsched::store {
namespace {

constexpr char kNodeColumns[] =
    "info::text, state, driver_state, driver_detail, driver_verified_kernel, "
    "driver_failed_kernel, extract(epoch from registered_at)::float8, "
    "extract(epoch from last_heartbeat)::float8, held_cpu_millis, held_memory_bytes";

absl::StatusOr<StoredNode> FromRow(const pqxx::row& row) {
  StoredNode node;
  v1::NodeInfo proto;
  if (absl::Status s = convert::FromJson(row[0].c_str(), &proto); !s.ok()) return s;
  node.info = convert::FromProto(proto);
  auto state = core::ParseNodeState(row[1].c_str());
  auto driver = core::ParseDriverState(row[2].c_str());
  if (!state || !driver) {
    return absl::DataLossError(absl::StrCat("node ", node.info.name, " has an unknown state"));
  }
  node.state = *state;
  node.driver_state = *driver;
  node.driver_detail = row[3].c_str();
  node.driver_history = {row[4].c_str(), row[5].c_str()};
  node.registered_at = absl::FromUnixMicros(static_cast<int64_t>(row[6].as<double>() * 1e6));
  node.last_heartbeat = absl::FromUnixMicros(static_cast<int64_t>(row[7].as<double>() * 1e6));
  node.held_cpu_millis = row[8].as<int64_t>();
  node.held_memory_bytes = row[9].as<int64_t>();
  return node;
}

}  // namespace

absl::StatusOr<std::optional<StoredNode>> LoadNode(pqxx::work& txn, const std::string& name,
                                                   bool for_update) {
  pqxx::result rows = txn.exec_params(
      absl::StrCat("SELECT ", kNodeColumns, " FROM nodes WHERE name = $1",
                   for_update ? " FOR UPDATE" : ""),
      name);
  if (rows.empty()) return std::optional<StoredNode>();
  auto node = FromRow(rows[0]);
  if (!node.ok()) return node.status();
  return std::optional<StoredNode>(std::move(*node));
}

absl::StatusOr<std::vector<StoredNode>> LoadNodes(pqxx::work& txn, const std::string& pool) {
  pqxx::result rows =
      pool.empty()
          ? txn.exec(absl::StrCat("SELECT ", kNodeColumns, " FROM nodes ORDER BY name"))
          : txn.exec_params(
                absl::StrCat("SELECT ", kNodeColumns, " FROM nodes WHERE pool = $1 ORDER BY name"),
                pool);
  std::vector<StoredNode> nodes;
  nodes.reserve(rows.size());
  for (const auto& row : rows) {
    auto node = FromRow(row);
    if (!node.ok()) return node.status();
    nodes.push_back(std::move(*node));
  }
  return nodes;
}

void SaveNode(pqxx::work& txn, const StoredNode& node) {
  txn.exec_params(
      "INSERT INTO nodes (name, pool, info, state, driver_state, driver_detail, "
      "driver_verified_kernel, driver_failed_kernel, alloc_cpu_millis, alloc_memory_bytes, "
      "registered_at, last_heartbeat) "
      "VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7, $8, $9, $10, now(), now()) "
      "ON CONFLICT (name) DO UPDATE SET pool = EXCLUDED.pool, info = EXCLUDED.info, "
      "state = EXCLUDED.state, driver_state = EXCLUDED.driver_state, "
      "driver_detail = EXCLUDED.driver_detail, "
      "driver_verified_kernel = EXCLUDED.driver_verified_kernel, "
      "driver_failed_kernel = EXCLUDED.driver_failed_kernel, "
      "alloc_cpu_millis = EXCLUDED.alloc_cpu_millis, "
      "alloc_memory_bytes = EXCLUDED.alloc_memory_bytes, last_heartbeat = now()",
      node.info.name, node.info.pool, convert::ToJson(convert::ToProto(node.info)),
      core::NodeStateName(node.state), core::DriverStateName(node.driver_state),
      node.driver_detail, node.driver_history.verified_kernel, node.driver_history.failed_kernel,
      node.info.cpu_millis, node.info.memory_bytes);
  NotifyChange(txn);
}

void SetNodeState(pqxx::work& txn, const std::string& name, core::NodeState state) {
  txn.exec_params("UPDATE nodes SET state = $2 WHERE name = $1", name,
                  core::NodeStateName(state));
  NotifyChange(txn);
}

std::vector<std::string> MarkLostNodes(pqxx::work& txn, absl::Duration timeout) {
  std::vector<std::string> lost;
  for (const auto& row : txn.exec_params(
           "UPDATE nodes SET state = 'lost' WHERE state <> 'lost' AND "
           "last_heartbeat < now() - make_interval(secs => $1) RETURNING name",
           absl::ToDoubleSeconds(timeout))) {
    lost.push_back(row[0].c_str());
  }
  if (!lost.empty()) NotifyChange(txn);
  for (const std::string& name : lost) {
    txn.exec_params(
        "UPDATE workspaces SET state = 'lost', pending_reason = 'node ' || $1 || ' was lost' "
        "WHERE node_name = $1 AND state = 'placed'",
        name);
  }
  return lost;
}

std::vector<std::string> ReleaseLostWorkspaces(pqxx::work& txn, const std::string& node) {
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
    txn.exec_params("UPDATE workspaces SET stopped_at = now() WHERE id = $1", row[0].c_str());
  }
  return ids;
}

std::vector<std::string> DeleteNode(pqxx::work& txn, const std::string& name) {
  std::vector<std::string> ids;
  for (const auto& row : txn.exec_params(
           "UPDATE workspaces SET state = 'lost', stopped_at = COALESCE(stopped_at, now()), "
           "pending_reason = 'node ' || $1 || ' was removed' "
           "WHERE node_name = $1 AND state IN ('placed', 'lost') RETURNING id",
           name)) {
    ids.push_back(row[0].c_str());
  }
  txn.exec_params("DELETE FROM gpu_holds WHERE node_name = $1", name);
  txn.exec_params("DELETE FROM nodes WHERE name = $1", name);
  NotifyChange(txn);
  return ids;
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

}  // namespace wsched::store
