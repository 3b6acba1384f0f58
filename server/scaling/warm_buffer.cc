#include "server/scaling/warm_buffer.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace wsched::scaling {
namespace {

constexpr int kMaxOffsetMinutes = 14 * 60;  // The widest real UTC offset.

bool CoversDay(const WarmBufferWindow& window, absl::Weekday day) {
  return window.days.empty() ||
         std::find(window.days.begin(), window.days.end(), day) != window.days.end();
}

absl::Weekday DayBefore(absl::CivilDay day) { return absl::GetWeekday(day - 1); }

bool Covers(const WarmBufferWindow& window, absl::CivilMinute local) {
  int minute = local.hour() * 60 + local.minute();
  absl::CivilDay today(local);
  if (window.start_minute == window.end_minute) return CoversDay(window, absl::GetWeekday(today));
  if (window.start_minute < window.end_minute) {
    return CoversDay(window, absl::GetWeekday(today)) && minute >= window.start_minute &&
           minute < window.end_minute;
  }
  // Wraps past midnight: the evening part belongs to today, the early
  // morning part to the window that started yesterday.
  if (minute >= window.start_minute) return CoversDay(window, absl::GetWeekday(today));
  return minute < window.end_minute && CoversDay(window, DayBefore(today));
}

// Parses exactly two decimal digits.
bool ParseTwoDigits(absl::string_view text, int* value) {
  if (text.size() != 2 || !absl::ascii_isdigit(text[0]) || !absl::ascii_isdigit(text[1])) {
    return false;
  }
  *value = (text[0] - '0') * 10 + (text[1] - '0');
  return true;
}

}  // namespace

std::optional<size_t> WarmBufferSchedule::ActiveWindow(absl::Time now) const {
  absl::CivilMinute local = absl::ToCivilMinute(now, absl::FixedTimeZone(utc_offset_minutes * 60));
  for (size_t i = 0; i < windows.size(); ++i) {
    if (Covers(windows[i], local)) return i;
  }
  return std::nullopt;
}

int WarmBufferSchedule::BufferAt(absl::Time now) const {
  std::optional<size_t> active = ActiveWindow(now);
  return active ? windows[*active].buffer : default_buffer;
}

absl::Status WarmBufferSchedule::Validate() const {
  if (default_buffer < 0) return absl::InvalidArgumentError("default_buffer: must be >= 0");
  if (std::abs(utc_offset_minutes) > kMaxOffsetMinutes) {
    return absl::InvalidArgumentError("utc_offset_minutes: must be within +-14:00");
  }
  for (size_t i = 0; i < windows.size(); ++i) {
    const WarmBufferWindow& w = windows[i];
    std::string where = absl::StrCat("windows[", i, "].");
    if (w.start_minute < 0 || w.start_minute >= kMinutesPerDay) {
      return absl::InvalidArgumentError(absl::StrCat(where, "start_minute: must be in [0, 1440)"));
    }
    if (w.end_minute < 0 || w.end_minute > kMinutesPerDay) {
      return absl::InvalidArgumentError(absl::StrCat(where, "end_minute: must be in [0, 1440]"));
    }
    if (w.buffer < 0)
      return absl::InvalidArgumentError(absl::StrCat(where, "buffer: must be >= 0"));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> ParseTimeOfDay(absl::string_view text) {
  int hours = 0, minutes = 0;
  if (text.size() != 5 || text[2] != ':' || !ParseTwoDigits(text.substr(0, 2), &hours) ||
      !ParseTwoDigits(text.substr(3, 2), &minutes)) {
    return absl::InvalidArgumentError(absl::StrCat("\"", text, "\": want HH:MM"));
  }
  int total = hours * 60 + minutes;
  if (minutes >= 60 || total > kMinutesPerDay) {
    return absl::InvalidArgumentError(absl::StrCat("\"", text, "\": not a time of day"));
  }
  return total;
}

absl::StatusOr<int> ParseUtcOffset(absl::string_view text) {
  absl::string_view rest = text;
  if (absl::ConsumePrefix(&rest, "UTC") && rest.empty()) return 0;
  if (rest == "Z") return 0;
  if (rest.size() != 6 || (rest[0] != '+' && rest[0] != '-') || rest[3] != ':') {
    return absl::InvalidArgumentError(absl::StrCat("\"", text, "\": want UTC or +HH:MM"));
  }
  int hours = 0, minutes = 0;
  if (!ParseTwoDigits(rest.substr(1, 2), &hours) || !ParseTwoDigits(rest.substr(4, 2), &minutes) ||
      minutes >= 60 || hours * 60 + minutes > kMaxOffsetMinutes) {
    return absl::InvalidArgumentError(absl::StrCat("\"", text, "\": not a UTC offset"));
  }
  int offset = hours * 60 + minutes;
  return rest[0] == '-' ? -offset : offset;
}

absl::StatusOr<absl::Weekday> ParseWeekday(absl::string_view text) {
  static constexpr std::array<std::pair<const char*, absl::Weekday>, 7> kDays = {{
      {"monday", absl::Weekday::monday},
      {"tuesday", absl::Weekday::tuesday},
      {"wednesday", absl::Weekday::wednesday},
      {"thursday", absl::Weekday::thursday},
      {"friday", absl::Weekday::friday},
      {"saturday", absl::Weekday::saturday},
      {"sunday", absl::Weekday::sunday},
  }};
  std::string lower = absl::AsciiStrToLower(text);
  for (const auto& [name, day] : kDays) {
    absl::string_view full(name);
    if (lower == full || lower == full.substr(0, 3)) return day;
  }
  return absl::InvalidArgumentError(absl::StrCat("\"", text, "\": not a day of the week"));
}

}  // namespace wsched::scaling
