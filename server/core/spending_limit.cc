#include "server/core/spending_limit.h"

#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/civil_time.h"
#include "server/core/error_reason.h"
#include "server/core/usage.h"

namespace wsched::core {
namespace {

constexpr int64_t kMaxMicros = std::numeric_limits<int64_t>::max();

int64_t SaturatingAdd(int64_t a, int64_t b) {
  if (b > 0 && a > kMaxMicros - b) return kMaxMicros;
  return a + b;
}

// RFC 3339 in UTC with "Z", as the API's timestamps are written in JSON.
std::string Rfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d%ET%H:%M:%E*SZ", t, absl::UTCTimeZone());
}

std::string PeriodName(const SpendingPeriod& period) {
  if (period.kind == SpendingPeriod::Kind::kRolling) {
    return absl::StrCat("a rolling ", absl::FormatDuration(period.rolling));
  }
  return absl::StrCat("calendar months in ", period.time_zone);
}

}  // namespace

absl::Duration StopWarningOf(const SpendingLimit& limit) {
  return limit.stop_warning.value_or(kDefaultStopWarning);
}

int64_t GpuMicrosOf(const SpendingLimit& limit) {
  return std::llround(limit.gpu_hours * static_cast<double>(kGpuMicrosPerGpuHour));
}

std::vector<std::string> SpendingLimitProblems(const SpendingLimit& limit,
                                               absl::string_view field) {
  std::vector<std::string> problems;
  if (!std::isfinite(limit.gpu_hours) || limit.gpu_hours <= 0 || limit.gpu_hours > kMostGpuHours) {
    problems.push_back(
        absl::StrCat(field, ".gpu_hours: must be more than 0 and at most ", kMostGpuHours));
  } else if (GpuMicrosOf(limit) < 1) {
    problems.push_back(absl::StrCat(field, ".gpu_hours: must be at least one GPU-microsecond"));
  }
  const SpendingPeriod& period = limit.period;
  if (period.kind == SpendingPeriod::Kind::kCalendarMonth) {
    const std::string zone_field = absl::StrCat(field, ".period.calendar_month.time_zone");
    absl::TimeZone zone;
    if (auto problem = TimeZoneNameProblem(period.time_zone)) {
      problems.push_back(absl::StrCat(zone_field, ": ", *problem));
    } else if (!absl::LoadTimeZone(period.time_zone, &zone)) {
      problems.push_back(
          absl::StrCat(zone_field, ": \"", period.time_zone, "\" is no known time zone"));
    }
  } else if (period.rolling < kShortestRollingPeriod || period.rolling > kLongestRollingPeriod ||
             period.rolling % absl::Seconds(1) != absl::ZeroDuration()) {
    problems.push_back(absl::StrCat(field, ".period.rolling: must be whole seconds from ",
                                    absl::FormatDuration(kShortestRollingPeriod), " to ",
                                    absl::FormatDuration(kLongestRollingPeriod)));
  }
  for (size_t i = 0; i < limit.warn_at_percent.size(); ++i) {
    const int percent = limit.warn_at_percent[i];
    if (percent < 1 || percent > 1000) {
      problems.push_back(absl::StrCat(field, ".warn_at_percent[", i, "]: must be 1 to 1000"));
    } else if (i > 0 && percent <= limit.warn_at_percent[i - 1]) {
      problems.push_back(absl::StrCat(field, ".warn_at_percent[", i,
                                      "]: must be more than the one before (strictly ascending)"));
    }
  }
  if (limit.stop_warning) {
    const absl::Duration warning = *limit.stop_warning;
    if (limit.action != SpendingAction::kBlockAndStop) {
      problems.push_back(absl::StrCat(
          field, ".stop_warning: only with action block_and_stop (nothing is stopped)"));
    } else if (warning < absl::ZeroDuration() || warning > kLongestStopWarning ||
               warning % absl::Seconds(1) != absl::ZeroDuration()) {
      problems.push_back(absl::StrCat(field, ".stop_warning: must be whole seconds from 0 to ",
                                      absl::FormatDuration(kLongestStopWarning)));
    }
  }
  return problems;
}

std::vector<std::string> ProjectLimitOutsideOrg(const SpendingLimit& project,
                                                const std::optional<SpendingLimit>& org,
                                                absl::string_view field) {
  if (!org) return {};
  std::vector<std::string> problems;
  if (!(project.period == org->period)) {
    problems.push_back(absl::StrCat(field, ".period: must be the org's period (",
                                    PeriodName(org->period), "), not ",
                                    PeriodName(project.period)));
  }
  if (GpuMicrosOf(project) > GpuMicrosOf(*org)) {
    problems.push_back(absl::StrCat(field, ".gpu_hours: ", project.gpu_hours,
                                    " is more than the org's limit of ", org->gpu_hours));
  }
  return problems;
}

