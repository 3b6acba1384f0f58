#include "server/app/usage_operations.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/app/listing_filter.h"
#include "server/core/error_reason.h"
#include "server/store/unit_of_work.h"
#include "server/store/usage_query.h"

namespace wsched::app {
namespace {

store::UsageFilter FilterOf(const UsageQuery& query) {
  store::UsageFilter filter;
  filter.org_id = query.org_id;
  filter.project_id = query.project_id;
  filter.class_id = query.class_id;
  filter.start = query.start;
  filter.end = query.end;
  filter.scope.everything = query.scope.everything;
  filter.scope.projects = query.scope.projects;
  filter.scope.orgs = query.scope.orgs;
  return filter;
}

// Page keys: "<start in microseconds>:<workspace id>".
std::string KeyOf(const core::UsageRecord& record) {
  return absl::StrCat(absl::ToUnixMicros(record.started_at), ":", record.workspace_id);
}

absl::StatusOr<std::optional<store::UsageCursor>> CursorOf(const std::string& after) {
  if (after.empty()) return std::optional<store::UsageCursor>();
  const size_t colon = after.find(':');
  int64_t micros = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(after.substr(0, colon), &micros)) {
    return core::InvalidFieldError("page_token", "is not a token of this listing");
  }
  return std::optional<store::UsageCursor>(
      store::UsageCursor{absl::FromUnixMicros(micros), after.substr(colon + 1)});
}

std::string ZoneOf(const UsageSummaryQuery& summary) {
  return summary.time_zone.empty() ? "UTC" : summary.time_zone;
}

}  // namespace

std::string UsageListingFilter(const UsageQuery& query) {
  return absl::StrCat("org=", query.org_id, ";project=", query.project_id,
                      ";class=", query.class_id, ";start=", TimeBoundText(query.start),
                      ";end=", TimeBoundText(query.end));
}

int64_t UsageBucketsAtMost(absl::Duration range, core::UsageBucket bucket) {
  switch (bucket) {
    case core::UsageBucket::kNone: return 1;
    case core::UsageBucket::kHour: return range / absl::Hours(1) + 2;
    case core::UsageBucket::kDay: return range / absl::Hours(23) + 2;
    case core::UsageBucket::kMonth: return range / absl::Hours(24 * 28) + 2;
  }
  return 1;
}

absl::Status CheckUsageSummaryQuery(const UsageSummaryQuery& summary) {
  const UsageQuery& query = summary.query;
  if (!query.start) return core::InvalidFieldError("start_time", "is required");
  if (!query.end) return core::InvalidFieldError("end_time", "is required");
  if (*query.end <= *query.start) {
    return core::InvalidFieldError("end_time", "must be after start_time");
  }
  if (UsageBucketsAtMost(*query.end - *query.start, summary.bucket) > kMaxUsageBuckets) {
    return core::InvalidFieldError(
        "bucket", absl::StrCat("at most ", kMaxUsageBuckets,
                               " buckets per summary: a shorter range or a coarser bucket"));
  }
  return absl::OkStatus();
}

absl::StatusOr<core::Page<core::UsageRecord>> UsageOperations::List(
    const UsageQuery& query, int page_size, const std::string& page_token) const {
  auto page = core::ReadPageRequest(page_size, page_token, UsageListingFilter(query));
  if (!page.ok()) return page.status();
  auto after = CursorOf(page->after);
  if (!after.ok()) return after.status();
  const store::UsageFilter filter = FilterOf(query);
  std::vector<core::UsageRecord> rows;
  absl::Status read = store::UnitOfWork::Run(*db_, "listing usage",
                                             [&](store::UnitOfWork& unit) -> absl::Status {
    auto listed = unit.usage().List(filter, *after, page->size + 1);
    if (!listed.ok()) return listed.status();
    rows = *std::move(listed);
    return absl::OkStatus();
  }, store::UnitOfWork::Mode::kSnapshot);
  if (!read.ok()) return read;
  return core::PageFromRows(std::move(rows), *page, KeyOf);
}

