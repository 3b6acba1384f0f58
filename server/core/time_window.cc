#include "server/core/time_window.h"

#include <algorithm>
#include <array>
#include <bitset>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace wsched::core {
namespace {

constexpr int kMaxOffsetMinutes = 14 * 60;  // The widest real UTC offset.
constexpr size_t kMaxZoneNameBytes = 64;    // The longest IANA name is about 32.

constexpr std::array<std::pair<const char*, absl::Weekday>, 7> kDays = {{
    {"monday", absl::Weekday::monday},
    {"tuesday", absl::Weekday::tuesday},
    {"wednesday", absl::Weekday::wednesday},
    {"thursday", absl::Weekday::thursday},
    {"friday", absl::Weekday::friday},
    {"saturday", absl::Weekday::saturday},
    {"sunday", absl::Weekday::sunday},
}};

int DayIndex(absl::Weekday day) { return static_cast<int>(day); }  // Monday is 0.

bool CoversDay(const TimeWindow& window, absl::Weekday day) {
  return window.days.empty() ||
         std::find(window.days.begin(), window.days.end(), day) != window.days.end();
}

// Parses exactly two decimal digits.
bool ParseTwoDigits(absl::string_view text, int* value) {
  if (text.size() != 2 || !absl::ascii_isdigit(text[0]) || !absl::ascii_isdigit(text[1])) {
    return false;
  }
  *value = (text[0] - '0') * 10 + (text[1] - '0');
  return true;
}

// "Europe/Berlin", "America/Argentina/Buenos_Aires", "Etc/GMT+1": the
// characters of tzdata names, relative, with no way up the tree.
bool LooksLikeZoneName(absl::string_view name) {
  if (name.empty() || name.size() > kMaxZoneNameBytes || name.front() == '/' ||
      name.back() == '/' || absl::StrContains(name, "..") || absl::StrContains(name, "//")) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '/' || c == '_' || c == '-' || c == '+' || c == '.';
  });
}

}  // namespace

absl::StatusOr<absl::TimeZone> LoadScheduleTimeZone(absl::string_view name) {
  if (name.empty()) return absl::UTCTimeZone();
  if (name == "UTC" || name == "Z" || name.front() == '+' || name.front() == '-' ||
      (absl::StartsWith(name, "UTC") && name.size() > 3 && (name[3] == '+' || name[3] == '-'))) {
    absl::StatusOr<int> offset = ParseUtcOffset(name);
    if (!offset.ok()) return offset.status();
    return absl::FixedTimeZone(*offset * 60);
  }
  if (name == "localtime" || !LooksLikeZoneName(name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", name, "\" is not a time zone (want an IANA name like Europe/Berlin, or +HH:MM)"));
  }
  absl::TimeZone zone;
  // Loaded zones are cached for the life of the process, so evaluating a
  // schedule on every tick does not read the file again.
  if (!absl::LoadTimeZone(std::string(name), &zone)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown time zone \"", name, "\" (is tzdata installed?)"));
  }
  return zone;
}

bool WindowCovers(const TimeWindow& window, absl::CivilMinute local) {
  int minute = local.hour() * 60 + local.minute();
  absl::CivilDay today(local);
  absl::Weekday weekday = absl::GetWeekday(today);
  if (window.start_minute == window.end_minute) return CoversDay(window, weekday);
  if (window.start_minute < window.end_minute) {
    return CoversDay(window, weekday) && minute >= window.start_minute &&
           minute < window.end_minute;
  }
  // Wraps past midnight: the evening part belongs to today, the early
  // morning part to the window that started yesterday.
  if (minute >= window.start_minute) return CoversDay(window, weekday);
  return minute < window.end_minute && CoversDay(window, absl::GetWeekday(today - 1));
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

std::string FormatTimeOfDay(int minutes) {
  int hours = minutes / 60, rest = minutes % 60;
  return absl::StrCat(hours < 10 ? "0" : "", hours, ":", rest < 10 ? "0" : "", rest);
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
  std::string lower = absl::AsciiStrToLower(text);
  for (const auto& [name, day] : kDays) {
    absl::string_view full(name);
    if (lower == full || lower == full.substr(0, 3)) return day;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("\"", text, "\": not a day of the week (mon, tue, ... sun)"));
}

absl::StatusOr<std::vector<absl::Weekday>> ParseDayRange(absl::string_view text) {
  size_t dash = text.find('-');
  absl::StatusOr<absl::Weekday> first = ParseWeekday(text.substr(0, dash));
  if (!first.ok()) return first.status();
  if (dash == absl::string_view::npos) return std::vector<absl::Weekday>{*first};
  absl::StatusOr<absl::Weekday> last = ParseWeekday(text.substr(dash + 1));
  if (!last.ok()) return last.status();
  std::vector<absl::Weekday> days;
  for (int i = DayIndex(*first);; i = (i + 1) % 7) {
    days.push_back(kDays[i].second);
    if (i == DayIndex(*last)) break;
  }
  return days;
}

const char* WeekdayName(absl::Weekday day) {
  static constexpr const char* kShort[] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
  return kShort[DayIndex(day)];
}

std::vector<std::string> FormatDays(const std::vector<absl::Weekday>& days) {
  std::bitset<7> set;
  for (absl::Weekday day : days) set.set(DayIndex(day));
  std::vector<std::string> out;
  for (int i = 0; i < 7;) {
    if (!set[i]) {
      ++i;
      continue;
    }
    int end = i;
    while (end + 1 < 7 && set[end + 1]) ++end;
    const char* first = WeekdayName(kDays[i].second);
    out.push_back(end == i ? first : absl::StrCat(first, "-", WeekdayName(kDays[end].second)));
    i = end + 1;
  }
  return out;
}

std::string DescribeWindow(const TimeWindow& window) {
  std::string days =
      window.days.empty() ? "every day" : absl::StrJoin(FormatDays(window.days), ",");
  return absl::StrCat(days, " ", FormatTimeOfDay(window.start_minute), "-",
                      FormatTimeOfDay(window.end_minute));
}

}  // namespace wsched::core
