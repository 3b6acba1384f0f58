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

// What `w` is in a WatchWorkspaces filter's terms, recorded with a change
// as what it was before.
WorkspaceFacts FactsOf(const core::Workspace& w);

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
// A workspace's GPU holds (gpu_holds `h` of workspace `w`) as one text, the
// form WorkspaceRows reads: "index/uuid" per GPU held whole,
// "index:gpu_instance:compute_slices/uuid" for a MIG slice, comma-separated.
#define WSCHED_HOLDS_TEXT                                                                     \
  "(SELECT string_agg(h.gpu_index::text || CASE WHEN h.gpu_instance >= 0 THEN ':' || "        \
  "h.gpu_instance || ':' || h.compute_slices ELSE '' END || '/' || h.gpu_uuid, ',' ORDER BY " \
  "h.gpu_index, h.gpu_instance) FROM gpu_holds h WHERE h.workspace_id = w.id)"
absl::StatusOr<std::vector<WorkspaceRow>> WorkspaceRows(const pqxx::result& rows);
// The same columns over a row kept in the change log (change_log.h): `w` is
// the stored row, `gpus_sql` the expression of its GPUs as kept with it.
std::string WorkspaceColumnsOverStoredRow(absl::string_view gpus_sql);
// One row's WorkspaceRow; its columns come first, as kWorkspaceColumns lists them.
absl::StatusOr<WorkspaceRow> WorkspaceRowOf(const pqxx::row& row);

// Deletes at most `limit` workspaces that ended (stopped, or lost and
// released: stopped_at set) more than `retention` ago by the database's
// clock, oldest first, and returns how many. Rows another transaction holds
// are skipped, not waited for (SKIP LOCKED): a placement restarting one of
// them goes first, and the next sweep finds what is left. Each deletion is
// published with a fresh version: no replica mirrors an ended workspace,
// but WatchWorkspaces streams announce it.
int64_t DeleteEndedWorkspaces(pqxx::work& txn, absl::Duration retention, int limit,
                              ChangeSet& changes);

// Every workspace `selection` selects, in id order (WatchWorkspaces'
// listing): with no states, the live ones (pending, placed, lost).
absl::StatusOr<std::vector<WorkspaceRow>>
ListSelectedWorkspaces(pqxx::work &txn, const WorkspaceSelection &selection);

// Marks the placed workspace `id` idle (docs/catalog.md "Idle GPUs"), or
// clears its mark when `mark` is nullopt, only at exactly `version`: the
// record's new version, or nullopt (nothing written) when it moved on or is
// not placed. The change is published like any workspace write.
std::optional<int64_t> SetIdleMark(pqxx::work& txn, const std::string& id, int64_t version,
                                   const std::optional<core::IdleMark>& mark, ChangeSet& changes);

// Stores when the placed workspace `id` first became ready
// (ReportWorkspaceReady), only at exactly `version` and while it has no
// ready time: the record's new version, or nullopt (nothing written) when
// it moved on, is not placed or has one already (the first report wins).
// The change is published like any workspace write.
std::optional<int64_t> SetReadyAt(pqxx::work& txn, const std::string& id, int64_t version,
                                  absl::Time ready_at, ChangeSet& changes);

// For an UPDATE of one placed workspace's own fields: what its RETURNING
// names (kPlacedMarkReturning), published as a change of that record; the
// record's new version, or nullopt when the update matched no row.
inline constexpr char kPlacedMarkReturning[] =
    " RETURNING version, org_id, project_id, COALESCE(pool, ''), COALESCE(node_name, ''), "
    "class_id";
std::optional<int64_t> PublishPlacedMark(const pqxx::result& rows, const std::string& id,
                                         ChangeSet& changes);

// GPUs the org's workspaces hold now, in sevenths of a GPU (a MIG slice
// counts its share, migrations/0019).
int64_t OrgGpuSeventhsHeld(pqxx::work& txn, const std::string& org_id);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_WORKSPACE_REPOSITORY_H_
