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
#include "server/store/change_log.h"

namespace wsched::store {

// A stored workspace with what the store guards it by.
struct WorkspaceRow {
  core::Workspace workspace;
  int64_t version = 0;    // Changes on every transition (entity_versions).
  bool released = false;  // stopped_at is set: it holds nothing any more.
};

// What a transition was decided from: the version the deciding replica saw
// (0: no row). Every write below lands only on exactly that record, so a
// decision made on a stale picture is refused with ABORTED.
struct DecidedFrom {
  int64_t version = 0;
  bool pending = false;  // The record was pending (a queue placement).
};

absl::StatusOr<std::optional<WorkspaceRow>> LoadWorkspace(pqxx::work& txn, const std::string& id);
// The rows of `ids` that exist, in no particular order.
absl::StatusOr<std::vector<WorkspaceRow>> LoadWorkspaces(pqxx::work& txn,
                                                        const std::vector<std::string>& ids);
// Pending, placed, and lost-but-still-holding workspaces (what a replica
// mirrors), oldest first.
absl::StatusOr<std::vector<WorkspaceRow>> LoadActiveWorkspaces(pqxx::work& txn);

// Filtered listing for operators.
absl::StatusOr<std::vector<core::Workspace>> ListWorkspaces(pqxx::work& txn,
                                                            const std::string& node,
                                                            const std::string& pool,
                                                            const std::string& state);

// Records a new workspace (from.version 0) or restarts a released one
// (stopped, or lost and let go) as pending. Returns the new version;
// ABORTED when the record is not the one the decision saw.
absl::StatusOr<int64_t> SavePending(pqxx::work& txn, const core::Workspace& workspace,
                                    DecidedFrom from, ChangeSet& changes);

// Places `workspace` (node_name, pool, cpu, memory, gpus, placement): a new
// record, a restart of a released one, or the pending record `from` names
// (a queue placement lands only on the pending record it was decided for).
// ABORTED when the record moved on (stopped, placed elsewhere), a GPU is
// held, the node lacks capacity or stopped taking work.
absl::StatusOr<int64_t> CommitPlacement(pqxx::work& txn, const core::Workspace& workspace,
                                        DecidedFrom from, ChangeSet& changes);

// Stops a pending, placed or lost workspace, whatever its version (a stop
// wins over any placement racing with it), and frees what it holds.
// Returns the row after; unchanged when it was stopped already. NOT_FOUND
// when unknown.
absl::StatusOr<WorkspaceRow> StopWorkspace(pqxx::work& txn, const std::string& id,
                                           ChangeSet& changes);

// GPUs the org's workspaces hold now.
int64_t OrgGpusHeld(pqxx::work& txn, const std::string& org_id);

// Serializes quota checks of one org across replicas for the transaction.
void LockOrg(pqxx::work& txn, const std::string& org_id);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_WORKSPACE_REPOSITORY_H_
