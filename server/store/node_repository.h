// Stored nodes: what agents reported, their state and driver readiness.
#ifndef WSCHED_SERVER_STORE_NODE_REPOSITORY_H_
#define WSCHED_SERVER_STORE_NODE_REPOSITORY_H_

#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/core/driver_readiness.h"
#include "server/core/node.h"

namespace wsched::store {

struct StoredNode {
  core::NodeInfo info;
  core::NodeState state = core::NodeState::kReady;
  core::DriverState driver_state = core::DriverState::kNotNeeded;
  std::string driver_detail;
  core::DriverHistory driver_history;
  absl::Time registered_at;
  absl::Time last_heartbeat;
  int64_t held_cpu_millis = 0;
  int64_t held_memory_bytes = 0;
};

// nullopt when unknown. `for_update` locks the row for the transaction.
absl::StatusOr<std::optional<StoredNode>> LoadNode(pqxx::work& txn, const std::string& name,
                                                   bool for_update);
// All nodes, or those of one pool, by name.
absl::StatusOr<std::vector<StoredNode>> LoadNodes(pqxx::work& txn, const std::string& pool = "");

// Inserts or updates everything but the held capacity; sets last_heartbeat
// to the database's now().
void SaveNode(pqxx::work& txn, const StoredNode& node);

void SetNodeState(pqxx::work& txn, const std::string& name, core::NodeState state);

// Marks nodes whose last heartbeat is older than `timeout` lost (by the
// database clock, so replicas agree) and their placed workspaces lost.
// Returns the nodes newly marked.
std::vector<std::string> MarkLostNodes(pqxx::work& txn, absl::Duration timeout);

// A lost node came back (re-registered or heartbeat): it returns empty, so
// the holds of its lost workspaces are released. Returns their ids.
std::vector<std::string> ReleaseLostWorkspaces(pqxx::work& txn, const std::string& node);

// Deletes the node; its placed workspaces become lost and every hold on it
// is released. Returns the workspaces that were on it.
std::vector<std::string> DeleteNode(pqxx::work& txn, const std::string& name);

// GPU UUID -> holding workspace id, for every held GPU of `node` ("" = all).
std::vector<std::pair<std::string, std::string>> GpuHolders(pqxx::work& txn,
                                                            const std::string& node = "");

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_NODE_REPOSITORY_H_
