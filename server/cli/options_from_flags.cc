#include "server/cli/options_from_flags.h"

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "server/cli/duration_flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace wsched::cli {
namespace {

std::vector<std::string> List(const ParsedArgs& args, std::string_view name) {
  std::string text = args.Get(name);
  if (text.empty()) return {};
  return absl::StrSplit(text, ',');
}

int64_t Integer(const ParsedArgs& args, std::string_view name, int64_t fallback) {
  int64_t value = fallback;
  if (args.Has(name)) (void)absl::SimpleAtoi(args.Get(name), &value);
  return value;
}

// `org set` changes only what was given: nullopt = keep the stored value.
std::optional<std::string> IfGiven(const ParsedArgs& args, std::string_view name) {
  if (!args.Has(name)) return std::nullopt;
  return args.Get(name);
}

}  // namespace

absl::StatusOr<OutputFormat> ParseOutputFormat(std::string_view text) {
  if (text.empty() || text == "table") return OutputFormat::kTable;
  if (text == "wide") return OutputFormat::kWide;
  if (text == "json") return OutputFormat::kJson;
  if (text == "yaml") return OutputFormat::kYaml;
  if (text == "csv") return OutputFormat::kCsv;
  return absl::InvalidArgumentError(absl::StrCat(
      "--output must be table, wide, json, yaml or csv, not \"", std::string(text), "\""));
}

absl::StatusOr<Options> OptionsFromFlags(const ParsedArgs& args) {
  absl::StatusOr<OutputFormat> output = ParseOutputFormat(args.Get("output"));
  if (!output.ok()) return output.status();
  Options options;
  options.output = *output;
  options.no_headers = args.GetBool("no_headers");
  options.dry_run = args.GetBool("dry_run");
  options.filename = args.Get("filename");
  options.pool = args.Get("pool");
  options.node = args.Get("node");
  options.state = args.Get("state");
  options.org = args.Get("org");
  options.project = args.Get("project");
  options.user = args.Get("user");
  options.class_id = args.Get("class");
  options.previous = args.Get("previous");
  options.restart = args.GetBool("restart");
  options.priority = static_cast<int>(Integer(args, "priority", 0));
  options.quote_token = args.Get("quote_token");
  options.watch = args.GetBool("watch");
  if (args.Has("resume_version")) options.resume_version = Integer(args, "resume_version", 0);
  options.default_class = IfGiven(args, "default");
  options.allow = IfGiven(args, "allow");
  if (args.Has("gpu_quota")) options.gpu_quota = Integer(args, "gpu_quota", -1);
  if (args.Has("expected_version")) options.expected_version = Integer(args, "expected_version", 0);
  options.force = args.GetBool("force");
  options.simulate = {.catalog = args.Get("catalog"),
                      .trace = args.Get("trace"),
                      .timings = args.Get("timings"),
                      .chart = args.Get("chart"),
                      .node_start = args.Get("node_start"),
                      .driver_install = args.Get("driver_install"),
                      .long_wait = args.Get("long_wait"),
                      .sets = args.GetAll("set"),
                      .variants = args.GetAll("variant"),
                      .workspaces = args.Get("workspaces"),
                      .days = args.Get("days"),
                      .seed = args.Get("seed"),
                      .start = args.Get("start"),
                      .mix = args.Get("mix"),
                      .burst_class = args.Get("burst_class")};
  options.bootstrap = args.GetBool("bootstrap");
  options.pool_versions = List(args, "pool_versions");
  options.role = args.Get("role");
  options.name = args.Get("name");
  options.orgs = List(args, "orgs");
  options.projects = List(args, "projects");
  options.pools = List(args, "pools");
  options.principal = args.Get("principal");
  options.object = args.Get("object");
  // A duration for audit; usage also takes times (usage_format.h), so
  // only the command knows whether another value is wrong.
  options.since_text = args.Get("since");
  options.until_text = args.Get("until");
  options.at_text = args.Get("at");
  if (args.Has("since")) {
    absl::StatusOr<absl::Duration> since = ParseDurationFlag(options.since_text);
    if (since.ok() && *since > absl::ZeroDuration()) options.since = *since;
  }
  options.group_by = List(args, "group_by");
  options.bucket = args.Get("bucket");
  options.time_zone = args.Get("time_zone");
  return options;
}

}  // namespace wsched::cli
