#include "server/core/usage.h"

#include "absl/strings/str_cat.h"

namespace wsched::core {

const char* EndReasonName(EndReason reason) {
  switch (reason) {
    case EndReason::kStopped: return "stopped";
    case EndReason::kLost: return "lost";
    case EndReason::kNodeRemoved: return "node_removed";
    case EndReason::kIdle: return "idle";
    case EndReason::kBudget: return "budget";
  }
  return "unknown";
}

std::optional<EndReason> ParseEndReason(absl::string_view name) {
  for (EndReason reason :
       {EndReason::kStopped, EndReason::kLost, EndReason::kNodeRemoved, EndReason::kIdle,
        EndReason::kBudget}) {
    if (name == EndReasonName(reason)) return reason;
  }
  return std::nullopt;
}

const char* UsageGroupName(UsageGroup group) {
  switch (group) {
    case UsageGroup::kOrg: return "org";
    case UsageGroup::kProject: return "project";
    case UsageGroup::kClass: return "class";
  }
  return "unknown";
}

const char* UsageBucketName(UsageBucket bucket) {
  switch (bucket) {
    case UsageBucket::kNone: return "none";
    case UsageBucket::kHour: return "hour";
    case UsageBucket::kDay: return "day";
    case UsageBucket::kMonth: return "month";
  }
  return "unknown";
}

std::optional<UsageGroup> ParseUsageGroup(absl::string_view name) {
  for (UsageGroup group : {UsageGroup::kOrg, UsageGroup::kProject, UsageGroup::kClass}) {
    if (name == UsageGroupName(group)) return group;
  }
  return std::nullopt;
}

std::optional<UsageBucket> ParseUsageBucket(absl::string_view name) {
  for (UsageBucket bucket :
       {UsageBucket::kNone, UsageBucket::kHour, UsageBucket::kDay, UsageBucket::kMonth}) {
    if (name == UsageBucketName(bucket)) return bucket;
  }
  return std::nullopt;
}

std::optional<std::string> TimeZoneNameProblem(absl::string_view name) {
  if (name == "UTC") return std::nullopt;
  if (name.size() > 64 || name.empty() ||
      name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/_+-") !=
          absl::string_view::npos) {
    return "must be an IANA time zone name such as \"Europe/Berlin\" (at most 64 letters, digits, "
           "'/', '_', '+', '-')";
  }
  const size_t slash = name.find('/');
  if (slash == absl::string_view::npos || slash == 0 || slash + 1 == name.size()) {
    return absl::StrCat("\"", name,
                        "\" is an abbreviation or a legacy name, which the database reads as a fixed "
                        "offset or a POSIX rule; give an Area/Location name such as \"Europe/Berlin\", "
                        "or \"UTC\"");
  }
  return std::nullopt;
}

}  // namespace wsched::core
