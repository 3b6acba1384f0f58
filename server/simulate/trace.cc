#include "server/simulate/trace.h"

#include <array>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace wsched::simulate {
namespace {

enum Column { kTime, kDurationSeconds, kDurationText, kEnd, kOrg, kProject, kClass, kId, kColumns };

struct Alias {
  const char* name;
  Column column;
};

constexpr std::array kAliases = {
    Alias{"time", kTime},           Alias{"start", kTime},
    Alias{"started_at", kTime},     Alias{"start_time", kTime},
    Alias{"placed_at", kTime},      Alias{"created_at", kTime},
    Alias{"duration_s", kDurationSeconds}, Alias{"duration_seconds", kDurationSeconds},
    Alias{"seconds", kDurationSeconds},    Alias{"duration", kDurationText},
    Alias{"end", kEnd},             Alias{"ended_at", kEnd},
    Alias{"end_time", kEnd},        Alias{"stopped_at", kEnd},
    Alias{"org", kOrg},             Alias{"org_id", kOrg},
    Alias{"project", kProject},     Alias{"project_id", kProject},
    Alias{"class", kClass},         Alias{"class_id", kClass},
    Alias{"id", kId},               Alias{"workspace", kId},
    Alias{"workspace_id", kId},
};

// Where each column is in a row (the header's position), and its name there.
struct Layout {
  std::array<std::optional<size_t>, kColumns> at;
  std::array<std::string, kColumns> name;
};

absl::Status LineError(int line, absl::string_view column, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("trace line ", line, ", column ", column, ": ", message));
}

// One CSV record: commas separate, double quotes quote ("" inside).
absl::StatusOr<std::vector<std::string>> SplitRecord(absl::string_view line, int number) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  if (quoted) {
    return absl::InvalidArgumentError(absl::StrCat(
        "trace line ", number, ": a quoted field is not closed (fields cannot span lines)"));
  }
  for (std::string& field : fields) field = std::string(absl::StripAsciiWhitespace(field));
  return fields;
}

absl::StatusOr<Layout> ReadHeader(const std::vector<std::string>& header, int line) {
  Layout layout;
  for (size_t i = 0; i < header.size(); ++i) {
    const std::string name = absl::AsciiStrToLower(header[i]);
    for (const Alias& alias : kAliases) {
      if (name != alias.name) continue;
      if (layout.at[alias.column]) {
        return LineError(line, header[i],
                         absl::StrCat("names the same column as \"",
                                      layout.name[alias.column], "\"; keep one of them"));
      }
      layout.at[alias.column] = i;
      layout.name[alias.column] = header[i];
    }
  }
  if (!layout.at[kTime]) {
    return absl::InvalidArgumentError(absl::StrCat(
        "trace line ", line, ": the header has no time column (one of time, start, started_at, "
        "start_time, placed_at, created_at); header: ", absl::StrJoin(header, ",")));
  }
  if (!layout.at[kDurationSeconds] && !layout.at[kDurationText] && !layout.at[kEnd]) {
    return absl::InvalidArgumentError(absl::StrCat(
        "trace line ", line, ": the header has neither a duration column (duration_s, "
        "duration_seconds, seconds, duration) nor an end column (end, ended_at, end_time, "
        "stopped_at); header: ", absl::StrJoin(header, ",")));
  }
  if (layout.at[kDurationSeconds] && layout.at[kDurationText]) {
    return LineError(line, layout.name[kDurationText],
                     absl::StrCat("names the same column as \"", layout.name[kDurationSeconds],
                                  "\"; keep one of them"));
  }
  return layout;
}

std::optional<absl::Time> ParseTimeText(std::string text) {
  double seconds;
  if (absl::SimpleAtod(text, &seconds)) {
    if (!(seconds >= 0 && seconds < 1e11)) return std::nullopt;
    return absl::FromUnixNanos(static_cast<int64_t>(seconds * 1e9));
  }
  // "2026-03-02 08:00:00Z", as databases print timestamps.
  if (text.size() > 10 && text[10] == ' ') text[10] = 'T';
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, text, &time, &error)) return std::nullopt;
  return time;
}

