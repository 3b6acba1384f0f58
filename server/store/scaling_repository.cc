#include "server/store/scaling_repository.h"

#include "server/store/documents/documents.h"

namespace wsched::store {

void SaveSignal(pqxx::work& txn, const SignalRow& signal) {
  txn.exec_params(
      "INSERT INTO scaling_signals (pool, generation, signal, signal_schema, leader, updated_at) "
      "VALUES ($1, $2, $3::jsonb, $4, $5, now()) ON CONFLICT (pool) DO UPDATE SET "
      "generation = EXCLUDED.generation, signal = EXCLUDED.signal, "
      "signal_schema = EXCLUDED.signal_schema, leader = EXCLUDED.leader, updated_at = now()",
      signal.pool, signal.generation, documents::EncodeSignal(signal), documents::kSchemaVersion,
      signal.leader);
}

absl::StatusOr<std::vector<SignalRow>> LoadSignals(pqxx::work& txn) {
  std::vector<SignalRow> signals;
  for (const auto& row : txn.exec("SELECT pool, generation, signal::text, leader, signal_schema "
                                  "FROM scaling_signals ORDER BY pool")) {
    auto signal = documents::DecodeSignal(row[2].c_str(),
                                          {"scaling_signals", row[0].c_str(), row[4].as<int>()});
    if (!signal.ok()) return signal.status();
    signal->pool = row[0].c_str();
    signal->generation = row[1].as<int64_t>();
    signal->leader = row[3].c_str();
    signals.push_back(std::move(*signal));
  }
  return signals;
}

void SaveActuatorReport(pqxx::work& txn, const ActuatorReportRow& report) {
  txn.exec_params(
      "INSERT INTO actuator_reports (pool, generation, state, instances, detail) "
      "VALUES ($1, $2, $3, $4, $5)",
      report.pool, report.generation, report.state, report.instances, report.detail);
}

std::vector<ActuatorReportRow> LoadActuatorReports(pqxx::work& txn, int64_t after) {
  std::vector<ActuatorReportRow> reports;
  for (const auto& row : txn.exec_params(
           "SELECT id, pool, generation, state, instances, detail FROM actuator_reports "
           "WHERE id > $1 ORDER BY id LIMIT 1000",
           after)) {
    reports.push_back({row[0].as<int64_t>(), row[1].c_str(), row[2].as<int64_t>(), row[3].c_str(),
                       row[4].as<int>(), row[5].c_str()});
  }
  return reports;
}

int64_t LatestActuatorReportId(pqxx::work& txn) {
  return txn.exec("SELECT COALESCE(MAX(id), 0) FROM actuator_reports")[0][0].as<int64_t>();
}

}  // namespace wsched::store
