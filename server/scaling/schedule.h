// What a pool's schedules say at a moment: the warm buffer in effect and
// whether idle nodes may be removed. Pure: the caller passes `now`.
#ifndef WSCHED_SERVER_SCALING_SCHEDULE_H_
#define WSCHED_SERVER_SCALING_SCHEDULE_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "server/core/pool.h"

namespace wsched::scaling {

struct WarmBufferNow {
  int nodes = 0;
  // Index of the window in effect; nullopt when the default applies.
  std::optional<size_t> window;
};

struct ScaleDownNow {
  bool allowed = true;
  std::optional<size_t> window;
};

// Windows are read in the schedule's time zone. A zone that no longer loads
// (the catalog refuses unknown ones, so only tzdata removed after the apply)
// reads them in UTC rather than dropping the schedule.
WarmBufferNow WarmBufferAt(const core::WarmBuffer& buffer, absl::Time now);
ScaleDownNow ScaleDownAt(const core::ScaleDownSchedule& schedule, absl::Time now);

// For signal details: "windows[0] mon-fri 08:00-18:00 Europe/Berlin".
std::string DescribeScheduleWindow(size_t index, const core::TimeWindow& window,
                                   const std::string& time_zone);

}  // namespace wsched::scaling

#endif  // WSCHED_SERVER_SCALING_SCHEDULE_H_
