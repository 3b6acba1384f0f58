// The value rules of the warm-buffer and scale-down schedules (schedules.h).
#include <algorithm>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/catalog/schedules.h"
#include "server/catalog/validate.h"
#include "server/core/time_window.h"

namespace wsched::catalog {
namespace {

void CheckNodes(absl::string_view path, int nodes, int max_size, Diagnostics& diagnostics) {
  if (nodes < 0) {
    diagnostics.Error(path, "must be >= 0");
  } else if (nodes > max_size && max_size >= 0) {
    diagnostics.Error(path, absl::StrCat("must be <= max_size (", max_size, ")"));
  }
}

void CheckTimeZone(absl::string_view path, const std::string& time_zone, Diagnostics& diagnostics) {
  absl::StatusOr<absl::TimeZone> zone = core::LoadScheduleTimeZone(time_zone);
  if (!zone.ok()) diagnostics.Error(FieldPath(path, "time_zone"), zone.status().message());
}

void CheckWhen(absl::string_view path, const core::TimeWindow& when, Diagnostics& diagnostics) {
  // An unreadable from or to kept its default; comparing it would mislead.
  if (diagnostics.HasParseErrorAt(FieldPath(path, "from")) ||
      diagnostics.HasParseErrorAt(FieldPath(path, "to"))) {
    return;
  }
  if (when.start_minute < 0 || when.start_minute >= core::kMinutesPerDay) {
    diagnostics.Error(FieldPath(path, "from"), "must be from 00:00 to 23:59");
  } else if (when.end_minute < 0 || when.end_minute > core::kMinutesPerDay) {
    diagnostics.Error(FieldPath(path, "to"), "must be from 00:00 to 24:00");
  } else if (when.start_minute == when.end_minute) {
    // The core reads this as the whole day; a file says so by leaving both out.
    diagnostics.Error(
        FieldPath(path, "to"),
        absl::StrCat("must differ from from (", core::FormatTimeOfDay(when.start_minute),
                     "); leave out from and to for the whole day"));
  }
  std::set<absl::Weekday> seen;
  for (absl::Weekday day : when.days) {
    if (!seen.insert(day).second) {
      diagnostics.Error(FieldPath(path, "days"),
                        absl::StrCat("lists ", core::WeekdayName(day), " twice"));
      return;
    }
  }
}

// Windows a broken file could make endless are bounded like every list.
bool CheckWindowCount(absl::string_view path, size_t count, Diagnostics& diagnostics) {
  if (count <= kMaxListEntries) return true;
  diagnostics.Error(FieldPath(path, "windows"),
                    absl::StrCat("has ", count, " entries; at most ", kMaxListEntries));
  return false;
}

std::string WindowPath(absl::string_view path, size_t i) {
  return absl::StrCat(FieldPath(path, "windows"), "[", i, "]");
}

}  // namespace

void CheckWarmBuffer(absl::string_view path, const core::WarmBuffer& buffer, int max_size,
                     Diagnostics& diagnostics) {
  if (buffer.is_constant() && buffer.time_zone.empty()) {
    CheckNodes(path, buffer.default_nodes, max_size, diagnostics);
    return;
  }
  CheckNodes(FieldPath(path, "default"), buffer.default_nodes, max_size, diagnostics);
  CheckTimeZone(path, buffer.time_zone, diagnostics);
  if (!CheckWindowCount(path, buffer.windows.size(), diagnostics)) return;
  for (size_t i = 0; i < buffer.windows.size(); ++i) {
    const std::string window = WindowPath(path, i);
    CheckWhen(window, buffer.windows[i].when, diagnostics);
    CheckNodes(FieldPath(window, "nodes"), buffer.windows[i].nodes, max_size, diagnostics);
  }
}

void CheckScaleDownSchedule(absl::string_view path, const core::ScaleDownSchedule& schedule,
                            Diagnostics& diagnostics) {
  CheckTimeZone(path, schedule.time_zone, diagnostics);
  if (!CheckWindowCount(path, schedule.windows.size(), diagnostics)) return;
  for (size_t i = 0; i < schedule.windows.size(); ++i) {
    CheckWhen(WindowPath(path, i), schedule.windows[i].when, diagnostics);
  }
  const bool ever_allowed =
      schedule.default_allow || std::any_of(schedule.windows.begin(), schedule.windows.end(),
                                            [](const core::ScaleDownWindow& w) { return w.allow; });
  if (!ever_allowed) {
    diagnostics.Warning(path, "never allows scale-down: idle nodes are never removed");
  }
}

}  // namespace wsched::catalog
