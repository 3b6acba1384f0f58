#include "server/store/settings_repository.h"

#include "absl/strings/str_cat.h"
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

}  // namespace

absl::StatusOr<core::ProjectSettings> LoadProjectSettings(pqxx::work& txn,
                                                          const std::string& project_id) {
  core::ProjectSettings settings;
  settings.project_id = project_id;
  pqxx::result rows = txn.exec_params(
      "SELECT org_id, default_class, denied_classes::text FROM project_settings "
      "WHERE project_id = $1",
      project_id);
  if (!rows.empty()) {
    settings.org_id = rows[0][0].c_str();
    settings.default_class = rows[0][1].c_str();
    settings.denied_classes = JsonList(rows[0][2].c_str());
  }
  return settings;
}

absl::StatusOr<core::OrgSettings> LoadOrgSettings(pqxx::work& txn, const std::string& org_id) {
  core::OrgSettings settings;
  settings.org_id = org_id;
  pqxx::result rows = txn.exec_params(
      "SELECT default_class, allowed_classes::text, gpu_quota FROM org_settings "
      "WHERE org_id = $1",
      org_id);
  if (!rows.empty()) {
    settings.default_class = rows[0][0].c_str();
    settings.allowed_classes = JsonList(rows[0][1].c_str());
    settings.gpu_quota = rows[0][2].as<int64_t>();
  }
  return settings;
}

namespace {

// Settings are read from the database by every decision that uses them;
// the change is published so followers (and caches) can tell it happened.
void PublishSettings(pqxx::work& txn, std::string key) {
  ChangeSet changes;
  changes.Add(Entity::kSettings, std::move(key), NextVersion(txn));
  PublishChanges(txn, changes);
}

}  // namespace

absl::Status SaveProjectSettings(pqxx::work& txn, const core::ProjectSettings& settings) {
  txn.exec_params(
      "INSERT INTO project_settings (project_id, org_id, default_class, denied_classes) "
      "VALUES ($1, $2, $3, $4::jsonb) ON CONFLICT (project_id) DO UPDATE SET "
      "org_id = EXCLUDED.org_id, default_class = EXCLUDED.default_class, "
      "denied_classes = EXCLUDED.denied_classes, updated_at = now()",
      settings.project_id, settings.org_id, settings.default_class,
      nlohmann::json(settings.denied_classes).dump());
  PublishSettings(txn, absl::StrCat("project:", settings.project_id));
  return absl::OkStatus();
}

absl::Status SaveOrgSettings(pqxx::work& txn, const core::OrgSettings& settings) {
  txn.exec_params(
      "INSERT INTO org_settings (org_id, default_class, allowed_classes, gpu_quota) "
      "VALUES ($1, $2, $3::jsonb, $4) ON CONFLICT (org_id) DO UPDATE SET "
      "default_class = EXCLUDED.default_class, allowed_classes = EXCLUDED.allowed_classes, "
      "gpu_quota = EXCLUDED.gpu_quota, updated_at = now()",
      settings.org_id, settings.default_class, nlohmann::json(settings.allowed_classes).dump(),
      settings.gpu_quota);
  PublishSettings(txn, absl::StrCat("org:", settings.org_id));
  return absl::OkStatus();
}

}  // namespace wsched::store
