#include "server/grpc/usage_service.h"

#include <google/protobuf/util/time_util.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/convert/usage_convert.h"
#include "server/core/error_reason.h"
#include "server/core/paging.h"
#include "server/grpc/handler.h"
#include "server/store/unit_of_work.h"

namespace wsched::grpc_api {
namespace {

constexpr char kService[] = "wsched.v1.UsageService";

absl::Time TimeOf(const google::protobuf::Timestamp& t) {
  return absl::FromUnixMicros(google::protobuf::util::TimeUtil::TimestampToMicroseconds(t));
}

bool Unscoped(const Principal& who) { return who.Has(Role::kAdmin) || who.Has(Role::kControlPlane); }

absl::Status OutsideScope(const Principal& who, const char* kind, const std::string& id) {
  return core::ReasonError(absl::StrCat(who.name, " may not read the usage of ", kind, " ", id),
                           {.reason = core::ErrorReason::kOutsideTokenScope,
                            .metadata = {{"principal", who.name}, {kind, id}}});
}

// A filter naming what the caller may not see is refused rather than
// answered empty: the caller learns it asked for the wrong thing.
absl::Status CheckNamedScope(const Principal& who, const std::string& org_id,
                             const std::string& project_id) {
  if (Unscoped(who)) return absl::OkStatus();
  if (!org_id.empty() && !who.CoversOrg(org_id)) return OutsideScope(who, "org", org_id);
  if (!project_id.empty() && !who.projects.empty() && who.projects.count(project_id) == 0) {
    return OutsideScope(who, "project", project_id);
  }
  return absl::OkStatus();
}

template <typename Request>
store::UsageFilter FilterOf(const Request& request, const Principal& who) {
  store::UsageFilter filter;
  filter.org_id = request.org_id();
  filter.project_id = request.project_id();
  filter.class_id = request.class_id();
  if (request.has_start_time()) filter.start = TimeOf(request.start_time());
  if (request.has_end_time()) filter.end = TimeOf(request.end_time());
  filter.scope = UsageScopeOf(who);
  return filter;
}

// The page token's filter part: a token only continues the listing it
// came from.
std::string CanonicalFilter(const v1::ListUsageRequest& request) {
  return absl::StrCat("org=", request.org_id(), ";project=", request.project_id(),
                      ";class=", request.class_id(), ";start=", request.start_time().seconds(), ".",
                      request.start_time().nanos(), ";end=", request.end_time().seconds(), ".",
                      request.end_time().nanos());
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

// Buckets a summary would have at most: its range over the shortest bucket
// of the kind (a DST day is 23 hours, a month 28 days).
int64_t BucketsAtMost(absl::Duration range, core::UsageBucket bucket) {
  switch (bucket) {
    case core::UsageBucket::kNone: return 1;
    case core::UsageBucket::kHour: return range / absl::Hours(1) + 2;
    case core::UsageBucket::kDay: return range / absl::Hours(23) + 2;
    case core::UsageBucket::kMonth: return range / absl::Hours(24 * 28) + 2;
  }
  return 1;
}

}  // namespace

store::UsageScope UsageScopeOf(const Principal& who) {
  store::UsageScope scope;
  scope.everything = Unscoped(who);
  if (scope.everything) return scope;
  scope.projects.assign(who.projects.begin(), who.projects.end());
  scope.orgs.assign(who.orgs.begin(), who.orgs.end());
  return scope;
}

absl::StatusOr<bool> UsageServiceImpl::KnownTimeZone(const std::string& zone) {
  {
    absl::MutexLock lock(&mu_);
    if (known_zones_.contains(zone)) return true;
  }
  bool known = false;
  absl::Status read = store::UnitOfWork::Run(*context_.db, "checking a time zone",
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

grpc::Status UsageServiceImpl::ListUsage(grpc::ServerContext* context,
                                         const v1::ListUsageRequest* request,
                                         v1::ListUsageResponse* response) {
  return Handle(context_, context, kService, "ListUsage", *request,
                [&](const Principal& who) -> absl::Status {
    if (absl::Status s = CheckNamedScope(who, request->org_id(), request->project_id()); !s.ok()) {
      return s;
    }
    auto page = core::ReadPageRequest(request->page_size(), request->page_token(),
                                      CanonicalFilter(*request));
    if (!page.ok()) return page.status();
    auto after = CursorOf(page->after);
    if (!after.ok()) return after.status();
    const store::UsageFilter filter = FilterOf(*request, who);
    std::vector<core::UsageRecord> rows;
    absl::Status read = store::UnitOfWork::Run(*context_.db, "listing usage",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
      auto listed = unit.usage().List(filter, *after, page->size + 1);
      if (!listed.ok()) return listed.status();
      rows = *std::move(listed);
      return absl::OkStatus();
    }, store::UnitOfWork::Mode::kSnapshot);
    if (!read.ok()) return read;
    auto records = core::PageFromRows(std::move(rows), *page, KeyOf);
    for (const auto& record : records.items) *response->add_records() = convert::ToProto(record);
    response->set_next_page_token(records.next_page_token);
    return absl::OkStatus();
  });
}

grpc::Status UsageServiceImpl::SummarizeUsage(grpc::ServerContext* context,
                                              const v1::SummarizeUsageRequest* request,
                                              v1::SummarizeUsageResponse* response) {
  return Handle(context_, context, kService, "SummarizeUsage", *request,
                [&](const Principal& who) -> absl::Status {
    if (absl::Status s = CheckNamedScope(who, request->org_id(), request->project_id()); !s.ok()) {
      return s;
    }
    store::UsageSummaryRequest summary;
    summary.filter = FilterOf(*request, who);
    // The request validation refused unknown values and duplicates.
    for (int group : request->group_by()) {
      summary.group_by.push_back(*convert::FromProto(static_cast<v1::UsageGroupBy>(group)));
    }
    summary.bucket = *convert::FromProto(request->bucket());
    if (BucketsAtMost(*summary.filter.end - *summary.filter.start, summary.bucket) >
        kMaxUsageBuckets) {
      return core::InvalidFieldError(
          "bucket", absl::StrCat("at most ", kMaxUsageBuckets,
                                 " buckets per summary: a shorter range or a coarser bucket"));
    }
    summary.time_zone = request->time_zone().empty() ? "UTC" : request->time_zone();
    absl::StatusOr<bool> known = KnownTimeZone(summary.time_zone);
    if (!known.ok()) return known.status();
    if (!*known) {
      return core::InvalidFieldError(
          "time_zone", absl::StrCat("\"", summary.time_zone,
                                    "\" is not a time zone the database knows: an IANA name "
                                    "such as \"Europe/Berlin\" or \"UTC\""));
    }
    summary.max_rows = kMaxUsageSummaryRows;
    std::vector<core::UsageSummaryRow> rows;
    absl::Status read = store::UnitOfWork::Run(*context_.db, "summarizing usage",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
      auto summed = unit.usage().Summarize(summary);
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
    for (const auto& row : rows) *response->add_rows() = convert::ToProto(row);
    return absl::OkStatus();
  });
}

}  // namespace wsched::grpc_api
