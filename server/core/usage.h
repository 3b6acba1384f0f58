// The usage ledger's domain words: why a placement ended, and how usage is
// grouped and bucketed when summed. The ledger itself (one record per ended
// placement, start and end by the database's clock) is the store's
// (store/usage_query.h); docs/billing.md describes it.
#ifndef WSCHED_SERVER_CORE_USAGE_H_
#define WSCHED_SERVER_CORE_USAGE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace wsched::core {

// Why a placement ended; each ended placement leaves exactly one usage
// record with one of these.
enum class EndReason {
  kStopped,      // StopWorkspace, or a restart that stopped it first.
  kLost,         // Its node was marked lost (no heartbeat within the timeout).
  kNodeRemoved,  // Its node was removed (RemoveNode) while it was placed.
  kIdle,         // Stopped by the idle-GPU policy.
  kBudget,       // Stopped by a spending limit with action block_and_stop.
};

// "stopped", "lost", "node_removed", "idle", "budget": the stored and exported names.
const char* EndReasonName(EndReason reason);
std::optional<EndReason> ParseEndReason(absl::string_view name);

// Whether a stop (the group commit's kStop) may carry the reason: lost and
// node_removed are written by the node paths alone.
inline bool IsStopReason(EndReason reason) {
  return reason == EndReason::kStopped || reason == EndReason::kIdle ||
         reason == EndReason::kBudget;
}

// What SummarizeUsage groups by, and the calendar buckets it sums into.
enum class UsageGroup { kOrg, kProject, kClass };
enum class UsageBucket { kNone, kHour, kDay, kMonth };

const char* UsageGroupName(UsageGroup group);     // "org", "project", "class"
const char* UsageBucketName(UsageBucket bucket);  // "none", "hour", "day", "month"
std::optional<UsageGroup> ParseUsageGroup(absl::string_view name);
std::optional<UsageBucket> ParseUsageBucket(absl::string_view name);

// Why `name` is not a time zone a usage summary takes, or nullopt. Only
// "UTC" and Area/Location names ("Europe/Berlin", "America/New_York",
// "Etc/GMT+3") are: PostgreSQL reads an abbreviation ("CET", "EST") as a
// fixed offset without summer time, and a bare legacy name ("EST5EDT") as
// a POSIX rule, so a July day's buckets would be an hour off the local
// calendar. Whether a name is known is the database's (or the machine's)
// check.
std::optional<std::string> TimeZoneNameProblem(absl::string_view name);

// What the ledger answers with (store/usage_query.h has the queries). Times are
// the database's, to the microsecond. Every figure is a resource amount
// (GPUs, CPU millicores, memory bytes) times an exact duration in
// microseconds; the products are exact decimal strings of seconds with six
// fraction digits ("3600.000000"), because a month of a fleet's
// memory-byte-seconds does not fit in 64 bits.
struct UsageFigures {
  int64_t duration_micros = 0;  // Of one record; the sum of them in a summary.
  std::string gpu_seconds = "0.000000";
  std::string cpu_millicore_seconds = "0.000000";
  std::string memory_byte_seconds = "0.000000";
};

// One placement, counted within the range it was read for.
struct UsageRecord {
  std::string workspace_id;
  std::string org_id;
  std::string project_id;
  std::string user_id;
  std::string class_id;
  std::string pool;
  std::string node_name;
  int gpu_count = 0;
  std::vector<std::string> gpu_models;  // One per GPU held whole, in index order.
  // A slice class's MIG slice: its profile ("1g.18gb") and share of its GPU
  // (mig_compute_slices / 7, what gpu-seconds count); "" and 0 otherwise.
  std::string mig_profile;
  int mig_compute_slices = 0;
  int64_t cpu_millis = 0;
  int64_t memory_bytes = 0;
  absl::Time started_at;                // placed_at.
  std::optional<absl::Time> ended_at;   // Unset while it is open (placed now).
  std::optional<EndReason> end_reason;  // Unset while open.
  // The part of [started_at, ended_at or now) inside the range read.
  absl::Time counted_from;
  absl::Time counted_until;
  UsageFigures figures;
};

// The usage of one group in one calendar bucket.
struct UsageSummaryRow {
  // The bucket ([start, end), absolute times; the whole range for kNone).
  // Its figures count only what lies inside the range read too.
  absl::Time bucket_start;
  absl::Time bucket_end;
  // Of the groups asked for; empty for those not asked for.
  std::string org_id;
  std::string project_id;
  std::string class_id;
  UsageFigures figures;
  int64_t workspaces = 0;  // Distinct workspaces with usage in the bucket.
};

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_USAGE_H_
