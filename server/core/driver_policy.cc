#include "server/core/driver_policy.h"

#include "absl/strings/str_cat.h"

namespace wsched::core {

bool GlobMatch(absl::string_view pattern, absl::string_view text) {
  // Iterative glob with single-star backtracking: linear for our short inputs.
  size_t p = 0, t = 0, star = absl::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != absl::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::optional<DriverRequirement> FindDriverRequirement(
    const std::vector<DriverPolicyEntry>& policy, absl::string_view kernel,
    absl::string_view os_id, absl::string_view os_version) {
  const DriverPolicyEntry* best = nullptr;
  for (const DriverPolicyEntry& entry : policy) {
    if (entry.os_id != os_id) continue;
    if (!entry.os_version.empty() && entry.os_version != os_version) continue;
    if (entry.kernel == kernel) {
      best = &entry;
      break;
    }
    if (best == nullptr && GlobMatch(entry.kernel, kernel)) best = &entry;
  }
  if (best == nullptr) return std::nullopt;
  return DriverRequirement{
      best->driver_version,
      absl::StrCat(best->installer_repo, ":", best->driver_branch, "-", kernel, "-", os_id,
                   os_version)};
}

}  // namespace wsched::core
