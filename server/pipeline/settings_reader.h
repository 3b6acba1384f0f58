// A project's and an org's class settings as placement and its answers
// need them: from this replica's cache where a decision may rest on it
// (the commit confirms the versions used, settings_cache.h), read from the
// store where an answer must reflect a change just made anywhere (the
// policy and quota a pending workspace is told of). No state of its own:
// the cache is the mirror's, kept current by the change feed.
#ifndef WSCHED_SERVER_PIPELINE_SETTINGS_READER_H_
#define WSCHED_SERVER_PIPELINE_SETTINGS_READER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/workspace.h"
#include "server/placement/pending_reason.h"
#include "server/replica/settings_cache.h"
#include "server/replica/stores.h"

namespace wsched::pipeline {

// The spending limits, org quota and class policy as they apply to a
// pending workspace now.
struct PendingLimits {
  std::vector<core::BudgetStanding> budgets;
  std::optional<placement::QuotaFigures> quota;
  std::optional<std::string> policy_denial;
  // The settings both were read from, for the fixes a read offers
  // (placement/fixes.h judges another class by them); unset when
  // unreadable.
  std::optional<replica::CachedSettings> settings;
};

class SettingsReader {
 public:
  SettingsReader(replica::PlacementStore* store, replica::SettingsCache* cache)
      : store_(store), cache_(cache) {}

  // Reads both rows (and, with `org_gpu_sevenths_held`, the GPUs the org holds, in sevenths,
  // now, and into `budgets` what the limits over both have spent) and caches the settings.
  absl::StatusOr<replica::CachedSettings> Read(
      const std::string& project_id, const std::string& org_id, int64_t* org_gpu_sevenths_held,
      std::vector<core::BudgetStanding>* budgets = nullptr);
  // Cached, else read and cached; nullopt when unreadable.
  std::optional<replica::CachedSettings> CachedOrRead(const std::string& project_id,
                                             const std::string& org_id);
  // Cached only (the hot path reads nothing).
  std::optional<replica::CachedSettings> Cached(const std::string& project_id,
                                       const std::string& org_id) const {
    return cache_->Get(project_id, org_id);
  }
  // What a full read of the placement inputs found, for the next decision.
  void Remember(const replica::CachedSettings& settings) { cache_->Put(settings); }
  // Read, not cached: the answer must reflect a settings change the caller
  // just made, whichever replica it made it on. Unreadable (the database
  // down): neither layer is judged.
  PendingLimits LimitsOf(const core::Workspace& w);

 private:
  replica::PlacementStore* const store_;
  replica::SettingsCache* const cache_;
};

}  // namespace wsched::pipeline

#endif  // WSCHED_SERVER_PIPELINE_SETTINGS_READER_H_
