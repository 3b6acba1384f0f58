#include "server/cli/usage_command.h"

#include <iostream>

#include <google/protobuf/util/time_util.h>

#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "server/cli/output.h"
#include "server/cli/all_pages.h"
#include "server/cli/structured_output.h"
#include "server/cli/usage_format.h"
#include "server/core/spending_limit.h"
#include "server/core/usage.h"
#include "wsched/v1/settings.grpc.pb.h"
#include "wsched/v1/usage.grpc.pb.h"

namespace wsched::cli {
namespace {

using google::protobuf::util::TimeUtil;

constexpr char kUsage[] =
    "usage: wschedctl usage list|summary [--org=O] [--project=P] [--class=C] [--since=T] "
    "[--until=T] [--group-by=org,project,class] [--bucket=hour|day|month] [--time-zone=Z] "
    "[-o table|wide|json|yaml|csv]\n"
    "       wschedctl usage limits|forecast --org=O [--project=P] [--time-zone=Z] "
    "[-o table|json|yaml]\n";

absl::Time TimeOf(const google::protobuf::Timestamp& t) {
  return absl::FromUnixMicros(TimeUtil::TimestampToMicroseconds(t));
}

google::protobuf::Timestamp TimestampOf(absl::Time t) {
  return TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(t));
}

std::string Printed(const google::protobuf::Timestamp& t, const absl::TimeZone& zone) {
  return t.seconds() == 0 && t.nanos() == 0 ? "" : UsageTimeText(TimeOf(t), zone);
}

// "7200.500000" seconds as hours with three decimals, for people; the
// exact figure is in json, yaml and csv.
std::string Hours(const std::string& seconds) {
  double value = 0;
  if (!absl::SimpleAtod(seconds, &value)) return seconds;
  return absl::StrFormat("%.3f", value / 3600);
}

std::string Reason(v1::UsageEndReason reason) {
  if (reason == v1::USAGE_END_REASON_UNSPECIFIED) return "open";
  return absl::StrReplaceAll(ShortEnumName(v1::UsageEndReason_Name(reason), "USAGE_END_REASON_"),
                             {{"-", "_"}});
}

// The filters and range both subcommands send.
struct Query {
  absl::TimeZone zone;
  std::optional<absl::Time> since, until;
};

absl::StatusOr<Query> QueryOf(const Options& options) {
  Query query;
  const std::string zone = options.time_zone.empty() ? "UTC" : options.time_zone;
  // The server refuses the same names (core/usage.h), so the times this
  // prints are in the calendar the summary's buckets follow.
  if (std::optional<std::string> problem = core::TimeZoneNameProblem(zone)) {
    return absl::InvalidArgumentError(absl::StrCat("--time-zone: ", *problem));
  }
  if (!absl::LoadTimeZone(zone, &query.zone)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--time-zone: \"", zone, "\" is not a time zone this machine knows (an IANA name such as "
        "Europe/Berlin; is tzdata installed?)"));
  }
  const absl::Time now = absl::Now();
  for (auto [text, flag, out] : {std::tuple{&options.since_text, "since", &query.since},
                                 std::tuple{&options.until_text, "until", &query.until}}) {
    if (text->empty()) continue;
    absl::StatusOr<absl::Time> t = ParseUsageTime(*text, flag, now, query.zone);
    if (!t.ok()) return t.status();
    *out = *t;
  }
  return query;
}

template <typename Request>
void SetFilters(const Options& options, const Query& query, Request& request) {
  request.set_org_id(options.org);
  request.set_project_id(options.project);
  request.set_class_id(options.class_id);
  if (query.since) *request.mutable_start_time() = TimestampOf(*query.since);
  if (query.until) *request.mutable_end_time() = TimestampOf(*query.until);
}

const std::vector<std::string>& RecordColumns() {
  static const auto* columns = new std::vector<std::string>{"workspace_id",
                                                            "org_id",
                                                            "project_id",
                                                            "user_id",
                                                            "class_id",
                                                            "pool",
                                                            "node_name",
                                                            "gpu_count",
                                                            "gpu_models",
                                                            "cpu_millis",
                                                            "memory_bytes",
                                                            "start_time",
                                                            "end_time",
                                                            "end_reason",
                                                            "counted_start_time",
                                                            "counted_end_time",
                                                            "duration_micros",
                                                            "gpu_seconds",
                                                            "cpu_millicore_seconds",
                                                            "memory_byte_seconds",
                                                            "mig_profile",
                                                            "mig_compute_slices"};
  return *columns;
}

