#include "server/placement/time_to_gpu.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace wsched::placement {
namespace {

// Whole seconds; below a second, milliseconds (a cache-hit install can
// take 400ms, which whole seconds would print as "0").
std::string Text(absl::Duration d) {
  const absl::Duration unit = d < absl::Seconds(1) ? absl::Milliseconds(1) : absl::Seconds(1);
  return absl::FormatDuration(absl::Trunc(d, unit));
}

// "node start median 4m0s (5 samples)" or "default node start time 5m0s
// (--default_node_start_time; no measured starts yet)".
struct Part {
  absl::Duration time;
  std::string basis;
};

Part NodeStart(const TimeToGpuInputs& in) {
  if (in.node_start && in.node_start->samples > 0) {
    return {in.node_start->median, absl::StrCat("node start median ", Text(in.node_start->median),
                                                " (", in.node_start->samples, " samples)")};
  }
  return {in.default_node_start,
          absl::StrCat("default node start time ", Text(in.default_node_start),
                       " (--default_node_start_time; no measured starts in pool ", in.reason.pool,
                       " yet)")};
}

Part DriverInstall(const TimeToGpuInputs& in) {
  if (in.driver_install && in.driver_install->samples > 0) {
    return {in.driver_install->median,
            absl::StrCat("driver install median on kernel ", in.reason.kernel, " ",
                         Text(in.driver_install->median), " (", in.driver_install->samples,
                         " samples)")};
  }
  return {in.default_driver_install,
          absl::StrCat("default driver install time ", Text(in.default_driver_install),
                       " (--default_driver_install_time; no measured installs on kernel ",
                       in.reason.kernel, " yet)")};
}

// What is left of `part` after `since`, never below zero.
TimeToGpu Remaining(const Part& part, std::optional<absl::Time> since, absl::Time now) {
  if (!since) return {part.time, part.basis};
  absl::Duration elapsed = std::max(absl::ZeroDuration(), now - *since);
  return {std::max(absl::ZeroDuration(), part.time - elapsed),
          absl::StrCat(part.basis, " - ", Text(elapsed), " elapsed")};
}

TimeToGpu None(const std::string& why) { return {std::nullopt, "no estimate: " + why}; }

}  // namespace

TimeToGpu EstimateTimeToGpu(const TimeToGpuInputs& in) {
  const PendingReason& r = in.reason;
  switch (r.code) {
    case PendingCode::kQueued:
      return {absl::ZeroDuration(),
              absl::StrCat("room exists; queue position ", r.queue_position)};
    case PendingCode::kMigRelayout:
      // A handful of nvidia-smi calls at the node's next heartbeat.
      return {absl::ZeroDuration(),
              "a MIG re-layout takes seconds once the node's agent hears of it"};
    case PendingCode::kDriverInstalling:
      return Remaining(DriverInstall(in), r.since, in.now);
    case PendingCode::kNodeProvisioning:
      return Remaining(NodeStart(in), r.since, in.now);
    case PendingCode::kScaleUpRequested:
      return Remaining(NodeStart(in), r.since, in.now);
    case PendingCode::kScaleUpNotYetRequested: {
      Part start = NodeStart(in);
      return {start.time, absl::StrCat(start.basis, ", once the scale-up is requested")};
    }
    case PendingCode::kPoolBackingOff: {
      Part start = NodeStart(in);
      absl::Duration wait = r.until ? std::max(absl::ZeroDuration(), *r.until - in.now)
                                    : absl::ZeroDuration();
      return {wait + start.time,
              absl::StrCat("backoff ends in ", Text(wait), ", then ", start.basis)};
    }
    case PendingCode::kOrgGpuQuota:
      return None("the org must free GPUs or get a larger quota");
    case PendingCode::kClassPolicy:
      return None("the class is not allowed");
    case PendingCode::kNoPool:
      return None("no pool can hold the class");
    case PendingCode::kIommuUnsafe:
      return None("the free GPUs are not safe for a VM");
    case PendingCode::kGpusUnhealthy:
      return None("the free GPUs are unhealthy");
    case PendingCode::kGpusNotBound:
      return None("the free GPUs are not bound as the class needs");
    case PendingCode::kGpusNotLinked:
      return None("no free GPUs share NVLink as the class needs");
    case PendingCode::kDriverInstallFailed:
      return None("the driver install failed; an operator must act");
    case PendingCode::kPoolAtMaxSize:
      return None("the pool is at max_size; it waits for a workspace to stop");
  }
  return None("unknown reason");
}

}  // namespace wsched::placement
