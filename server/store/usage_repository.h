// The usage ledger's SQL (migration 0010, store/usage_query.h).
//
// Writing: a placement ends in three places, and each writes its record in
// its own transaction with one INSERT ... SELECT from the workspace rows
// before they change (UsageInsertSql): the group commit's stops
// (write_batch.cc, the reason per stop), marking nodes lost and removing a
// node (node_repository.cc). Only rows still 'placed' are taken, so a
// pending, lost (already recorded) or stopped workspace adds nothing, and
// the primary key keeps a placement to one record whatever happens.
#ifndef WSCHED_SERVER_STORE_USAGE_REPOSITORY_H_
#define WSCHED_SERVER_STORE_USAGE_REPOSITORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/store/usage_query.h"

namespace wsched::store {

// INSERT INTO usage_records ... SELECT ... FROM workspaces w `from_where`,
// ended now() with end_reason `reason_sql` (an SQL expression), for the
// rows of `from_where` that are placed. A transaction that began before the
// placement it ends committed (it waited for that placement's locks: a stop
// or a node's removal racing a queue placement) ends it where it began:
// GREATEST(now(), placed_at), as the row's stopped_at. `from_where` continues after
// "FROM workspaces w" (joins, then a WHERE clause); it must leave other
// rows out itself only if it wants to.
std::string UsageInsertSql(absl::string_view reason_sql, absl::string_view from_where);

// At most `limit` records of `filter` after `after` (nullopt: from the
// first), by started_at then workspace_id, open placements counted to now.
absl::StatusOr<std::vector<core::UsageRecord>> ListUsageRecords(pqxx::work& txn, const UsageFilter& filter,
                                                         const std::optional<UsageCursor>& after,
                                                         int limit);

// Whether PostgreSQL knows `name` as a time zone (pg_timezone_names).
bool KnownTimeZone(pqxx::work& txn, const std::string& name);

// Totals by bucket and group, buckets ascending then groups; at most
// request.max_rows + 1 rows.
absl::StatusOr<std::vector<core::UsageSummaryRow>> SummarizeUsage(pqxx::work& txn,
                                                           const UsageSummaryRequest& request);

// What an org ("org") or a project ("project") has spent (SpendingReading)
// since `period_start`, by the database's clock.
SpendingReading ReadSpending(pqxx::work& txn, const std::string& kind, const std::string& id,
                             absl::Time period_start);
// The transaction's now().
absl::Time DatabaseNow(pqxx::work& txn);

// Deletes up to `limit` of the records that ended longest ago, if more
// than `retention` ago; returns how many.
int64_t DeleteOldUsageRecords(pqxx::work& txn, absl::Duration retention, int limit);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_USAGE_REPOSITORY_H_