std::vector<std::string> RecordCells(const v1::UsageRecord& r, const absl::TimeZone& zone) {
  std::vector<std::string> models(r.gpu_models().begin(), r.gpu_models().end());
  return {r.workspace_id(),
          r.org_id(),
          r.project_id(),
          r.user_id(),
          r.class_id(),
          r.pool(),
          r.node_name(),
          absl::StrCat(r.gpu_count()),
          Join(models, ";"),
          absl::StrCat(r.cpu_millis()),
          absl::StrCat(r.memory_bytes()),
          Printed(r.start_time(), zone),
          Printed(r.end_time(), zone),
          Reason(r.end_reason()),
          Printed(r.counted_start_time(), zone),
          Printed(r.counted_end_time(), zone),
          absl::StrCat(r.figures().duration_micros()),
          r.figures().gpu_seconds(),
          r.figures().cpu_millicore_seconds(),
          r.figures().memory_byte_seconds(),
          r.mig_profile(),
          absl::StrCat(r.mig_compute_slices())};
}

// "2" whole GPUs, or a slice's profile and share: "3g.71gb (3/7)".
std::string GpusHeld(const v1::UsageRecord& r) {
  if (r.mig_profile().empty()) return absl::StrCat(r.gpu_count());
  return absl::StrCat(r.mig_profile(), " (", r.mig_compute_slices(), "/7)");
}

int List(const Client& client, const Options& options, const Query& query) {
  auto stub = v1::UsageService::NewStub(client.channel);
  v1::ListUsageRequest request;
  SetFilters(options, query, request);
  v1::ListUsageResponse response;
  grpc::Status status = ListAllPages(
      client, request, &response,
      [&](grpc::ClientContext* context, const auto& page_request, auto* page) {
        return stub->ListUsage(context, page_request, page);
      });
  if (!status.ok()) return Fail("usage list", status);
  if (options.structured()) return PrintStructured(response, options);
  if (options.output == OutputFormat::kCsv) {
    if (!options.no_headers) std::cout << CsvLine(RecordColumns());
    for (const auto& record : response.records()) std::cout << CsvLine(RecordCells(record, query.zone));
    return 0;
  }
  std::vector<std::string> header = {"WORKSPACE", "ORG", "PROJECT", "CLASS", "NODE", "GPUS",
                                     "START", "END", "REASON", "GPU-HOURS"};
  if (options.wide()) header.insert(header.end(), {"USER", "POOL", "MODELS", "CPU-MILLICORE-SECONDS",
                                                   "MEMORY-BYTE-SECONDS"});
  Table table(header);
  for (const auto& r : response.records()) {
    std::vector<std::string> row = {r.workspace_id(),
                                    r.org_id(),
                                    r.project_id(),
                                    r.class_id(),
                                    OrDash(r.node_name()),
                                    GpusHeld(r),
                                    Printed(r.start_time(), query.zone),
                                    OrDash(Printed(r.end_time(), query.zone)),
                                    Reason(r.end_reason()),
                                    Hours(r.figures().gpu_seconds())};
    if (options.wide()) {
      std::vector<std::string> models(r.gpu_models().begin(), r.gpu_models().end());
      row.insert(row.end(), {r.user_id(), OrDash(r.pool()), OrDash(Join(models, ";")),
                             r.figures().cpu_millicore_seconds(), r.figures().memory_byte_seconds()});
    }
    table.Add(std::move(row));
  }
  table.Print("no usage", !options.no_headers);
  return 0;
}

