// Warm buffer: empty nodes kept ready so a new workspace does not wait for a
// node to boot. Either a constant or a weekly time-of-day schedule ("2 GPU
// nodes on weekdays 08:00-18:00 UTC+01:00, none otherwise").
#ifndef WSCHED_SERVER_SCALING_WARM_BUFFER_H_
#define WSCHED_SERVER_SCALING_WARM_BUFFER_H_

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"

namespace wsched::scaling {

inline constexpr int kMinutesPerDay = 24 * 60;

struct WarmBufferWindow {
  // Days on which the window starts; empty means every day. A window that
  // wraps past midnight ("22:00-06:00") belongs to the day it starts on.
  std::vector<absl::Weekday> days;
  int start_minute = 0;  // Minutes after local midnight, [0, 1440).
  // Exclusive, [0, 1440]. Before start: wraps past midnight ("18:00-00:00"
  // ends at midnight). Equal to start: the whole day.
  int end_minute = 0;
  int buffer = 0;
};

struct WarmBufferSchedule {
  // Outside every window (the pool's plain `warm_buffer`).
  int default_buffer = 0;
  // Windows are read in UTC plus this fixed offset. A fixed offset (not a
  // named zone) keeps the schedule free of DST jumps and of tzdata.
  int utc_offset_minutes = 0;
  // The first window that covers a moment wins, so a window can lower the
  // buffer too (e.g. nights and weekends at 0).
  std::vector<WarmBufferWindow> windows;

  static WarmBufferSchedule Constant(int buffer) { return {.default_buffer = buffer}; }

  int BufferAt(absl::Time now) const;
  // Index of the window in effect, nullopt when the default applies.
  std::optional<size_t> ActiveWindow(absl::Time now) const;
  // Names the first bad field: "windows[1].end_minute: ...".
  absl::Status Validate() const;
};

// Helpers for config parsers. "08:30" -> 510; "24:00" -> 1440 (an end only).
absl::StatusOr<int> ParseTimeOfDay(absl::string_view text);
// "UTC", "Z", "+02:00", "-05:30", "UTC+01:00" -> minutes east of UTC.
absl::StatusOr<int> ParseUtcOffset(absl::string_view text);
// "mon", "Monday", "TUE" ...
absl::StatusOr<absl::Weekday> ParseWeekday(absl::string_view text);

}  // namespace wsched::scaling

#endif  // WSCHED_SERVER_SCALING_WARM_BUFFER_H_
