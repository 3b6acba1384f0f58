// The group commit's statements: a batch of workspace writes (placements,
// queue placements, pending records, stops) checked and applied with a
// fixed handful of set-based statements, whatever the batch's size
// (docs/architecture.md "The hot path and the group commit": one transaction, many placements).
//
// Order, for every batch: lock the nodes involved (by name), lock the
// workspace records involved, read the GPU holds and settings/catalog
// versions the guards need; decide in memory which writes pass every guard;
// then write only those: stops (each placement a stop ends leaves its
// usage record first, usage_repository.h), workspace records, GPU holds,
// node capacity, one change-log entry. The statements travel in three round
// trips (statement_pipeline.h), not one each. A write that fails a guard is answered
// alone (ABORTED or RESOURCE_EXHAUSTED) without touching the others, so no
// savepoint per write is needed.
#ifndef WSCHED_SERVER_STORE_WRITE_BATCH_H_
#define WSCHED_SERVER_STORE_WRITE_BATCH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/core/workspace.h"
#include "server/store/change_log.h"
#include "server/store/workspace_repository.h"
#include "server/store/types.h"

namespace wsched::store {

// Registers the statements CommitWrites runs on `connection`, and has the
// session use their generic plans: once per connection, before its first
// batch. Left to itself (plan_cache_mode = auto) PostgreSQL re-planned most
// of them at every execution, as a custom plan for an `= ANY($1)` lookup
// always looks a little cheaper than the generic one: planning took a third
// of the writer's statement time (docs/performance-history.md). The writer drops its
// plans as the tables grow (CommitBatcher::RefreshPlansWhenDue).
void PrepareWriteStatements(pqxx::connection_base& connection);

// Applies `writes` and commits them, with their change-log entry, as one
// transaction on `connection`, and answers each (same order). A database
// error throws, and may leave the transaction open: the caller fails the
// whole batch and rolls back.
//
// A GPU placement of an org or project with a spending limit is admitted
// when what the limit's period has spent (the ledger's ended placements and
// the running ones, each running one at least for its first
// `budget_interval`) and the placement's GPUs for `budget_interval` fit the
// limit, judged under the org's advisory lock (docs/billing.md "Spending
// limits"); otherwise RESOURCE_EXHAUSTED, BUDGET_EXHAUSTED.
inline constexpr absl::Duration kDefaultBudgetInterval = absl::Seconds(60);
std::vector<WriteOutcome> CommitWrites(pqxx::connection_base& connection,
                                       const std::vector<WorkspaceWrite>& writes,
                                       BatchStatements& stats,
                                       absl::Duration budget_interval = kDefaultBudgetInterval);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_WRITE_BATCH_H_
