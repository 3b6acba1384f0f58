#include "server/core/usage.h"

namespace wsched::core {

const char* EndReasonName(EndReason reason) {
  switch (reason) {
    case EndReason::kStopped: return "stopped";
    case EndReason::kLost: return "lost";
    case EndReason::kNodeRemoved: return "node_removed";
    case EndReason::kIdle: return "idle";
  }
  return "unknown";
}

std::optional<EndReason> ParseEndReason(absl::string_view name) {
  for (EndReason reason :
       {EndReason::kStopped, EndReason::kLost, EndReason::kNodeRemoved, EndReason::kIdle}) {
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

}  // namespace wsched::core
