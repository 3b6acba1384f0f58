// The usage ledger's rules (docs/billing.md), as plain operations over the
// store: listing records page by page and summing them by group and
// calendar bucket, within what a reader may see. Which orgs and projects
// that is follows from the caller's principal: the transport's to say
// (grpc/usage_service.h).
#ifndef WSCHED_SERVER_APP_USAGE_OPERATIONS_H_
#define WSCHED_SERVER_APP_USAGE_OPERATIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/core/paging.h"
#include "server/core/spending_limit.h"
#include "server/core/usage.h"
#include "server/store/database.h"

namespace wsched::app {

// The most rows a summary answers with, and the most buckets it may ask for.
inline constexpr int kMaxUsageSummaryRows = 10'000;
inline constexpr int64_t kMaxUsageBuckets = 10'000;

// Which orgs and projects a reader may see.
struct UsageScope {
  bool everything = true;  // Admins and the control plane.
  // Otherwise: these projects when any are listed, else every project of
  // these orgs (an empty scope sees nothing).
  std::vector<std::string> projects;
  std::vector<std::string> orgs;
};

// Usage overlapping [start, end): a placement from a to b (b = now while it
// is open) counts from max(a, start) to min(b, end).
struct UsageQuery {
  std::string org_id;      // Empty = any.
  std::string project_id;  // Empty = any.
  std::string class_id;    // Empty = any.
  std::optional<absl::Time> start;  // Unset: no lower bound.
  std::optional<absl::Time> end;    // Unset: now.
  UsageScope scope;
};

struct UsageSummaryQuery {
  UsageQuery query;  // start and end are required.
  std::vector<core::UsageGroup> group_by;
  core::UsageBucket bucket = core::UsageBucket::kNone;
  std::string time_zone;  // IANA name; empty: UTC. Buckets follow its calendar.
};

// The query as a page token records it (the scope is the caller's, not
// part of what it asked for).
std::string UsageListingFilter(const UsageQuery& query);

// Buckets a summary of `range` would have at most: the range over the
// shortest bucket of the kind (a DST day is 23 hours, a month 28 days).
int64_t UsageBucketsAtMost(absl::Duration range, core::UsageBucket bucket);

// What a summary may ask before the database is asked anything: a range
// (INVALID_ARGUMENT naming start_time or end_time) of at most
// kMaxUsageBuckets buckets (naming bucket).
absl::Status CheckUsageSummaryQuery(const UsageSummaryQuery& summary);

// Where an org's or a project's spending limit stands (docs/billing.md
// "Spending limits"), by the database's clock. Amounts in GPU-microseconds.
struct SpendingForecast {
  std::string org_id;
  std::string project_id;                    // Empty: the org's limit.
  std::optional<core::SpendingLimit> limit;  // None: the figures of this UTC month.
  core::PeriodBounds period;
  absl::Time now;
  int64_t spent = 0;
  int64_t last_hour = 0;         // Spent over the hour before now: the rate per hour.
  int64_t running_sevenths = 0;  // GPU sevenths held by running workspaces now.
  std::optional<absl::Time> limit_reached;
  std::vector<int> crossed_percents;
};

class UsageOperations {
 public:
  explicit UsageOperations(store::Database* db) : db_(db) {}

  // By start, then workspace id; open placements counted to now. A token
  // continues only the query it was issued for.
  absl::StatusOr<core::Page<core::UsageRecord>> List(const UsageQuery& query, int page_size,
                                                     const std::string& page_token) const;

  // Totals by bucket, then group. INVALID_ARGUMENT naming time_zone for a
  // zone the database does not know; RESOURCE_EXHAUSTED past
  // kMaxUsageSummaryRows rows.
  absl::StatusOr<std::vector<core::UsageSummaryRow>> Summarize(const UsageSummaryQuery& summary);

  // The org's limit, or the project's when `project_id` is set (a project of
  // another org is INVALID_ARGUMENT naming project_id).
  absl::StatusOr<SpendingForecast> Forecast(const std::string& org_id,
                                            const std::string& project_id) const;

 private:
  // Whether the database knows `zone`; asked once per name (the zone list
  // is read from disk by PostgreSQL, tens of milliseconds).
  absl::StatusOr<bool> KnownTimeZone(const std::string& zone);

  store::Database* const db_;
  absl::Mutex mu_;
  absl::flat_hash_set<std::string> known_zones_ ABSL_GUARDED_BY(mu_);
};

}  // namespace wsched::app

#endif  // WSCHED_SERVER_APP_USAGE_OPERATIONS_H_
