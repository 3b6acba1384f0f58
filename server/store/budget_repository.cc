#include "server/store/budget_repository.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "server/store/settings_repository.h"
#include "server/store/workspace_repository.h"

namespace wsched::store {
namespace {

int64_t Micros(absl::Time t) { return absl::ToUnixMicros(t); }

// The placed workspaces' columns RunningOfScope and WarnedWorkspaces read.
constexpr const char* kBudgetedColumns =
    "w.id, w.version, (extract(epoch FROM w.placed_at) * 1000000)::bigint, "
    "COALESCE(w.budget_mark::text, '')";

absl::StatusOr<std::vector<core::BudgetedWorkspace>> Budgeted(const pqxx::result& rows) {
  std::vector<core::BudgetedWorkspace> out;
  out.reserve(rows.size());
  for (const auto& row : rows) {
    core::BudgetedWorkspace w;
    w.id = row[0].c_str();
    w.version = row[1].as<int64_t>();
    w.placed_at = absl::FromUnixMicros(row[2].as<int64_t>());
    if (row[3].size() > 0) {
      auto mark = ParseBudgetMarkJson(row[3].c_str());
      if (!mark.ok()) return mark.status();
      w.mark = *std::move(mark);
    }
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace

std::string BudgetMarkJson(const core::BudgetMark& mark) {
  nlohmann::json j = {
      {"kind", mark.kind == core::BudgetMark::Kind::kWarning ? "warning" : "threshold"},
      {"scope", mark.scope},
      {"placed_at", Micros(mark.placed_at)},
      {"spent", mark.spent},
      {"limit", mark.limit},
      {"period_end", Micros(mark.period_end)}};
  if (mark.kind == core::BudgetMark::Kind::kWarning) {
    j["stops_at"] = Micros(mark.stops_at);
  } else {
    j["percent"] = mark.percent;
  }
  return j.dump();
}

absl::StatusOr<core::BudgetMark> ParseBudgetMarkJson(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  auto damaged = [&text] {
    return absl::DataLossError(absl::StrCat("a stored budget mark cannot be read: ", text));
  };
  if (!j.is_object()) return damaged();
  auto integer = [&j](const char* key) -> std::optional<int64_t> {
    if (!j.contains(key) || !j[key].is_number_integer()) return std::nullopt;
    return j[key].get<int64_t>();
  };
  const std::string kind = j.value("kind", std::string());
  const auto placed_at = integer("placed_at"), spent = integer("spent"), limit = integer("limit"),
             period_end = integer("period_end");
  if ((kind != "warning" && kind != "threshold") ||
      !j.value("scope", nlohmann::json()).is_string() || !placed_at || !spent || !limit ||
      !period_end) {
    return damaged();
  }
  core::BudgetMark mark;
  mark.scope = j["scope"].get<std::string>();
  mark.placed_at = absl::FromUnixMicros(*placed_at);
  mark.spent = *spent;
  mark.limit = *limit;
  mark.period_end = absl::FromUnixMicros(*period_end);
  if (kind == "warning") {
    const auto stops_at = integer("stops_at");
    if (!stops_at) return damaged();
    mark.stops_at = absl::FromUnixMicros(*stops_at);
  } else {
    const auto percent = integer("percent");
    if (!percent) return damaged();
    mark.kind = core::BudgetMark::Kind::kThreshold;
    mark.percent = static_cast<int>(*percent);
  }
  return mark;
}

absl::StatusOr<std::vector<LimitedScope>> LoadLimitedScopes(pqxx::work& txn) {
  pqxx::result rows = txn.exec(
      "SELECT 'org', org_id, spending_limit::text FROM org_settings "
      "WHERE spending_limit IS NOT NULL "
      "UNION ALL SELECT 'project', project_id, spending_limit::text FROM project_settings "
      "WHERE spending_limit IS NOT NULL ORDER BY 1, 2");
  std::vector<LimitedScope> out;
  for (const auto& row : rows) {
    auto limit = ParseSpendingLimitJson(row[2].c_str());
    if (!limit.ok()) return limit.status();
    out.push_back({row[0].c_str(), row[1].c_str(), *std::move(limit)});
  }
  return out;
}

absl::StatusOr<std::vector<core::BudgetedWorkspace>> RunningOfScope(pqxx::work& txn,
                                                                    const std::string& kind,
                                                                    const std::string& id) {
  return Budgeted(txn.exec_params(
      absl::StrCat("SELECT ", kBudgetedColumns,
                   " FROM workspaces w WHERE w.state = 'placed' "
                   "AND (CASE $1 WHEN 'org' THEN w.org_id ELSE w.project_id END) = $2 "
                   "AND EXISTS (SELECT 1 FROM gpu_holds h WHERE h.workspace_id = w.id) "
                   "ORDER BY w.id"),
      kind, id));
}

absl::StatusOr<std::vector<core::BudgetedWorkspace>> WarnedWorkspaces(pqxx::work& txn) {
  return Budgeted(txn.exec(absl::StrCat(
      "SELECT ", kBudgetedColumns,
      " FROM workspaces w WHERE w.state = 'placed' AND w.budget_mark->>'kind' = 'warning' "
      "ORDER BY w.id")));
}

std::optional<int64_t> SetBudgetMark(pqxx::work& txn, const std::string& id, int64_t version,
                                     const std::optional<core::BudgetMark>& mark,
                                     ChangeSet& changes) {
  pqxx::result rows = txn.exec_params(
      "UPDATE workspaces SET budget_mark = CASE WHEN $3 THEN $4::jsonb END, "
      "version = nextval('entity_versions') "
      "WHERE id = $1 AND version = $2 AND state = 'placed'" +
          std::string(kPlacedMarkReturning),
      id, version, mark.has_value(), mark ? BudgetMarkJson(*mark) : std::string("null"));
  return PublishPlacedMark(rows, id, changes);
}

std::vector<int> ToldThresholds(pqxx::work& txn, const std::string& scope) {
  std::vector<int> told;
  for (const auto& row : txn.exec_params(
           "SELECT percent FROM budget_thresholds_told WHERE scope = $1 AND period_end > now() "
           "ORDER BY percent",
           scope)) {
    told.push_back(row[0].as<int>());
  }
  return told;
}

std::vector<int> ClaimThresholds(pqxx::work& txn, const std::string& scope,
                                 const std::vector<int>& percents, absl::Time period_end) {
  std::vector<int> claimed;
  for (int percent : percents) {
    pqxx::result rows = txn.exec_params(
        "INSERT INTO budget_thresholds_told (scope, percent, told_at, period_end) "
        "VALUES ($1, $2, now(), timestamptz 'epoch' + $3::bigint * interval '1 microsecond') "
        "ON CONFLICT (scope, percent) DO UPDATE SET told_at = EXCLUDED.told_at, "
        "period_end = EXCLUDED.period_end "
        "WHERE budget_thresholds_told.period_end <= now() RETURNING percent",
        scope, percent, Micros(period_end));
    if (!rows.empty()) claimed.push_back(percent);
  }
  return claimed;
}

}  // namespace wsched::store
