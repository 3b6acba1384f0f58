// Stored workspaces and the GPUs they hold: reads, and the row types the
// store guards by. The writes are the group commit's (write_batch.h), where
// PostgreSQL arbitrates: a GPU has one holder (primary key), a node's held
// capacity stays within its allocatable (check constraints), and every
// transition lands only on the record version it was decided from.
#ifndef WSCHED_SERVER_STORE_WORKSPACE_REPOSITORY_H_
#define WSCHED_SERVER_STORE_WORKSPACE_REPOSITORY_H_

#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/core/workspace.h"
#include "server/store/change_log.h"
#include "server/store/types.h"

namespace wsched::store {

absl::StatusOr<std::optional<WorkspaceRow>> LoadWorkspace(pqxx::work& txn, const std::string& id);
// The rows of `ids` that exist, in no particular order.
absl::StatusOr<std::vector<WorkspaceRow>> LoadWorkspaces(pqxx::work& txn,
                                                        const std::vector<std::string>& ids);
// Pending, placed, and lost-but-still-holding workspaces (what a replica
// mirrors), oldest first.
absl::StatusOr<std::vector<WorkspaceRow>> LoadActiveWorkspaces(pqxx::work& txn);

// Filtered listing for operators: at most `limit` workspaces with an id
// greater than `after_id`, in id order (keyset paging).
absl::StatusOr<std::vector<core::Workspace>> ListWorkspaces(pqxx::work& txn,
                                                            const WorkspaceFilter& filter,
                                                            const std::string& after_id, int limit);

// For the store's own statements: the columns of a WorkspaceRow (table
// alias `w`), and the rows of a result selected with them.
extern const char kWorkspaceColumns[];
absl::StatusOr<std::vector<WorkspaceRow>> WorkspaceRows(const pqxx::result& rows);

// Deletes at most `limit` workspaces that ended (stopped, or lost and
// released: stopped_at set) more than `retention` ago by the database's
// clock, oldest first, and returns how many. Rows another transaction holds
// are skipped, not waited for (SKIP LOCKED): a placement restarting one of
// them goes first, and the next sweep finds what is left. Nothing is
// published: no replica mirrors an ended workspace.
int64_t DeleteEndedWorkspaces(pqxx::work& txn, absl::Duration retention, int limit);

// Marks the placed workspace `id` idle (docs/catalog.md "Idle GPUs"), or
// clears its mark when `mark` is nullopt, only at exactly `version`: the
// record's new version, or nullopt (nothing written) when it moved on or is
// not placed. The change is published like any workspace write.
std::optional<int64_t> SetIdleMark(pqxx::work& txn, const std::string& id, int64_t version,
                                   const std::optional<core::IdleMark>& mark, ChangeSet& changes);

// GPUs the org's workspaces hold now.
int64_t OrgGpusHeld(pqxx::work& txn, const std::string& org_id);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_WORKSPACE_REPOSITORY_H_
