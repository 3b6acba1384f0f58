// The change log: what each committed transaction changed (entity, id,
// version), in commit order and without gaps, so replicas apply deltas
// instead of re-reading the fleet (docs/architecture.md "Following the database").
#ifndef WSCHED_SERVER_STORE_CHANGE_LOG_H_
#define WSCHED_SERVER_STORE_CHANGE_LOG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/store/statement_pipeline.h"
#include "server/store/types.h"

namespace wsched::store {

// Appends `changes` to the log as the next entry and NOTIFYs listeners; a
// no-op for an empty set. Run it as the LAST statement before COMMIT: it
// locks the log head until the transaction ends. Returns the entry's seq.
// Units of work call it at commit (unit_of_work.h); repositories only
// record their changes, so a transaction publishes exactly one entry.
int64_t PublishChanges(pqxx::work& txn, const ChangeSet& changes);
// The same, queued on a pipeline (nothing for an empty set); the caller
// prepares it once per connection with PreparePublish.
void PreparePublish(pqxx::connection_base& connection);
std::optional<StatementPipeline::Id> QueuePublish(StatementPipeline& pipeline, const ChangeSet& changes);

// Entries after `after`, and the head as of the same statement.
FeedRead ReadChangesSince(pqxx::work& txn, int64_t after, int limit);
int64_t FeedHead(pqxx::work& txn);
// What the entries after `after` (at most `limit`) did to workspaces, with
// the rows as each committed them; `reaches` is false when the log no
// longer holds the entry right after `after`.
absl::StatusOr<WorkspaceHistoryRead>
ReadWorkspaceHistory(pqxx::work &txn, int64_t after, int limit);
// The same for nodes: what the entries after `after` did to nodes, with
// the rows as each committed them.
absl::StatusOr<NodeHistoryRead> ReadNodeHistory(pqxx::work &txn, int64_t after,
                                                int limit);
// Deletes entries older than `keep_for`; returns how many.
int64_t PruneChangeLog(pqxx::work& txn, absl::Duration keep_for);

// A fresh version for an entity (nodes and workspaces share one sequence).
int64_t NextVersion(pqxx::work& txn);

// A PostgreSQL text[] literal of `values`, quoted and escaped.
std::string TextArray(const std::vector<std::string>& values);

// A PostgreSQL array literal of numbers, e.g. "{1,2,3}".
template <typename T>
std::string NumberArray(const std::vector<T>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) absl::StrAppend(&out, i > 0 ? "," : "", values[i]);
  return out + "}";
}

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_CHANGE_LOG_H_
