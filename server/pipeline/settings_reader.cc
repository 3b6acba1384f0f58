#include "server/pipeline/settings_reader.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/core/class_resolution.h"

namespace wsched::pipeline {

absl::StatusOr<replica::CachedSettings> SettingsReader::Read(
    const std::string& project_id, const std::string& org_id, int64_t* org_gpu_sevenths_held,
    std::vector<core::BudgetStanding>* budgets) {
  absl::StatusOr<replica::StoredSettings> stored =
      store_->ReadSettings(project_id, org_id, org_gpu_sevenths_held != nullptr);
  if (!stored.ok()) return stored.status();
  if (org_gpu_sevenths_held != nullptr) *org_gpu_sevenths_held = stored->org_gpu_sevenths_held;
  if (budgets != nullptr) *budgets = std::move(stored->budgets);
  replica::CachedSettings read{std::move(stored->project), stored->project_version, std::move(stored->org),
                      stored->org_version};
  cache_->Put(read);
  return read;
}

std::optional<replica::CachedSettings> SettingsReader::CachedOrRead(const std::string& project_id,
                                                           const std::string& org_id) {
  if (std::optional<replica::CachedSettings> cached = cache_->Get(project_id, org_id)) return cached;
  absl::StatusOr<replica::CachedSettings> read = Read(project_id, org_id, nullptr);
  if (!read.ok()) return std::nullopt;
  return *read;
}

PendingLimits SettingsReader::LimitsOf(const core::Workspace& w) {
  PendingLimits limits;
  int64_t held = 0;
  absl::StatusOr<replica::CachedSettings> settings =
      Read(w.project_id, w.org_id, &held, &limits.budgets);
  if (!settings.ok()) return limits;
  if (auto rule = core::ForbiddingRule(w.class_id, settings->project, settings->org)) {
    limits.policy_denial = absl::StrCat("class ", w.class_id, " is ", *rule);
  }
  if (settings->org.gpu_quota >= 0) {
    limits.quota = placement::QuotaFigures{held, settings->org.gpu_quota};
  }
  limits.settings = *std::move(settings);
  return limits;
}

}  // namespace wsched::pipeline