absl::StatusOr<PeriodBounds> PeriodAt(const SpendingPeriod& period, absl::Time now) {
  if (period.kind == SpendingPeriod::Kind::kRolling) {
    if (period.rolling <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError("a rolling period must be longer than zero");
    }
    return PeriodBounds{now - period.rolling, now + period.rolling};
  }
  absl::TimeZone zone;
  if (!absl::LoadTimeZone(period.time_zone, &zone)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown time zone \"", period.time_zone, "\""));
  }
  const absl::CivilMonth month = absl::ToCivilMonth(now, zone);
  // FromCivil takes a skipped local midnight (a zone that changes its clock
  // at midnight) as the instant the day begins after the change.
  return PeriodBounds{absl::FromCivil(absl::CivilSecond(month), zone),
                      absl::FromCivil(absl::CivilSecond(month + 1), zone)};
}

bool AdmitsWithinBudget(const BudgetFigures& figures) {
  return figures.spent < figures.limit &&
         SaturatingAdd(figures.spent, figures.committed) <= figures.limit;
}

int64_t CommittedGpuMicros(int64_t gpu_sevenths, absl::Duration interval) {
  if (gpu_sevenths <= 0 || interval <= absl::ZeroDuration()) return 0;
  const int64_t micros = absl::ToInt64Microseconds(interval);
  if (micros > kMaxMicros / gpu_sevenths) return kMaxMicros;
  const int64_t seventh_micros = gpu_sevenths * micros;
  return seventh_micros / 7 + (seventh_micros % 7 != 0 ? 1 : 0);
}

std::vector<int> CrossedPercents(const std::vector<int>& warn_at_percent, int64_t spent,
                                 int64_t limit) {
  std::vector<int> crossed;
  if (limit <= 0) return crossed;
  for (int percent : warn_at_percent) {
    // spent / limit >= percent / 100, without rounding (128 bits: spent may be large).
    if (static_cast<__int128>(spent) * 100 >= static_cast<__int128>(limit) * percent) {
      crossed.push_back(percent);
    }
  }
  return crossed;
}

std::optional<absl::Time> LimitReachedAt(int64_t spent, int64_t limit, int64_t per_hour,
                                         absl::Time now, absl::Time period_end) {
  if (spent >= limit) return now;
  if (per_hour <= 0) return std::nullopt;
  const absl::Time reached =
      now + absl::Hours(1) * (static_cast<double>(limit - spent) / static_cast<double>(per_hour));
  if (reached >= period_end) return std::nullopt;
  return reached;
}

std::string GpuSecondsFigure(int64_t gpu_micros) {
  const char* sign = gpu_micros < 0 ? "-" : "";
  const uint64_t magnitude = gpu_micros < 0 ? uint64_t{0} - static_cast<uint64_t>(gpu_micros)
                                            : static_cast<uint64_t>(gpu_micros);
  return absl::StrFormat("%s%d.%06d", sign, magnitude / kGpuMicrosPerGpuSecond,
                         magnitude % kGpuMicrosPerGpuSecond);
}

absl::Status BudgetExhaustedError(absl::string_view scope, absl::string_view id,
                                  absl::string_view class_id, const BudgetFigures& figures,
                                  const PeriodBounds& period, absl::Time now) {
  const std::string limit = GpuSecondsFigure(figures.limit);
  const std::string spent = GpuSecondsFigure(figures.spent);
  const std::string committed = GpuSecondsFigure(figures.committed);
  std::string message =
      absl::StrCat(scope, " ", id, " has spent ", spent, " of its spending limit of ", limit,
                   " GPU-seconds this period; class ", class_id, " commits to ", committed,
                   " more; the period resets at ", Rfc3339(period.end));
  ErrorDetails d;
  d.reason = ErrorReason::kBudgetExhausted;
  d.metadata = {{"scope", std::string(scope)},
                {std::string(scope), std::string(id)},
                {"class", std::string(class_id)},
                {"limit_gpu_seconds", limit},
                {"spent_gpu_seconds", spent},
                {"committed_gpu_seconds", committed},
                {"period_start", Rfc3339(period.start)},
                {"resets_at", Rfc3339(period.end)}};
  d.quota_violations.push_back({absl::StrCat(scope, ":", id, "/spending_limit"), message});
  d.retry_delay = std::max(period.end - now, absl::ZeroDuration());
  return ReasonError(std::move(message), std::move(d));
}

}  // namespace wsched::core
