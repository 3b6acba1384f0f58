// The group commit's statements: a batch of workspace writes (placements,
// queue placements, pending records, stops) checked and applied with a
// fixed handful of set-based statements, whatever the batch's size
// (DESIGN.md "Placement": one transaction, many placements).
//
// Order, for every batch: lock the nodes involved (by name), lock the
// workspace records involved, read the GPU holds and settings/catalog
// versions the guards need; decide in memory which writes pass every guard;
// then write only those: stops, workspace records, GPU holds, node
// capacity, one change-log entry. The statements travel in three round
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
#include "server/core/workspace.h"
#include "server/store/change_log.h"
#include "server/store/workspace_repository.h"

namespace wsched::store {

struct WorkspaceWrite {
  enum class Kind {
    kPlace,        // New or restarted record (from.version), placed now.
    kQueuePlace,   // The pending record from.version, placed now.
    kSavePending,  // New or restarted record (from.version), pending.
    kStop,         // Whatever its version: a stop always wins.
  };
  Kind kind = Kind::kPlace;
  core::Workspace workspace;  // For kStop only the id.
  DecidedFrom from;
  // What the decision read from the replica's state, confirmed here:
  // unset = not checked; a settings version of 0 = no row.
  std::optional<int64_t> catalog_generation;
  std::optional<int64_t> project_settings_version;
  std::optional<int64_t> org_settings_version;
  // The org's GPU quota is always read here and checked against the holds
  // under a per-org lock, whatever the decision saw.
};

struct WriteOutcome {
  absl::Status status;
  int64_t version = 0;              // The record's version after the write.
  std::optional<WorkspaceRow> row;  // kStop: the record after the stop.
};

struct BatchStatements {
  int statements = 0;   // Statements this batch ran (BEGIN/COMMIT not counted).
  int round_trips = 0;  // Waits for PostgreSQL's answers, BEGIN to COMMIT.
};

// Registers the statements CommitWrites runs on `connection`: once per
// connection, before its first batch.
void PrepareWriteStatements(pqxx::connection_base& connection);

// Applies `writes` and commits them, with their change-log entry, as one
// transaction on `connection`, and answers each (same order). A database
// error throws, and may leave the transaction open: the caller fails the
// whole batch and rolls back.
std::vector<WriteOutcome> CommitWrites(pqxx::connection_base& connection,
                                       const std::vector<WorkspaceWrite>& writes, BatchStatements& stats);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_WRITE_BATCH_H_
