#include "server/scaling/schedule.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "server/core/time_window.h"

namespace wsched::scaling {
namespace {

absl::CivilMinute LocalMinute(const std::string& time_zone, absl::Time now) {
  absl::StatusOr<absl::TimeZone> zone = core::LoadScheduleTimeZone(time_zone);
  return absl::ToCivilMinute(now, zone.ok() ? *zone : absl::UTCTimeZone());
}

// The first window covering `local`; windows are WarmBufferWindow or
// ScaleDownWindow, both with a `when`.
template <typename Window>
std::optional<size_t> FirstCovering(const std::vector<Window>& windows, absl::CivilMinute local) {
  for (size_t i = 0; i < windows.size(); ++i) {
    if (core::WindowCovers(windows[i].when, local)) return i;
  }
  return std::nullopt;
}

}  // namespace

WarmBufferNow WarmBufferAt(const core::WarmBuffer& buffer, absl::Time now) {
  if (buffer.is_constant()) return {.nodes = buffer.default_nodes};
  std::optional<size_t> window = FirstCovering(buffer.windows, LocalMinute(buffer.time_zone, now));
  return {.nodes = window ? buffer.windows[*window].nodes : buffer.default_nodes, .window = window};
}

ScaleDownNow ScaleDownAt(const core::ScaleDownSchedule& schedule, absl::Time now) {
  if (schedule.windows.empty()) return {.allowed = schedule.default_allow};
  std::optional<size_t> window =
      FirstCovering(schedule.windows, LocalMinute(schedule.time_zone, now));
  return {.allowed = window ? schedule.windows[*window].allow : schedule.default_allow,
          .window = window};
}

std::string DescribeScheduleWindow(size_t index, const core::TimeWindow& window,
                                   const std::string& time_zone) {
  return absl::StrCat("windows[", index, "] ", core::DescribeWindow(window), " ",
                      time_zone.empty() ? "UTC" : time_zone);
}

}  // namespace wsched::scaling
