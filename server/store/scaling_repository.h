// Published scaling signals and actuator reports.
#ifndef WSCHED_SERVER_STORE_SCALING_REPOSITORY_H_
#define WSCHED_SERVER_STORE_SCALING_REPOSITORY_H_

#include <map>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "absl/status/statusor.h"
#include "server/store/types.h"

namespace wsched::store {

void SaveSignal(pqxx::work& txn, const SignalRow& signal);
// FailedPrecondition for a row of a newer document schema (documents.h).
absl::StatusOr<std::vector<SignalRow>> LoadSignals(pqxx::work& txn);

// Replaces every MIG re-layout under way with those of `rows` whose GPU
// holds nothing, and returns them. The orders' node rows are locked first,
// as the group commit locks a placement's node (write_batch.cc), so a hold
// committed before is seen here and one committed after sees the order.
std::vector<RelayoutRow> ReplaceRelayouts(pqxx::work& txn, const std::vector<RelayoutRow>& rows);
// By node. FailedPrecondition naming the node for a layout it cannot read.
absl::StatusOr<std::vector<RelayoutRow>> LoadRelayouts(pqxx::work& txn);

void SaveActuatorReport(pqxx::work& txn, const ActuatorReportRow& report);
// Reports with id > after, oldest first.
std::vector<ActuatorReportRow> LoadActuatorReports(pqxx::work& txn, int64_t after);
int64_t LatestActuatorReportId(pqxx::work& txn);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_SCALING_REPOSITORY_H_