absl::StatusOr<v1::SummarizeUsageRequest> SummaryRequestOf(const Options& options,
                                                           const Query& query) {
  v1::SummarizeUsageRequest request;
  SetFilters(options, query, request);
  if (!query.since || !query.until) {
    return absl::InvalidArgumentError("usage summary needs --since and --until");
  }
  for (const std::string& group : options.group_by) {
    v1::UsageGroupBy value;
    if (!v1::UsageGroupBy_Parse(absl::StrCat("USAGE_GROUP_BY_", absl::AsciiStrToUpper(group)), &value) ||
        value == v1::USAGE_GROUP_BY_UNSPECIFIED) {
      return absl::InvalidArgumentError(
          absl::StrCat("--group-by: \"", group, "\" is not org, project or class"));
    }
    request.add_group_by(value);
  }
  v1::UsageBucket bucket = v1::USAGE_BUCKET_UNSPECIFIED;
  if (!options.bucket.empty() && options.bucket != "none" &&
      (!v1::UsageBucket_Parse(absl::StrCat("USAGE_BUCKET_", absl::AsciiStrToUpper(options.bucket)),
                              &bucket) ||
       bucket == v1::USAGE_BUCKET_UNSPECIFIED)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--bucket: \"", options.bucket, "\" is not none, hour, day or month"));
  }
  request.set_bucket(bucket);
  request.set_time_zone(options.time_zone);
  return request;
}

int Summary(const Client& client, const Options& options, const Query& query) {
  absl::StatusOr<v1::SummarizeUsageRequest> request = SummaryRequestOf(options, query);
  if (!request.ok()) {
    std::cerr << request.status().message() << "\n";
    return 2;
  }
  auto stub = v1::UsageService::NewStub(client.channel);
  v1::SummarizeUsageResponse response;
  auto context = client.Context();
  grpc::Status status = stub->SummarizeUsage(context.get(), *request, &response);
  if (!status.ok()) return Fail("usage summary", status);
  if (options.structured()) return PrintStructured(response, options);
  if (options.output == OutputFormat::kCsv) {
    if (!options.no_headers) {
      std::cout << CsvLine({"bucket_start_time", "bucket_end_time", "org_id", "project_id",
                            "class_id", "workspace_count", "duration_micros", "gpu_seconds",
                            "cpu_millicore_seconds", "memory_byte_seconds"});
    }
    for (const auto& r : response.rows()) {
      std::cout << CsvLine({Printed(r.bucket_start_time(), query.zone),
                            Printed(r.bucket_end_time(), query.zone), r.org_id(), r.project_id(),
                            r.class_id(), absl::StrCat(r.workspace_count()),
                            absl::StrCat(r.figures().duration_micros()), r.figures().gpu_seconds(),
                            r.figures().cpu_millicore_seconds(), r.figures().memory_byte_seconds()});
    }
    return 0;
  }
  Table table({"BUCKET", "ORG", "PROJECT", "CLASS", "WORKSPACES", "GPU-HOURS", "HOURS"});
  for (const auto& r : response.rows()) {
    table.Add({Printed(r.bucket_start_time(), query.zone), OrDash(r.org_id()), OrDash(r.project_id()),
               OrDash(r.class_id()), absl::StrCat(r.workspace_count()),
               Hours(r.figures().gpu_seconds()),
               absl::StrFormat("%.3f", r.figures().duration_micros() / 3.6e9)});
  }
  table.Print("no usage", !options.no_headers);
  return 0;
}

std::string PeriodText(const v1::SpendingPeriod& period) {
  if (period.has_rolling()) {
    return absl::StrCat("rolling ",
                        absl::FormatDuration(absl::Seconds(period.rolling().seconds())));
  }
  const std::string& zone = period.calendar_month().time_zone();
  return absl::StrCat("calendar month (", zone.empty() ? "UTC" : zone, ")");
}

std::string LimitText(const v1::SpendingLimit& limit) {
  std::vector<std::string> percents;
  for (int percent : limit.warn_at_percent()) percents.push_back(absl::StrCat(percent, "%"));
  return absl::StrCat(
      absl::StrFormat("%g", limit.gpu_hours()), " GPU-hours per ", PeriodText(limit.period()), ", ",
      limit.action() == v1::SPENDING_ACTION_BLOCK_AND_STOP
          ? absl::StrCat("block_and_stop after a warning of ",
                         limit.has_stop_warning()
                             ? absl::FormatDuration(absl::Seconds(limit.stop_warning().seconds()))
                             : absl::StrCat(absl::FormatDuration(core::kDefaultStopWarning),
                                            " (the default)"))
          : "block_new",
      percents.empty() ? "" : absl::StrCat(", warn at ", Join(percents, ",")));
}

