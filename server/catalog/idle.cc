// Reading, checking and writing a class's idle-GPU policy (idle.h).
#include "server/catalog/idle.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/catalog/units.h"

namespace wsched::catalog {
namespace {

// Keep in step with docs/catalog.md "Idle GPUs".
constexpr absl::string_view kIdleKeys[] = {"gpu_utilization_below", "for", "action",
                                           "warn_before"};

// "5%": a whole percent. The sign is required so that 0.05 (a ratio) and
// 5 (a percent) cannot be mistaken for each other.
std::optional<int> ReadPercent(const Field& field, Diagnostics& diagnostics) {
  std::optional<std::string> text = ReadScalar(field, "a percent (\"5%\")", diagnostics);
  if (!text) return std::nullopt;
  absl::string_view digits = *text;
  int percent = 0;
  if (!absl::ConsumeSuffix(&digits, "%") || digits.empty() ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return absl::ascii_isdigit(c); }) ||
      !absl::SimpleAtoi(digits, &percent)) {
    diagnostics.ParseError(field.path,
                           absl::StrCat("\"", *text, "\" is not a whole percent like \"5%\""));
    return std::nullopt;
  }
  return percent;
}

std::optional<absl::Duration> ReadDuration(const Field& field, Diagnostics& diagnostics) {
  std::optional<std::string> text = ReadScalar(field, "a duration (\"30m\")", diagnostics);
  if (!text) return std::nullopt;
  absl::StatusOr<absl::Duration> duration = ParseCatalogDuration(*text);
  if (!duration.ok()) {
    diagnostics.ParseError(field.path, duration.status().message());
    return std::nullopt;
  }
  return *duration;
}

std::optional<core::IdleAction> ReadAction(const Field& field, Diagnostics& diagnostics) {
  std::optional<std::string> text = ReadString(field, diagnostics);
  if (!text) return std::nullopt;
  std::optional<core::IdleAction> action = core::ParseIdleAction(*text);
  if (!action) {
    diagnostics.ParseError(field.path,
                           absl::StrCat("must be notify or stop, got \"", *text, "\""));
  }
  return action;
}

}  // namespace

std::optional<core::IdlePolicy> ReadIdlePolicy(const Field& field, Diagnostics& diagnostics) {
  if (!field.present()) return std::nullopt;
  MapFields fields(field, kIdleKeys, diagnostics);
  if (!fields.is_map()) return std::nullopt;
  core::IdlePolicy idle;
  if (auto percent = ReadPercent(fields.Require("gpu_utilization_below"), diagnostics)) {
    idle.utilization_below_percent = *percent;
  }
  if (auto idle_for = ReadDuration(fields.Require("for"), diagnostics)) idle.idle_for = *idle_for;
  if (auto action = ReadAction(fields.Get("action"), diagnostics)) idle.action = *action;
  if (auto warn = ReadDuration(fields.Get("warn_before"), diagnostics)) idle.warn_before = *warn;
  return idle;
}

void CheckIdlePolicy(absl::string_view path, const core::IdlePolicy& idle, bool gpu_class,
                     absl::Duration min_idle_for, Diagnostics& diagnostics) {
  if (!gpu_class) {
    diagnostics.Error(path, "set on a class without GPUs (gpu.count is 0); only GPUs sit idle");
    return;
  }
  // 0% would never be idle and 100% always: neither is a policy.
  if (idle.utilization_below_percent <= 0 || idle.utilization_below_percent >= 100) {
    diagnostics.Error(FieldPath(path, "gpu_utilization_below"), "must be > 0% and < 100%");
  }
  const std::string for_path = FieldPath(path, "for");
  if (idle.idle_for < min_idle_for) {
    diagnostics.Error(for_path, absl::StrCat("must be >= ", FormatCatalogDuration(min_idle_for)));
  }
  const std::string warn_path = FieldPath(path, "warn_before");
  if (idle.warn_before < absl::ZeroDuration()) {
    diagnostics.Error(warn_path, "must be >= 0");
  } else if (idle.warn_before > absl::ZeroDuration() && idle.action != core::IdleAction::kStop) {
    diagnostics.Error(warn_path, "set with action notify; only a stop is warned of");
  } else if (idle.warn_before > absl::ZeroDuration() && idle.warn_before >= idle.idle_for &&
             !diagnostics.HasParseErrorAt(for_path)) {
    diagnostics.Error(warn_path, absl::StrCat("must be < for (", FormatCatalogDuration(idle.idle_for),
                                              "): the warning comes within the idle time"));
  }
}

void EmitIdlePolicy(YAML::Emitter& out, const core::IdlePolicy& idle) {
  out << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "gpu_utilization_below" << YAML::Value
      << absl::StrCat(idle.utilization_below_percent, "%");
  out << YAML::Key << "for" << YAML::Value << FormatCatalogDuration(idle.idle_for);
  out << YAML::Key << "action" << YAML::Value << core::IdleActionName(idle.action);
  if (idle.warn_before != absl::ZeroDuration()) {
    out << YAML::Key << "warn_before" << YAML::Value << FormatCatalogDuration(idle.warn_before);
  }
  out << YAML::EndMap;
}

std::string FormatIdlePolicy(const std::optional<core::IdlePolicy>& idle) {
  if (!idle) return "none";
  std::string text = absl::StrCat("below ", idle->utilization_below_percent, "% for ",
                                  FormatCatalogDuration(idle->idle_for), ", ",
                                  core::IdleActionName(idle->action));
  if (idle->warn_before != absl::ZeroDuration()) {
    absl::StrAppend(&text, " (warn ", FormatCatalogDuration(idle->warn_before), " before)");
  }
  return text;
}

}  // namespace wsched::catalog
