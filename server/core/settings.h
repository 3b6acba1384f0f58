// Per-project and per-org class settings and policies.
#ifndef WSCHED_SERVER_CORE_SETTINGS_H_
#define WSCHED_SERVER_CORE_SETTINGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/core/spending_limit.h"

namespace wsched::core {

struct ProjectSettings {
  std::string project_id;
  std::string org_id;
  std::string default_class;                // Empty: none.
  std::vector<std::string> denied_classes;  // Project deny-list.
  // Within the org's (same period, no more GPU-hours); none: the org's alone.
  std::optional<SpendingLimit> spending_limit;
  friend bool operator==(const ProjectSettings&, const ProjectSettings&) = default;
};

inline constexpr int64_t kUnlimitedGpuQuota = -1;

struct OrgSettings {
  std::string org_id;
  std::string default_class;                 // Empty: none.
  std::vector<std::string> allowed_classes;  // Empty: all.
  int64_t gpu_quota = kUnlimitedGpuQuota;    // Max GPUs held at once.
  std::optional<SpendingLimit> spending_limit;  // None: no limit.
  friend bool operator==(const OrgSettings&, const OrgSettings&) = default;
};

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_SETTINGS_H_