// The duration of a row from whichever column it has.
absl::StatusOr<std::optional<absl::Duration>> RowDuration(const std::vector<std::string>& fields,
                                                          const Layout& layout, int line) {
  auto cell = [&](Column c) -> const std::string* {
    if (!layout.at[c] || *layout.at[c] >= fields.size()) return nullptr;
    return fields[*layout.at[c]].empty() ? nullptr : &fields[*layout.at[c]];
  };
  absl::Duration duration;
  if (const std::string* text = cell(kDurationSeconds)) {
    double seconds;
    if (!absl::SimpleAtod(*text, &seconds) || !(seconds >= 0 && seconds < 1e9)) {
      return LineError(line, layout.name[kDurationSeconds],
                       absl::StrCat("\"", *text, "\" is not a number of seconds from 0"));
    }
    return absl::Seconds(seconds);
  }
  if (const std::string* text = cell(kDurationText)) {
    double seconds;
    if (absl::SimpleAtod(*text, &seconds) && seconds >= 0 && seconds < 1e9) {
      return absl::Seconds(seconds);
    }
    if (!absl::ParseDuration(*text, &duration) || duration < absl::ZeroDuration() ||
        duration == absl::InfiniteDuration()) {
      return LineError(line, layout.name[kDurationText],
                       absl::StrCat("\"", *text, "\" is not a duration from 0 (3600, 1h30m)"));
    }
    return duration;
  }
  return std::optional<absl::Duration>();
}

}  // namespace

absl::StatusOr<std::vector<Arrival>> ParseTraceCsv(absl::string_view text) {
  std::vector<Arrival> rows;
  std::optional<Layout> layout;
  // Rows without a duration and with an empty end, finished at the end.
  std::vector<size_t> open_ended;
  absl::Time latest = absl::InfinitePast();
  int number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++number;
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line.front() == '#') continue;
    absl::StatusOr<std::vector<std::string>> fields = SplitRecord(line, number);
    if (!fields.ok()) return fields.status();
    if (!layout) {
      absl::StatusOr<Layout> read = ReadHeader(*fields, number);
      if (!read.ok()) return read.status();
      layout = *read;
      continue;
    }
    if (rows.size() >= kMaxTraceRows) {
      return absl::InvalidArgumentError(absl::StrCat("trace line ", number, ": more than ",
                                                     kMaxTraceRows, " rows; split the trace"));
    }
    auto cell = [&](Column c) -> std::string {
      return layout->at[c] && *layout->at[c] < fields->size() ? (*fields)[*layout->at[c]] : "";
    };
    Arrival row;
    row.line = number;
    row.id = cell(kId).empty() ? absl::StrCat("line-", number) : cell(kId);
    row.org = cell(kOrg);
    row.project = cell(kProject);
    row.class_id = cell(kClass);
    std::optional<absl::Time> start = ParseTimeText(cell(kTime));
    if (!start) {
      return LineError(number, layout->name[kTime],
                       absl::StrCat("\"", cell(kTime), "\" is no time (want RFC 3339 such as "
                                    "2026-03-02T08:00:00Z, or Unix seconds)"));
    }
    row.time = *start;
    latest = std::max(latest, *start);
    absl::StatusOr<std::optional<absl::Duration>> duration = RowDuration(*fields, *layout, number);
    if (!duration.ok()) return duration.status();
    if (*duration) {
      row.duration = **duration;
    } else if (!cell(kEnd).empty()) {
      std::optional<absl::Time> end = ParseTimeText(cell(kEnd));
      if (!end || *end < *start) {
        return LineError(number, layout->name[kEnd],
                         absl::StrCat("\"", cell(kEnd), "\" is no time at or after the start "
                                      "(want RFC 3339 or Unix seconds)"));
      }
      row.duration = *end - *start;
      latest = std::max(latest, *end);
    } else if (layout->at[kEnd]) {
      open_ended.push_back(rows.size());
    } else {
      return LineError(number,
                       layout->name[layout->at[kDurationSeconds] ? kDurationSeconds : kDurationText],
                       "empty; every row needs a duration");
    }
    rows.push_back(std::move(row));
  }
  if (!layout) return absl::InvalidArgumentError("the trace is empty (no header row)");
  for (size_t i : open_ended) rows[i].duration = latest - rows[i].time;
  return rows;
}

}  // namespace wsched::simulate
