// Time to GPU: how long a pending workspace will likely wait, from why it
// waits (pending_reason.h) and what was measured: the pool's node start
// times and the driver install times on the node's kernel. Each estimate
// says what it was made of, including which configured default stood in
// for a measurement that does not exist yet.
//
// Pure: no I/O, no clock reads.
#ifndef WSCHED_SERVER_PLACEMENT_TIME_TO_GPU_H_
#define WSCHED_SERVER_PLACEMENT_TIME_TO_GPU_H_

#include <optional>
#include <string>

#include "absl/time/time.h"
#include "server/placement/pending_reason.h"

namespace wsched::placement {

struct MeasuredTime {
  absl::Duration median;
  int samples = 0;
};

struct TimeToGpuInputs {
  PendingReason reason;
  // The pool's measured node start (asked for -> ready), if any.
  std::optional<MeasuredTime> node_start;
  // Measured driver installs on the reason's pool and kernel, if any.
  std::optional<MeasuredTime> driver_install;
  // Flags standing in while nothing is measured.
  absl::Duration default_node_start = absl::Minutes(5);
  absl::Duration default_driver_install = absl::Minutes(10);
  absl::Time now;
};

struct TimeToGpu {
  // nullopt: no estimate can be made (quota, policy, max_size, a failed
  // install, broken GPUs: they need a person, not time).
  std::optional<absl::Duration> estimate;
  // "node start median 4m0s (5 samples) - 1m10s elapsed", or why none.
  std::string basis;
};

TimeToGpu EstimateTimeToGpu(const TimeToGpuInputs& in);

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_TIME_TO_GPU_H_
