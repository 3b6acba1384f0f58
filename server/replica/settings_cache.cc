#include "server/replica/settings_cache.h"

#include "absl/strings/strip.h"

namespace wsched::replica {

std::optional<CachedSettings> SettingsCache::Get(const std::string& project_id,
                                                 const std::string& org_id) const {
  absl::MutexLock lock(&mu_);
  auto project = projects_.find(project_id);
  auto org = orgs_.find(org_id);
  if (project == projects_.end() || org == orgs_.end()) return std::nullopt;
  return CachedSettings{project->second.settings, project->second.version, org->second.settings,
                        org->second.version};
}

void SettingsCache::Put(const CachedSettings& settings) {
  absl::MutexLock lock(&mu_);
  // Bounded: a full cache starts over (entries are cheap to read again).
  if (projects_.size() >= max_entries_ || orgs_.size() >= max_entries_) {
    projects_.clear();
    orgs_.clear();
  }
  projects_[settings.project.project_id] = {settings.project, settings.project_version};
  orgs_[settings.org.org_id] = {settings.org, settings.org_version};
}

void SettingsCache::Invalidate(absl::string_view key) {
  absl::MutexLock lock(&mu_);
  if (absl::ConsumePrefix(&key, "project:")) projects_.erase(std::string(key));
  if (absl::ConsumePrefix(&key, "org:")) orgs_.erase(std::string(key));
}

void SettingsCache::Clear() {
  absl::MutexLock lock(&mu_);
  projects_.clear();
  orgs_.clear();
}

}  // namespace wsched::replica
