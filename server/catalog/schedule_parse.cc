// Reading the warm-buffer and scale-down schedules (schedules.h).
#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/catalog/schedules.h"
#include "server/core/time_window.h"

namespace wsched::catalog {
namespace {

// Keep in step with docs/catalog.md "Schedules".
constexpr absl::string_view kWarmBufferKeys[] = {"default", "time_zone", "windows"};
constexpr absl::string_view kWarmWindowKeys[] = {"days", "from", "to", "nodes"};
constexpr absl::string_view kScheduleKeys[] = {"default", "time_zone", "windows"};
constexpr absl::string_view kScaleDownWindowKeys[] = {"days", "from", "to", "allow"};

std::optional<int> ReadNodeCount(const Field& field, Diagnostics& diagnostics) {
  std::optional<int64_t> value = ReadInt(field, diagnostics);
  if (!value) return std::nullopt;
  if (*value < std::numeric_limits<int>::min() || *value > std::numeric_limits<int>::max()) {
    diagnostics.ParseError(field.path, absl::StrCat(*value, " is out of range"));
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

std::optional<int> ReadTimeOfDay(const Field& field, Diagnostics& diagnostics) {
  std::optional<std::string> text = ReadScalar(field, "a time of day (\"08:00\")", diagnostics);
  if (!text) return std::nullopt;
  absl::StatusOr<int> minutes = core::ParseTimeOfDay(*text);
  if (!minutes.ok()) {
    diagnostics.ParseError(field.path, minutes.status().message());
    return std::nullopt;
  }
  return *minutes;
}

// Days in week order; each entry a day or a range, none covered twice.
std::vector<absl::Weekday> ReadDays(const Field& field, Diagnostics& diagnostics) {
  std::vector<absl::Weekday> days;
  std::optional<std::vector<Field>> entries = ReadList(field, diagnostics);
  if (!entries) return days;
  if (entries->empty()) {
    diagnostics.ParseError(field.path, "must name at least one day (leave days out for every day)");
    return days;
  }
  for (const Field& entry : *entries) {
    std::optional<std::string> text = ReadString(entry, diagnostics);
    if (!text) continue;
    absl::StatusOr<std::vector<absl::Weekday>> range = core::ParseDayRange(*text);
    if (!range.ok()) {
      diagnostics.ParseError(entry.path, range.status().message());
      continue;
    }
    for (absl::Weekday day : *range) {
      if (std::find(days.begin(), days.end(), day) != days.end()) {
        diagnostics.ParseError(entry.path,
                               absl::StrCat(core::WeekdayName(day), " is already in the list"));
        break;
      }
      days.push_back(day);
    }
  }
  std::sort(days.begin(), days.end());
  return days;
}

// days, from and to of one window; absent ones keep "every day, all day".
core::TimeWindow ReadWhen(const MapFields& fields, Diagnostics& diagnostics) {
  core::TimeWindow when;
  when.days = ReadDays(fields.Get("days"), diagnostics);
  if (auto from = ReadTimeOfDay(fields.Get("from"), diagnostics)) when.start_minute = *from;
  if (auto to = ReadTimeOfDay(fields.Get("to"), diagnostics)) when.end_minute = *to;
  return when;
}

// Reads each window of a `windows` list with `read`; elements that are not
// maps are reported and skipped.
template <typename Window, typename ReadOne>
std::vector<Window> ReadWindows(const Field& field, absl::Span<const absl::string_view> keys,
                                ReadOne read, Diagnostics& diagnostics) {
  std::vector<Window> windows;
  std::optional<std::vector<Field>> elements = ReadList(field, diagnostics);
  if (!elements) return windows;
  for (const Field& element : *elements) {
    MapFields fields(element, keys, diagnostics);
    if (!fields.is_map()) {
      if (!element.present()) diagnostics.ParseError(element.path, "must be a map (one window)");
      continue;
    }
    windows.push_back(read(fields));
  }
  return windows;
}

}  // namespace

std::optional<core::WarmBuffer> ReadWarmBuffer(const Field& field, Diagnostics& diagnostics) {
  if (!field.present()) return std::nullopt;
  if (field.node.IsScalar()) {
    std::optional<int> nodes = ReadNodeCount(field, diagnostics);
    if (!nodes) return std::nullopt;
    return core::WarmBuffer::Constant(*nodes);
  }
  if (!field.node.IsMap()) {
    diagnostics.ParseError(field.path,
                           absl::StrCat("must be a node count or a map with default, time_zone and "
                                        "windows, got ",
                                        DescribeNode(field.node)));
    return std::nullopt;
  }
  core::WarmBuffer buffer;
  MapFields fields(field, kWarmBufferKeys, diagnostics);
  if (auto nodes = ReadNodeCount(fields.Get("default"), diagnostics)) buffer.default_nodes = *nodes;
  if (auto zone = ReadString(fields.Get("time_zone"), diagnostics)) buffer.time_zone = *zone;
  buffer.windows = ReadWindows<core::WarmBufferWindow>(
      fields.Require("windows"), kWarmWindowKeys,
      [&](const MapFields& window) {
        core::WarmBufferWindow out{.when = ReadWhen(window, diagnostics)};
        if (auto nodes = ReadNodeCount(window.Require("nodes"), diagnostics)) out.nodes = *nodes;
        return out;
      },
      diagnostics);
  return buffer;
}

std::optional<core::ScaleDownSchedule> ReadScaleDownSchedule(const Field& field,
                                                             Diagnostics& diagnostics) {
  if (!field.present()) return std::nullopt;
  core::ScaleDownSchedule schedule;
  MapFields fields(field, kScheduleKeys, diagnostics);
  if (!fields.is_map()) return std::nullopt;
  if (auto allow = ReadBool(fields.Get("default"), diagnostics)) schedule.default_allow = *allow;
  if (auto zone = ReadString(fields.Get("time_zone"), diagnostics)) schedule.time_zone = *zone;
  schedule.windows = ReadWindows<core::ScaleDownWindow>(
      fields.Get("windows"), kScaleDownWindowKeys,
      [&](const MapFields& window) {
        core::ScaleDownWindow out{.when = ReadWhen(window, diagnostics)};
        if (auto allow = ReadBool(window.Require("allow"), diagnostics)) out.allow = *allow;
        return out;
      },
      diagnostics);
  return schedule;
}

}  // namespace wsched::catalog