// The org's limit, and the project's when --project is given.
int Limits(const Client& client, const Options& options) {
  auto stub = v1::SettingsService::NewStub(client.channel);
  v1::GetOrgSettingsRequest org_request;
  org_request.set_org_id(options.org);
  v1::OrgSettings org;
  grpc::Status status = stub->GetOrgSettings(client.Context().get(), org_request, &org);
  if (!status.ok()) return Fail("usage limits", status);
  v1::ProjectSettings project;
  if (!options.project.empty()) {
    v1::GetProjectSettingsRequest project_request;
    project_request.set_project_id(options.project);
    status = stub->GetProjectSettings(client.Context().get(), project_request, &project);
    if (!status.ok()) return Fail("usage limits", status);
  }
  if (options.structured()) {
    return options.project.empty() ? PrintStructured(org.spending_limit(), options)
                                   : PrintStructured(project.spending_limit(), options);
  }
  Table table({"SCOPE", "ID", "LIMIT", "VERSION"});
  table.Add({"org", options.org,
             org.has_spending_limit() ? LimitText(org.spending_limit()) : "none",
             absl::StrCat(org.version())});
  if (!options.project.empty()) {
    table.Add({"project", options.project,
               project.has_spending_limit() ? LimitText(project.spending_limit()) : "none",
               absl::StrCat(project.version())});
  }
  table.Print("no limits", !options.no_headers);
  return 0;
}

int Forecast(const Client& client, const Options& options, const Query& query) {
  auto stub = v1::UsageService::NewStub(client.channel);
  v1::GetSpendingForecastRequest request;
  request.set_org_id(options.org);
  request.set_project_id(options.project);
  v1::GetSpendingForecastResponse response;
  grpc::Status status = stub->GetSpendingForecast(client.Context().get(), request, &response);
  if (!status.ok()) return Fail("usage forecast", status);
  if (options.structured()) return PrintStructured(response, options);
  std::vector<std::string> crossed;
  for (int percent : response.crossed_percents()) crossed.push_back(absl::StrCat(percent, "%"));
  Table table({"FIELD", "VALUE"});
  table.Add({"scope", response.project_id().empty() ? "org " + response.org_id()
                                                    : "project " + response.project_id()});
  table.Add({"limit", response.has_limit() ? LimitText(response.limit()) : "none"});
  table.Add({"period", absl::StrCat(Printed(response.period_start_time(), query.zone), " to ",
                                    Printed(response.period_end_time(), query.zone))});
  table.Add({"spent GPU-hours", Hours(response.spent_gpu_seconds())});
  if (response.has_limit()) table.Add({"limit GPU-hours", Hours(response.limit_gpu_seconds())});
  table.Add({"running GPUs", absl::StrFormat("%.2f", response.running_gpus())});
  table.Add({"GPU-hours per hour (last hour)",
             absl::StrFormat("%.3f", response.rate_gpu_seconds_per_hour() / 3600)});
  if (response.has_limit()) {
    table.Add({"limit reached", response.has_limit_reached_time()
                                    ? Printed(response.limit_reached_time(), query.zone)
                                    : "not this period at this rate"});
    table.Add({"thresholds crossed", crossed.empty() ? "none" : Join(crossed, ",")});
  }
  table.Print("", !options.no_headers);
  return 0;
}

}  // namespace

int UsageCommand(const Client& client, const std::vector<std::string>& args,
                 const Options& options) {
  if (args.size() != 1 ||
      (args[0] != "list" && args[0] != "summary" && args[0] != "limits" && args[0] != "forecast")) {
    std::cerr << kUsage;
    return 2;
  }
  if ((args[0] == "limits" || args[0] == "forecast") && options.org.empty()) {
    std::cerr << "usage " << args[0] << ": --org is required\n" << kUsage;
    return 2;
  }
  absl::StatusOr<Query> query = QueryOf(options);
  if (!query.ok()) {
    std::cerr << query.status().message() << "\n";
    return 2;
  }
  if (args[0] == "limits") return Limits(client, options);
  if (args[0] == "forecast") return Forecast(client, options, *query);
  return args[0] == "list" ? List(client, options, *query) : Summary(client, options, *query);
}

}  // namespace wsched::cli
