#include "server/store/scaling_repository.h"

#include <set>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "server/store/change_log.h"
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

std::vector<RelayoutRow> ReplaceRelayouts(pqxx::work& txn, const std::vector<RelayoutRow>& rows) {
  std::vector<std::string> nodes;
  for (const RelayoutRow& row : rows) nodes.push_back(row.node);
  const std::string node_array = TextArray(nodes);
  txn.exec_params("SELECT name FROM nodes WHERE name = ANY($1::text[]) ORDER BY name FOR UPDATE",
                  node_array);
  std::set<std::pair<std::string, int>> held;
  for (const auto& r : txn.exec_params(
           "SELECT DISTINCT node_name, gpu_index FROM gpu_holds WHERE node_name = ANY($1::text[])",
           node_array)) {
    held.emplace(r[0].c_str(), r[1].as<int>());
  }
  txn.exec("DELETE FROM mig_relayouts");
  std::vector<RelayoutRow> stored;
  for (const RelayoutRow& row : rows) {
    if (held.contains({row.node, row.gpu_index})) continue;
    stored.push_back(row);
    nlohmann::json layout = nlohmann::json::array();
    for (const auto& [profile, start] : row.layout) {
      layout.push_back({{"profile", profile}, {"start", start}});
    }
    txn.exec_params(
        "INSERT INTO mig_relayouts (node, pool, gpu_index, layout, for_profile, ordered_at, "
        "leader) VALUES ($1, $2, $3, $4::jsonb, $5, to_timestamp($6::double precision / 1e6), $7)",
        row.node, row.pool, row.gpu_index, layout.dump(), row.for_profile,
        absl::ToUnixMicros(row.ordered_at), row.leader);
  }
  return stored;
}

absl::StatusOr<std::vector<RelayoutRow>> LoadRelayouts(pqxx::work& txn) {
  std::vector<RelayoutRow> rows;
  for (const auto& r : txn.exec("SELECT node, pool, gpu_index, layout::text, for_profile, "
                                "(extract(epoch FROM ordered_at) * 1000000)::bigint, leader "
                                "FROM mig_relayouts ORDER BY node")) {
    RelayoutRow row;
    row.node = r[0].c_str();
    row.pool = r[1].c_str();
    row.gpu_index = r[2].as<int>();
    const nlohmann::json layout = nlohmann::json::parse(r[3].c_str(), nullptr, false);
    if (!layout.is_array()) {
      return absl::FailedPreconditionError(
          absl::StrCat("mig_relayouts: node ", row.node, ": layout is not a JSON array"));
    }
    for (const nlohmann::json& slice : layout) {
      if (!slice.is_object() || !slice.contains("profile") || !slice["profile"].is_string() ||
          !slice.contains("start") || !slice["start"].is_number_integer()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "mig_relayouts: node ", row.node, ": a layout slice needs a profile and a start"));
      }
      row.layout.emplace_back(slice["profile"].get<std::string>(), slice["start"].get<int>());
    }
    row.for_profile = r[4].c_str();
    row.ordered_at = absl::FromUnixMicros(r[5].as<int64_t>());
    row.leader = r[6].c_str();
    rows.push_back(std::move(row));
  }
  return rows;
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
