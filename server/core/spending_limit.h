// Spending limits (docs/billing.md "Spending limits"): a budget of
// GPU-hours per period for an org or a project, the period's bounds at an
// instant, and the admission rule the group commit applies under the org's
// lock. Pure: every time is given, none is read.
//
// Amounts are integers of GPU-microseconds (a GPU held for one microsecond;
// a MIG slice its share of its GPU, rounded to the microsecond, as the
// ledger counts it), so sums are exact and a limit of a few GPU-seconds is
// not lost to rounding.
#ifndef WSCHED_SERVER_CORE_SPENDING_LIMIT_H_
#define WSCHED_SERVER_CORE_SPENDING_LIMIT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace wsched::core {

inline constexpr int64_t kGpuMicrosPerGpuHour = int64_t{3600} * 1000000;
inline constexpr int64_t kGpuMicrosPerGpuSecond = 1000000;

// What happens at the limit.
enum class SpendingAction {
  kBlockNew,      // New placements are refused; running workspaces go on.
  kBlockAndStop,  // Also stops running workspaces, after a warning.
};

struct SpendingPeriod {
  enum class Kind { kCalendarMonth, kRolling };
  Kind kind = Kind::kCalendarMonth;
  // Calendar months: "UTC" or an Area/Location name.
  std::string time_zone = "UTC";
  // Rolling: the window's length.
  absl::Duration rolling = absl::ZeroDuration();
  friend bool operator==(const SpendingPeriod&, const SpendingPeriod&) = default;
};

struct SpendingLimit {
  double gpu_hours = 0;  // As set; GpuMicrosOf is the amount enforced.
  SpendingPeriod period;
  std::vector<int> warn_at_percent;  // Strictly ascending, 1..1000.
  SpendingAction action = SpendingAction::kBlockNew;
  // kBlockAndStop: how long running workspaces are warned before they are
  // stopped (unset: kDefaultStopWarning).
  std::optional<absl::Duration> stop_warning;
  friend bool operator==(const SpendingLimit&, const SpendingLimit&) = default;
};

// The warning before a block_and_stop stop: unset means the default; at
// most a day, so a workspace past its budget does not run on for long.
inline constexpr absl::Duration kDefaultStopWarning = absl::Minutes(10);
inline constexpr absl::Duration kLongestStopWarning = absl::Hours(24);
absl::Duration StopWarningOf(const SpendingLimit& limit);

// The limit in GPU-microseconds, rounded to the nearest.
int64_t GpuMicrosOf(const SpendingLimit& limit);

// The rolling windows a limit may have (whole seconds in between).
inline constexpr absl::Duration kShortestRollingPeriod = absl::Minutes(1);
inline constexpr absl::Duration kLongestRollingPeriod = absl::Hours(24 * 366);
// The most GPU-hours a limit may have: its GPU-microseconds fit in 63 bits
// with room for a period's sums.
inline constexpr double kMostGpuHours = 1e9;

// "<field>: <rule>" lines for what is wrong with `limit`, `field` its path
// (e.g. "settings.spending_limit"); empty when it is valid. The time zone
// is checked by name and loaded (absl's tzdata): an unknown zone is wrong.
std::vector<std::string> SpendingLimitProblems(const SpendingLimit& limit, absl::string_view field);

// Why a project's limit does not fit inside its org's, as "<field>: <rule>"
// lines naming the project's field: the same period, and at most the
// org's GPU-hours. No org limit: anything fits.
std::vector<std::string> ProjectLimitOutsideOrg(const SpendingLimit& project,
                                                const std::optional<SpendingLimit>& org,
                                                absl::string_view field);

// The period that contains `now`. A calendar month runs from local midnight
// of its 1st to local midnight of the next month's 1st in its time zone (a
// month with a summer-time change is an hour shorter or longer). A rolling
// window is [now - length, now + length): its end is when everything
// counted now has left it, the latest the usage counted now stops counting.
struct PeriodBounds {
  absl::Time start;
  absl::Time end;
  friend bool operator==(const PeriodBounds&, const PeriodBounds&) = default;
};
absl::StatusOr<PeriodBounds> PeriodAt(const SpendingPeriod& period, absl::Time now);

// The figures of one admission, in GPU-microseconds.
struct BudgetFigures {
  int64_t limit = 0;
  // Ended placements and running workspaces up to now, inside the period.
  int64_t spent = 0;
  // What the new placement commits to: its GPUs for the first interval.
  int64_t committed = 0;
};

// A spending limit over the workspace as the commit admits against it
// (store/batch_budgets.h), in GPU-microseconds.
struct BudgetStanding {
  std::string scope;  // "org" or "project".
  std::string id;
  int64_t limit = 0;
  // Spent in the period: ended placements, and running ones to now or to
  // the end of their first interval, whichever is later.
  int64_t spent = 0;
  // What a new placement commits to: its GPUs for this long.
  absl::Duration committed_interval = absl::ZeroDuration();
  absl::Time period_end;  // When the limit opens again.
  friend bool operator==(const BudgetStanding&, const BudgetStanding&) = default;
};

// The admission rule for a placement that holds GPUs (one that holds none
// is not judged): spent + committed stays within the limit, and something
// is left (a zero commitment, --budget_interval=0, is not admitted at the
// limit). Saturates instead of overflowing.
bool AdmitsWithinBudget(const BudgetFigures& figures);

// What a placement holding `gpu_sevenths` (sevenths of a GPU) commits to
// for `interval`: GPU-microseconds, a slice's share rounded up.
int64_t CommittedGpuMicros(int64_t gpu_sevenths, absl::Duration interval);

// Percents of `warn_at_percent` that `spent` has reached of `limit`.
std::vector<int> CrossedPercents(const std::vector<int>& warn_at_percent, int64_t spent,
                                 int64_t limit);

// When `spent` reaches `limit` spending `per_hour` GPU-microseconds an hour
// from `now`: `now` when it has already; nullopt when it does not before
// `period_end` or nothing is being spent.
std::optional<absl::Time> LimitReachedAt(int64_t spent, int64_t limit, int64_t per_hour,
                                         absl::Time now, absl::Time period_end);

// "7.500000": GPU-microseconds as GPU-seconds with six fraction digits.
std::string GpuSecondsFigure(int64_t gpu_micros);

// RESOURCE_EXHAUSTED, BUDGET_EXHAUSTED: QuotaFailure on
// "<scope>:<id>/spending_limit" (scope "org" or "project"), RetryInfo until
// the period's end, the figures in the metadata.
absl::Status BudgetExhaustedError(absl::string_view scope, absl::string_view id,
                                  absl::string_view class_id, const BudgetFigures& figures,
                                  const PeriodBounds& period, absl::Time now);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_SPENDING_LIMIT_H_
