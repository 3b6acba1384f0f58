// The usage ledger's domain words: why a placement ended, and how usage is
// grouped and bucketed when summed. The ledger itself (one record per ended
// placement, start and end by the database's clock) is the store's
// (store/usage.h); docs/billing.md describes it.
#ifndef WSCHED_SERVER_CORE_USAGE_H_
#define WSCHED_SERVER_CORE_USAGE_H_

#include <optional>

#include "absl/strings/string_view.h"

namespace wsched::core {

// Why a placement ended; each ended placement leaves exactly one usage
// record with one of these.
enum class EndReason {
  kStopped,      // StopWorkspace, or a restart that stopped it first.
  kLost,         // Its node was marked lost (no heartbeat within the timeout).
  kNodeRemoved,  // Its node was removed (RemoveNode) while it was placed.
  kIdle,         // Stopped by the idle-GPU policy.
};

// "stopped", "lost", "node_removed", "idle": the stored and exported names.
const char* EndReasonName(EndReason reason);
std::optional<EndReason> ParseEndReason(absl::string_view name);

// Whether a stop (the group commit's kStop) may carry the reason: lost and
// node_removed are written by the node paths alone.
inline bool IsStopReason(EndReason reason) {
  return reason == EndReason::kStopped || reason == EndReason::kIdle;
}

// What SummarizeUsage groups by, and the calendar buckets it sums into.
enum class UsageGroup { kOrg, kProject, kClass };
enum class UsageBucket { kNone, kHour, kDay, kMonth };

const char* UsageGroupName(UsageGroup group);     // "org", "project", "class"
const char* UsageBucketName(UsageBucket bucket);  // "none", "hour", "day", "month"
std::optional<UsageGroup> ParseUsageGroup(absl::string_view name);
std::optional<UsageBucket> ParseUsageBucket(absl::string_view name);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_USAGE_H_