absl::StatusOr<std::vector<core::UsageSummaryRow>> UsageOperations::Summarize(
    const UsageSummaryQuery& summary) {
  if (absl::Status checked = CheckUsageSummaryQuery(summary); !checked.ok()) return checked;
  store::UsageSummaryRequest request;
  request.filter = FilterOf(summary.query);
  request.group_by = summary.group_by;
  request.bucket = summary.bucket;
  request.time_zone = ZoneOf(summary);
  request.max_rows = kMaxUsageSummaryRows;
  absl::StatusOr<bool> known = KnownTimeZone(request.time_zone);
  if (!known.ok()) return known.status();
  if (!*known) {
    return core::InvalidFieldError(
        "time_zone", absl::StrCat("\"", request.time_zone,
                                  "\" is not a time zone the database knows: an IANA name "
                                  "such as \"Europe/Berlin\" or \"UTC\""));
  }
  std::vector<core::UsageSummaryRow> rows;
  absl::Status read = store::UnitOfWork::Run(*db_, "summarizing usage",
                                             [&](store::UnitOfWork& unit) -> absl::Status {
    auto summed = unit.usage().Summarize(request);
    if (!summed.ok()) return summed.status();
    rows = *std::move(summed);
    return absl::OkStatus();
  }, store::UnitOfWork::Mode::kSnapshot);
  if (!read.ok()) return read;
  if (static_cast<int>(rows.size()) > kMaxUsageSummaryRows) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the summary has more than ", kMaxUsageSummaryRows,
        " rows: ask for a shorter range, a coarser bucket or fewer groups"));
  }
  return rows;
}

absl::StatusOr<bool> UsageOperations::KnownTimeZone(const std::string& zone) {
  {
    absl::MutexLock lock(&mu_);
    if (known_zones_.contains(zone)) return true;
  }
  bool known = false;
  absl::Status read = store::UnitOfWork::Run(*db_, "checking a time zone",
                                             [&](store::UnitOfWork& unit) -> absl::Status {
    known = unit.usage().KnownTimeZone(zone);
    return absl::OkStatus();
  }, store::UnitOfWork::Mode::kSnapshot);
  if (!read.ok()) return read;
  // Only names that exist are kept: a caller cannot grow the set at will
  // beyond the database's few hundred zones.
  if (known) {
    absl::MutexLock lock(&mu_);
    known_zones_.insert(zone);
  }
  return known;
}

absl::StatusOr<SpendingForecast> UsageOperations::Forecast(const std::string& org_id,
                                                           const std::string& project_id) const {
  SpendingForecast forecast;
  forecast.org_id = org_id;
  forecast.project_id = project_id;
  absl::Status status = store::UnitOfWork::Run(
      *db_, "reading a spending forecast", [&](store::UnitOfWork& unit) -> absl::Status {
        if (project_id.empty()) {
          auto org = unit.settings().LoadOrg(org_id);
          if (!org.ok()) return org.status();
          forecast.limit = org->spending_limit;
        } else {
          auto project = unit.settings().LoadProject(project_id);
          if (!project.ok()) return project.status();
          if (!project->org_id.empty() && project->org_id != org_id) {
            return core::InvalidFieldError(
                "project_id",
                absl::StrCat("project ", project_id, " belongs to org ", project->org_id));
          }
          forecast.limit = project->spending_limit;
        }
        forecast.now = unit.usage().DatabaseNow();
        const core::SpendingPeriod period =
            forecast.limit ? forecast.limit->period : core::SpendingPeriod{};
        auto bounds = core::PeriodAt(period, forecast.now);
        if (!bounds.ok()) return bounds.status();
        forecast.period = *bounds;
        const store::SpendingReading reading = unit.usage().ReadSpending(
            project_id.empty() ? "org" : "project", project_id.empty() ? org_id : project_id,
            forecast.period.start);
        forecast.spent = reading.spent;
        forecast.last_hour = reading.last_hour;
        forecast.running_sevenths = reading.running_sevenths;
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  if (forecast.limit) {
    const int64_t limit = core::GpuMicrosOf(*forecast.limit);
    forecast.limit_reached = core::LimitReachedAt(forecast.spent, limit, forecast.last_hour,
                                                  forecast.now, forecast.period.end);
    forecast.crossed_percents =
        core::CrossedPercents(forecast.limit->warn_at_percent, forecast.spent, limit);
  }
  return forecast;
}

}  // namespace wsched::app
