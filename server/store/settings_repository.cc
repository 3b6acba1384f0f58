#include "server/store/settings_repository.h"

#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"
#include "server/store/change_log.h"

#include <nlohmann/json.hpp>

namespace wsched::store {
namespace {

std::vector<std::string> JsonList(const char* text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  std::vector<std::string> out;
  if (j.is_array()) {
    for (const auto& item : j) {
      if (item.is_string()) out.push_back(item.get<std::string>());
    }
  }
  return out;
}

// The guarded UPDATE matched no row: the version moved (or nothing is
// stored). Read in the same transaction after the statement, so under READ
// COMMITTED it is the version the winning writer committed.
absl::Status Mismatch(pqxx::work& txn, const char* select_version, const char* type,
                      const std::string& id, int64_t expected_version) {
  pqxx::result rows = txn.exec_params(select_version, id);
  const int64_t current = rows.empty() ? 0 : rows[0][0].as<int64_t>();
  return core::VersionMismatchError(type, id, current, expected_version);
}

// "" for none, which the statements store as NULL (NULLIF).
std::string LimitColumn(const std::optional<core::SpendingLimit>& limit) {
  return limit ? SpendingLimitJson(*limit) : std::string();
}

absl::StatusOr<std::optional<core::SpendingLimit>> ReadLimitColumn(const pqxx::field& field) {
  if (field.is_null()) return std::nullopt;
  auto limit = ParseSpendingLimitJson(field.c_str());
  if (!limit.ok()) return limit.status();
  return *std::move(limit);
}

}  // namespace

std::string SpendingLimitJson(const core::SpendingLimit& limit) {
  nlohmann::json period;
  if (limit.period.kind == core::SpendingPeriod::Kind::kRolling) {
    period["rolling_seconds"] = absl::ToInt64Seconds(limit.period.rolling);
  } else {
    period["calendar_month"] = {{"time_zone", limit.period.time_zone}};
  }
  nlohmann::json j = {
      {"gpu_hours", limit.gpu_hours},
      {"period", period},
      {"warn_at_percent", limit.warn_at_percent},
      {"action",
       limit.action == core::SpendingAction::kBlockAndStop ? "block_and_stop" : "block_new"}};
  if (limit.stop_warning) j["stop_warning_seconds"] = absl::ToInt64Seconds(*limit.stop_warning);
  return j.dump();
}

absl::StatusOr<core::SpendingLimit> ParseSpendingLimitJson(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  auto damaged = [&text] {
    return absl::InternalError(absl::StrCat("a stored spending limit cannot be read: ", text));
  };
  if (!j.is_object() || !j.contains("gpu_hours") || !j["gpu_hours"].is_number() ||
      !j.contains("period") || !j["period"].is_object()) {
    return damaged();
  }
  core::SpendingLimit limit;
  limit.gpu_hours = j["gpu_hours"].get<double>();
  const nlohmann::json& period = j["period"];
  if (period.contains("rolling_seconds") && period["rolling_seconds"].is_number_integer()) {
    limit.period.kind = core::SpendingPeriod::Kind::kRolling;
    limit.period.rolling = absl::Seconds(period["rolling_seconds"].get<int64_t>());
  } else if (period.contains("calendar_month") && period["calendar_month"].is_object() &&
             period["calendar_month"].value("time_zone", nlohmann::json()).is_string()) {
    limit.period.time_zone = period["calendar_month"]["time_zone"].get<std::string>();
  } else {
    return damaged();
  }
  if (j.contains("warn_at_percent") && j["warn_at_percent"].is_array()) {
    for (const auto& percent : j["warn_at_percent"]) {
      if (!percent.is_number_integer()) return damaged();
      limit.warn_at_percent.push_back(percent.get<int>());
    }
  }
  if (j.value("action", std::string("block_new")) == "block_and_stop") {
    limit.action = core::SpendingAction::kBlockAndStop;
  }
  if (j.contains("stop_warning_seconds")) {
    if (!j["stop_warning_seconds"].is_number_integer()) return damaged();
    limit.stop_warning = absl::Seconds(j["stop_warning_seconds"].get<int64_t>());
  }
  return limit;
}

absl::StatusOr<std::vector<std::pair<std::string, core::SpendingLimit>>> LoadProjectLimitsOfOrg(
    pqxx::work& txn, const std::string& org_id) {
  pqxx::result rows = txn.exec_params(
      "SELECT project_id, spending_limit::text FROM project_settings "
      "WHERE org_id = $1 AND spending_limit IS NOT NULL ORDER BY project_id",
      org_id);
  std::vector<std::pair<std::string, core::SpendingLimit>> limits;
  for (const auto& row : rows) {
    auto limit = ParseSpendingLimitJson(row[1].c_str());
    if (!limit.ok()) return limit.status();
    limits.emplace_back(row[0].c_str(), *std::move(limit));
  }
  return limits;
}

void LockOrgLimits(pqxx::work& txn, const std::string& org_id) {
  txn.exec_params("SELECT pg_advisory_xact_lock(hashtextextended('org:' || $1, 0))", org_id);
}

absl::StatusOr<core::ProjectSettings> LoadProjectSettings(pqxx::work& txn,
                                                          const std::string& project_id,
                                                          int64_t* version) {
  core::ProjectSettings settings;
  settings.project_id = project_id;
  pqxx::result rows = txn.exec_params(
      "SELECT org_id, default_class, denied_classes::text, version, spending_limit::text "
      "FROM project_settings WHERE project_id = $1",
      project_id);
  if (version != nullptr) *version = rows.empty() ? 0 : rows[0][3].as<int64_t>();
  if (!rows.empty()) {
    settings.org_id = rows[0][0].c_str();
    settings.default_class = rows[0][1].c_str();
    settings.denied_classes = JsonList(rows[0][2].c_str());
    auto limit = ReadLimitColumn(rows[0][4]);
    if (!limit.ok()) return limit.status();
    settings.spending_limit = *std::move(limit);
  }
  return settings;
}

absl::StatusOr<core::OrgSettings> LoadOrgSettings(pqxx::work& txn, const std::string& org_id,
                                                  int64_t* version) {
  core::OrgSettings settings;
  settings.org_id = org_id;
  pqxx::result rows = txn.exec_params(
      "SELECT default_class, allowed_classes::text, gpu_quota, version, spending_limit::text "
      "FROM org_settings WHERE org_id = $1",
      org_id);
  if (version != nullptr) *version = rows.empty() ? 0 : rows[0][3].as<int64_t>();
  if (!rows.empty()) {
    settings.default_class = rows[0][0].c_str();
    settings.allowed_classes = JsonList(rows[0][1].c_str());
    settings.gpu_quota = rows[0][2].as<int64_t>();
    auto limit = ReadLimitColumn(rows[0][4]);
    if (!limit.ok()) return limit.status();
    settings.spending_limit = *std::move(limit);
  }
  return settings;
}

absl::Status SaveProjectSettings(pqxx::work& txn, const core::ProjectSettings& settings,
                                 int64_t expected_version, ChangeSet& changes, int64_t* version) {
  const std::string denied = nlohmann::json(settings.denied_classes).dump();
  const std::string limit = LimitColumn(settings.spending_limit);
  pqxx::result rows =
      expected_version == 0
          ? txn.exec_params(
                "INSERT INTO project_settings (project_id, org_id, default_class, denied_classes, "
                "spending_limit) VALUES ($1, $2, $3, $4::jsonb, NULLIF($5, '')::jsonb) "
                "ON CONFLICT (project_id) DO UPDATE SET "
                "org_id = EXCLUDED.org_id, default_class = EXCLUDED.default_class, "
                "denied_classes = EXCLUDED.denied_classes, "
                "spending_limit = EXCLUDED.spending_limit, updated_at = now(), "
                "version = nextval('entity_versions') RETURNING version",
                settings.project_id, settings.org_id, settings.default_class, denied, limit)
          : txn.exec_params(
                "UPDATE project_settings SET org_id = $2, default_class = $3, "
                "denied_classes = $4::jsonb, spending_limit = NULLIF($6, '')::jsonb, updated_at = "
                "now(), "
                "version = nextval('entity_versions') "
                "WHERE project_id = $1 AND version = $5 RETURNING version",
                settings.project_id, settings.org_id, settings.default_class, denied,
                expected_version, limit);
  if (rows.empty()) {
    return Mismatch(txn, "SELECT version FROM project_settings WHERE project_id = $1",
                    "project_settings", settings.project_id, expected_version);
  }
  const int64_t stored = rows[0][0].as<int64_t>();
  changes.Add(Entity::kSettings, absl::StrCat("project:", settings.project_id), stored);
  if (version != nullptr) *version = stored;
  return absl::OkStatus();
}

absl::Status SaveOrgSettings(pqxx::work& txn, const core::OrgSettings& settings,
                             int64_t expected_version, ChangeSet& changes, int64_t* version) {
  const std::string allowed = nlohmann::json(settings.allowed_classes).dump();
  const std::string limit = LimitColumn(settings.spending_limit);
  pqxx::result rows =
      expected_version == 0
          ? txn.exec_params(
                "INSERT INTO org_settings (org_id, default_class, allowed_classes, gpu_quota, "
                "spending_limit) VALUES ($1, $2, $3::jsonb, $4, NULLIF($5, '')::jsonb) "
                "ON CONFLICT (org_id) DO UPDATE SET "
                "default_class = EXCLUDED.default_class, allowed_classes = "
                "EXCLUDED.allowed_classes, "
                "gpu_quota = EXCLUDED.gpu_quota, spending_limit = EXCLUDED.spending_limit, "
                "updated_at = now(), version = nextval('entity_versions') RETURNING version",
                settings.org_id, settings.default_class, allowed, settings.gpu_quota, limit)
          : txn.exec_params(
                "UPDATE org_settings SET default_class = $2, allowed_classes = $3::jsonb, "
                "gpu_quota = $4, spending_limit = NULLIF($6, '')::jsonb, updated_at = now(), "
                "version = nextval('entity_versions') "
                "WHERE org_id = $1 AND version = $5 RETURNING version",
                settings.org_id, settings.default_class, allowed, settings.gpu_quota,
                expected_version, limit);
  if (rows.empty()) {
    return Mismatch(txn, "SELECT version FROM org_settings WHERE org_id = $1", "org_settings",
                    settings.org_id, expected_version);
  }
  const int64_t stored = rows[0][0].as<int64_t>();
  changes.Add(Entity::kSettings, absl::StrCat("org:", settings.org_id), stored);
  if (version != nullptr) *version = stored;
  return absl::OkStatus();
}

}  // namespace wsched::store
