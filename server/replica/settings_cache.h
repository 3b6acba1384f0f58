// Project and org class settings as this replica last read them, with the
// versions of their rows, so the hot path reads nothing before deciding:
// the change feed drops an entry when its row changes anywhere, and the
// group commit confirms the versions a decision used (write_batch.h).
#ifndef WSCHED_SERVER_REPLICA_SETTINGS_CACHE_H_
#define WSCHED_SERVER_REPLICA_SETTINGS_CACHE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "server/core/settings.h"

namespace wsched::replica {

struct CachedSettings {
  core::ProjectSettings project;
  int64_t project_version = 0;  // 0: no row.
  core::OrgSettings org;
  int64_t org_version = 0;
};

class SettingsCache {
 public:
  explicit SettingsCache(size_t max_entries = 100'000) : max_entries_(max_entries) {}
  SettingsCache(const SettingsCache&) = delete;
  SettingsCache& operator=(const SettingsCache&) = delete;

  // Both rows, or nothing.
  std::optional<CachedSettings> Get(const std::string& project_id, const std::string& org_id) const;
  void Put(const CachedSettings& settings);
  // A change-feed entry: "project:<id>" or "org:<id>".
  void Invalidate(absl::string_view key);
  void Clear();
  // Names this object's lock in its owner's lock order
  // (ABSL_ACQUIRED_BEFORE/AFTER in scheduler.h); const, so nothing can lock
  // it through this.
  const absl::Mutex& mutex() const ABSL_LOCK_RETURNED(mu_) { return mu_; }

 private:
  struct Project {
    core::ProjectSettings settings;
    int64_t version = 0;
  };
  struct Org {
    core::OrgSettings settings;
    int64_t version = 0;
  };
  const size_t max_entries_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Project> projects_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Org> orgs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace wsched::replica

#endif  // WSCHED_SERVER_REPLICA_SETTINGS_CACHE_H_
