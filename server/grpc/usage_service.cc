#include "server/grpc/usage_service.h"

#include <google/protobuf/util/time_util.h>

#include "absl/strings/str_cat.h"
#include "server/convert/convert.h"
#include "server/convert/time_convert.h"
#include "server/convert/usage_convert.h"
#include "server/core/error_reason.h"
#include "server/grpc/handler.h"

namespace wsched::grpc_api {
namespace {

constexpr char kService[] = "wsched.v1.UsageService";

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
app::UsageQuery QueryOf(const Request& request, const Principal& who) {
  app::UsageQuery query;
  query.org_id = request.org_id();
  query.project_id = request.project_id();
  query.class_id = request.class_id();
  if (request.has_start_time()) query.start = convert::TimeFromProto(request.start_time());
  if (request.has_end_time()) query.end = convert::TimeFromProto(request.end_time());
  query.scope = UsageScopeOf(who);
  return query;
}

app::UsageSummaryQuery SummaryQueryOf(const v1::SummarizeUsageRequest& request,
                                      const Principal& who) {
  app::UsageSummaryQuery summary;
  summary.query = QueryOf(request, who);
  // The request validation refused unknown values and duplicates.
  for (int group : request.group_by()) {
    summary.group_by.push_back(*convert::FromProto(static_cast<v1::UsageGroupBy>(group)));
  }
  summary.bucket = *convert::FromProto(request.bucket());
  summary.time_zone = request.time_zone();
  return summary;
}

google::protobuf::Timestamp TimestampOf(absl::Time time) {
  return google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(time));
}

v1::GetSpendingForecastResponse ForecastToProto(const app::SpendingForecast& forecast) {
  v1::GetSpendingForecastResponse out;
  out.set_org_id(forecast.org_id);
  out.set_project_id(forecast.project_id);
  if (forecast.limit) {
    *out.mutable_limit() = convert::ToProto(*forecast.limit);
    out.set_limit_gpu_seconds(core::GpuSecondsFigure(core::GpuMicrosOf(*forecast.limit)));
  }
  *out.mutable_period_start_time() = TimestampOf(forecast.period.start);
  *out.mutable_period_end_time() = TimestampOf(forecast.period.end);
  *out.mutable_now() = TimestampOf(forecast.now);
  out.set_spent_gpu_seconds(core::GpuSecondsFigure(forecast.spent));
  out.set_running_gpus(static_cast<double>(forecast.running_sevenths) / 7);
  out.set_rate_gpu_seconds_per_hour(static_cast<double>(forecast.last_hour) /
                                    core::kGpuMicrosPerGpuSecond);
  if (forecast.limit_reached)
    *out.mutable_limit_reached_time() = TimestampOf(*forecast.limit_reached);
  for (int percent : forecast.crossed_percents) out.add_crossed_percents(percent);
  return out;
}

}  // namespace

app::UsageScope UsageScopeOf(const Principal& who) {
  app::UsageScope scope;
  scope.everything = Unscoped(who);
  if (scope.everything) return scope;
  scope.projects.assign(who.projects.begin(), who.projects.end());
  scope.orgs.assign(who.orgs.begin(), who.orgs.end());
  return scope;
}

grpc::Status UsageServiceImpl::ListUsage(grpc::ServerContext* context,
                                         const v1::ListUsageRequest* request,
                                         v1::ListUsageResponse* response) {
  return Handle(context_, context, kService, "ListUsage", *request,
                [&](const Principal& who) -> absl::Status {
    if (absl::Status s = CheckNamedScope(who, request->org_id(), request->project_id()); !s.ok()) {
      return s;
    }
    auto page = context_.usage->List(QueryOf(*request, who), request->page_size(),
                                     request->page_token());
    if (!page.ok()) return page.status();
    for (const auto& record : page->items) *response->add_records() = convert::ToProto(record);
    response->set_next_page_token(page->next_page_token);
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
    auto rows = context_.usage->Summarize(SummaryQueryOf(*request, who));
    if (!rows.ok()) return rows.status();
    for (const auto& row : *rows) *response->add_rows() = convert::ToProto(row);
    return absl::OkStatus();
  });
}

grpc::Status UsageServiceImpl::GetSpendingForecast(grpc::ServerContext* context,
                                                   const v1::GetSpendingForecastRequest* request,
                                                   v1::GetSpendingForecastResponse* response) {
  return Handle(
      context_, context, kService, "GetSpendingForecast", *request,
      [&](const Principal& who) -> absl::Status {
        if (absl::Status s = CheckNamedScope(who, request->org_id(), request->project_id());
            !s.ok()) {
          return s;
        }
        if (request->project_id().empty() && !Unscoped(who) && !who.projects.empty()) {
          return OutsideScope(who, "org", request->org_id());
        }
        auto forecast = context_.usage->Forecast(request->org_id(), request->project_id());
        if (!forecast.ok()) return forecast.status();
        *response = ForecastToProto(*forecast);
        return absl::OkStatus();
      });
}

}  // namespace wsched::grpc_api
