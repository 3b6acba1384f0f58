// Stored nodes: what agents reported, their state and driver readiness.
#ifndef WSCHED_SERVER_STORE_NODE_REPOSITORY_H_
#define WSCHED_SERVER_STORE_NODE_REPOSITORY_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/core/driver_readiness.h"
#include "server/core/node.h"
#include "server/store/change_log.h"
#include "server/store/types.h"

namespace wsched::store {

// nullopt when unknown. `for_update` locks the row for the transaction.
absl::StatusOr<std::optional<StoredNode>> LoadNode(pqxx::work& txn, const std::string& name,
                                                   bool for_update);
// All nodes, or those of one pool, by name.
absl::StatusOr<std::vector<StoredNode>> LoadNodes(pqxx::work& txn, const std::string& pool = "");
// At most `limit` nodes (of `pool`, or all) named after `after_name`, by name.
absl::StatusOr<std::vector<StoredNode>> LoadNodesPage(pqxx::work& txn, const std::string& pool,
                                                     const std::string& after_name, int limit);
// The nodes of `names` that exist, in no particular order.
absl::StatusOr<std::vector<StoredNode>> LoadNodesByName(pqxx::work& txn,
                                                       const std::vector<std::string>& names);

// Every node of `pool` and named `name` (each "" for any), by name
// (WatchNodes' listing).
absl::StatusOr<std::vector<StoredNode>>
ListSelectedNodes(pqxx::work &txn, const std::string &pool,
                  const std::string &name);

// For the store's own statements: the columns of a StoredNode over a node
// row kept in the change log (change_log.h) as `n`, `heartbeat_sql` the
// expression of its last heartbeat in epoch seconds; and one row's
// StoredNode, its columns first.
std::string NodeColumnsOverStoredRow(absl::string_view heartbeat_sql);
absl::StatusOr<StoredNode> NodeRowOf(const pqxx::row &row);

// Inserts or updates everything but the held capacity, records liveness
// (the database's now()) and returns the new version.
int64_t SaveNode(pqxx::work& txn, const StoredNode& node, ChangeSet& changes);

// Cordon, drain, uncordon. Returns the new version.
int64_t SetNodeState(pqxx::work& txn, const std::string& name, core::NodeState state,
                     ChangeSet& changes);

// Liveness of nodes whose heartbeat changed nothing else: one statement for
// all of them, no node row rewritten, nothing published. Returns how many
// of them exist.
int64_t RecordHeartbeats(pqxx::work& txn, const std::vector<std::string>& names);

// Marks nodes whose last heartbeat is older than `timeout` lost (by the
// database clock, so replicas agree) and their placed workspaces lost.
// Returns the nodes newly marked.
std::vector<std::string> MarkLostNodes(pqxx::work& txn, absl::Duration timeout,
                                       ChangeSet& changes);

// A lost node came back (re-registered or heartbeat): it returns empty, so
// the holds of its lost workspaces are released. Returns their ids.
std::vector<std::string> ReleaseLostWorkspaces(pqxx::work& txn, const std::string& node,
                                               ChangeSet& changes);

// Deletes the node; its placed workspaces become lost and every hold on it
// is released. Returns the workspaces that were on it.
std::vector<std::string> DeleteNode(pqxx::work& txn, const std::string& name, ChangeSet& changes);

// Another node that already claims `provider_id` (when not empty) or one of
// `gpu_uuids`: its name and what it claims ("provider_id" or the UUID);
// nullopt when none does. Takes a transaction-scoped advisory lock first,
// so two registrations that claim the same identity are checked one after
// the other and the second sees the first.
std::optional<IdentityClaim> FindIdentityClaim(pqxx::work& txn, const std::string& name,
                                               const std::string& provider_id,
                                               const std::vector<std::string>& gpu_uuids);

// Workspaces on each node (all nodes, or `nodes` alone), CPU and GPU alike:
// placed, or lost and not yet released. Nodes without any are absent.
std::map<std::string, int> WorkspaceCountsOnNodes(pqxx::work& txn, const std::vector<std::string>& nodes);

// Driver rollouts under way, by pool (driver_rollouts).
// `pool` "" for all; `for_update` locks the pool's row until the unit ends.
std::vector<DriverRolloutRow> LoadDriverRollouts(pqxx::work& txn, const std::string& pool,
                                                 bool for_update);
void SaveDriverRollout(pqxx::work& txn, const std::string& pool, const core::RolloutRecord& record);
// False when the pool had none.
bool DeleteDriverRollout(pqxx::work& txn, const std::string& pool);

// GPU UUID -> holding workspace id, for every held GPU of `node` ("" = all).
std::vector<std::pair<std::string, std::string>> GpuHolders(pqxx::work& txn,
                                                            const std::string& node = "");

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_NODE_REPOSITORY_H_
