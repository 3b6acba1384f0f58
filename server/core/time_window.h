// Weekly time-of-day windows in a time zone, the building block of the
// warm-buffer and scale-down schedules (core/pool.h), and the text forms the
// catalog reads and writes ("mon-fri", "08:00", "Europe/Berlin").
#ifndef WSCHED_SERVER_CORE_TIME_WINDOW_H_
#define WSCHED_SERVER_CORE_TIME_WINDOW_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "server/core/pool.h"

namespace wsched::core {

// The time zone a schedule's windows are read in: "" (UTC), "UTC", "Z", a
// fixed offset ("+01:00", "UTC-05:30") or an IANA name ("Europe/Berlin",
// from the system's tzdata). Refuses "localtime" (it would differ between
// replicas) and anything that is not a zone name, so a catalog cannot make
// the server open arbitrary files.
absl::StatusOr<absl::TimeZone> LoadScheduleTimeZone(absl::string_view name);

// True when `window` covers the local minute `local`.
bool WindowCovers(const TimeWindow& window, absl::CivilMinute local);

// "08:30" -> 510; "24:00" -> 1440 (only meaningful as an end).
absl::StatusOr<int> ParseTimeOfDay(absl::string_view text);
// 510 -> "08:30".
std::string FormatTimeOfDay(int minutes);
// "UTC", "Z", "+02:00", "-05:30", "UTC+01:00" -> minutes east of UTC.
absl::StatusOr<int> ParseUtcOffset(absl::string_view text);
// "mon", "Monday", "TUE" ...
absl::StatusOr<absl::Weekday> ParseWeekday(absl::string_view text);
// One entry of a `days` list: a day ("sat") or an inclusive range
// ("mon-fri"; "fri-mon" wraps over the weekend), first day first.
absl::StatusOr<std::vector<absl::Weekday>> ParseDayRange(absl::string_view text);
// "mon".
const char* WeekdayName(absl::Weekday day);
// Days in week order (Monday first) as the shortest list of entries
// ParseDayRange reads back: {"mon-fri", "sun"}.
std::vector<std::string> FormatDays(const std::vector<absl::Weekday>& days);
// "mon-fri 08:00-18:00", "sat 00:00-24:00", "every day 22:00-06:00".
std::string DescribeWindow(const TimeWindow& window);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_TIME_WINDOW_H_
