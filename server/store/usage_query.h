// The usage ledger's queries (migration 0010, docs/billing.md): what
// UsageRepository (unit_of_work.h) lists and sums, and by what. The rows it
// answers with are core's (core/usage.h). Free of libpqxx like every public
// store header.
#ifndef WSCHED_SERVER_STORE_USAGE_QUERY_H_
#define WSCHED_SERVER_STORE_USAGE_QUERY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "server/core/usage.h"

namespace wsched::store {

// Which orgs and projects a reader may see; the same rule as
// grpc_api::Principal::CoversProject.
struct UsageScope {
  bool everything = true;  // Admins and the control plane.
  // Otherwise: these projects when any are listed, else every project of
  // these orgs (an empty scope sees nothing).
  std::vector<std::string> projects;
  std::vector<std::string> orgs;
};

// Usage overlapping [start, end): a placement from a to b (b = now while it
// is open) counts from max(a, start) to min(b, end).
struct UsageFilter {
  std::string org_id;      // Empty = any.
  std::string project_id;  // Empty = any.
  std::string class_id;    // Empty = any.
  std::optional<absl::Time> start;  // Unset: no lower bound.
  std::optional<absl::Time> end;    // Unset: now.
  UsageScope scope;
};

// Where the next page of records starts: strictly after this key (the
// listing is by started_at, then workspace_id).
struct UsageCursor {
  absl::Time started_at;
  std::string workspace_id;
};

struct UsageSummaryRequest {
  UsageFilter filter;  // start and end are required.
  std::vector<core::UsageGroup> group_by;
  core::UsageBucket bucket = core::UsageBucket::kNone;
  std::string time_zone = "UTC";  // IANA name; buckets follow its calendar.
  int max_rows = 0;               // The caller refuses more (rows read: max_rows + 1).
};

// What an org or a project has spent, for a spending forecast (docs/billing.md
// "Spending limits"), in GPU-microseconds: since its period's start and over
// the hour before now(), ended placements to their end and running ones to
// now(), a slice its share; and the GPU sevenths its running placements hold.
struct SpendingReading {
  int64_t spent = 0;
  int64_t last_hour = 0;
  int64_t running_sevenths = 0;
};

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_USAGE_QUERY_H_
