#include "server/cli/usage_format.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/cli/duration_flag.h"

namespace wsched::cli {
namespace {

// Local forms, longest first; each is taken at its start in the zone.
constexpr const char* kLocalFormats[] = {"%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d",
                                         "%Y-%m"};

}  // namespace

absl::StatusOr<absl::Time> ParseUsageTime(std::string_view text, std::string_view flag,
                                          absl::Time now, const absl::TimeZone& zone) {
  const std::string value(text);
  if (value == "now") return now;
  absl::Time parsed;
  std::string ignored;
  if (absl::ParseTime(absl::RFC3339_full, value, &parsed, &ignored)) return parsed;
  for (const char* format : kLocalFormats) {
    if (absl::ParseTime(format, value, zone, &parsed, &ignored)) return parsed;
  }
  if (absl::StatusOr<absl::Duration> back = ParseDurationFlag(value); back.ok()) return now - *back;
  return absl::InvalidArgumentError(absl::StrCat(
      "--", std::string(flag), " must be now, a duration back from now (36h), an RFC 3339 time "
      "(2026-10-25T00:00:00+02:00) or a date or time in --time-zone (2026-10-25, 2026-10, "
      "2026-10-25T14:00), not \"", value, "\""));
}

std::string UsageTimeText(absl::Time time, const absl::TimeZone& zone) {
  const bool whole = absl::ToUnixMicros(time) % 1'000'000 == 0;
  return absl::FormatTime(whole ? "%Y-%m-%dT%H:%M:%S%Ez" : "%Y-%m-%dT%H:%M:%E6S%Ez", time, zone);
}

std::string CsvLine(const std::vector<std::string>& fields) {
  std::vector<std::string> cells;
  for (const std::string& field : fields) {
    if (field.find_first_of(",\"\r\n") == std::string::npos) {
      cells.push_back(field);
      continue;
    }
    std::string quoted = "\"";
    for (char c : field) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    cells.push_back(quoted + "\"");
  }
  return absl::StrCat(absl::StrJoin(cells, ","), "\r\n");
}

}  // namespace wsched::cli
