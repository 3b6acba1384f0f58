// Stored workspaces and the GPUs and capacity they hold. The writes here are
// where PostgreSQL arbitrates: a GPU has one holder (primary key), a node's
// held capacity stays within its allocatable (check constraints), and a
// pending workspace is placed once (state guard).
#ifndef WSCHED_SERVER_STORE_WORKSPACE_REPOSITORY_H_
#define WSCHED_SERVER_STORE_WORKSPACE_REPOSITORY_H_

#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "absl/status/statusor.h"
#include "server/core/workspace.h"

namespace wsched::store {

absl::StatusOr<std::optional<core::Workspace>> LoadWorkspace(pqxx::work& txn,
                                                             const std::string& id);

// Workspaces in the given states (placed/lost rebuild the snapshot; pending
// refill the queue), oldest first.
absl::StatusOr<std::vector<core::Workspace>> LoadWorkspacesInState(
    pqxx::work& txn, const std::vector<core::WorkspaceState>& states);

// Filtered listing for operators.
absl::StatusOr<std::vector<core::Workspace>> ListWorkspaces(pqxx::work& txn,
                                                            const std::string& node,
                                                            const std::string& pool,
                                                            const std::string& state);

// Records a new (or restarted: previously stopped/lost) workspace as pending.
// ABORTED when the id is already pending or placed (a concurrent request).
absl::Status SavePending(pqxx::work& txn, const core::Workspace& workspace);

// Places `workspace` (fields node_name, pool, cpu, memory, gpus, placement):
// from pending, or as a new/restarted record. ABORTED when a GPU is held,
// the node lacks capacity or is not ready, or the workspace was placed or
// stopped meanwhile.
absl::Status CommitPlacement(pqxx::work& txn, const core::Workspace& workspace);

// Stops a pending, placed or lost workspace and frees what it holds.
// Returns the workspace as it was before, nullopt when it was already
// stopped; NOT_FOUND when unknown.
absl::StatusOr<std::optional<core::Workspace>> StopWorkspace(pqxx::work& txn,
                                                             const std::string& id);

// GPUs the org's workspaces hold now.
int64_t OrgGpusHeld(pqxx::work& txn, const std::string& org_id);

// Serializes quota checks of one org across replicas for the transaction.
void LockOrg(pqxx::work& txn, const std::string& org_id);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_WORKSPACE_REPOSITORY_H_
