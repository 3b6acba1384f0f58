// Time to GPU: how long a pending workspace will likely wait, from why it
// waits (pending_reason.h) and what was measured: the pool's node start
// times and the driver install times on the node's kernel. Each estimate
// says what it was made of, including which configured default stood in
// for a measurement that does not exist yet, and which phases (node boot,
// driver install, ...) it is made of, each with its median and 90th
// percentile and how much of it has elapsed (docs/placement.md "Time to
// GPU").
//
// Pure: no I/O, no clock reads.
#ifndef WSCHED_SERVER_PLACEMENT_TIME_TO_GPU_H_
#define WSCHED_SERVER_PLACEMENT_TIME_TO_GPU_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "server/placement/pending_reason.h"

namespace wsched::placement {

struct MeasuredTime {
  absl::Duration median;
  int samples = 0;
  // The 90th percentile; nullopt: not measured, the median stands in.
  std::optional<absl::Duration> p90;
};

// The stretches a wait is made of, in the order they happen. kFirstReady
// comes after the placement: it is shown last and not counted in the time
// to place (docs/placement.md "Estimates that are checked").
enum class PhaseKind { kQueue, kBackoff, kCloudStart, kNodeBoot, kDriverInstall, kFirstReady };

std::string PhaseKindName(PhaseKind kind);

struct EstimatePhase {
  PhaseKind kind = PhaseKind::kQueue;
  absl::Duration p50;
  absl::Duration p90;
  int samples = 0;            // Measured samples behind p50 and p90.
  bool default_used = false;  // A configured default stood in for them.
  absl::Duration elapsed;     // Under way for this long (zero: not begun).
  absl::Duration remaining_p50;
  absl::Duration remaining_p90;
  friend bool operator==(const EstimatePhase&, const EstimatePhase&) = default;
};

struct TimeToGpuInputs {
  PendingReason reason;
  // The pool's measured node start (asked for -> ready), if any.
  std::optional<MeasuredTime> node_start;
  // The pool's measured cloud starts (scale-up signal -> the actuator's
  // first RUNNING report for it) and node boots (RUNNING -> registered), if
  // any. With both, a new node's start is CLOUD_START then NODE_BOOT from
  // them; else one NODE_BOOT from `node_start`, counted from the request.
  std::optional<MeasuredTime> cloud_start;
  std::optional<MeasuredTime> node_boot;
  // Measured driver installs on the reason's pool and kernel (for a wait
  // on a new node: on `new_node_install_kernel`), if any.
  std::optional<MeasuredTime> driver_install;
  // The pool's measured first readies (placed -> the first ready report),
  // if any. Only measured ones make a FIRST_READY phase: no default.
  std::optional<MeasuredTime> first_ready;
  // Set when a node the pool starts installs its driver before it takes
  // work (NewNodeInstallKernel), or when the provisioning node waited for
  // will (ProvisioningNodeInstallKernel): a wait for a node to start
  // (WaitsForANodeToStart) then waits that install too. The kernel it
  // installs on; empty when not known (no node of the pool up and no
  // install of it measured).
  std::optional<std::string> new_node_install_kernel;
  // Flags standing in while nothing is measured.
  absl::Duration default_node_start = absl::Minutes(5);
  absl::Duration default_driver_install = absl::Minutes(10);
  // The scaler batches pending work this long before it asks for nodes
  // (--scaling_batching_window): the wait before a scale-up is requested.
  absl::Duration batching_window = absl::ZeroDuration();
  absl::Time now;
};

struct TimeToGpu {
  // nullopt: no estimate can be made (quota, policy, max_size, a failed
  // install, broken GPUs: they need a person, not time).
  // The sum of the phases' remaining p50.
  std::optional<absl::Duration> estimate;
  // The sum of the phases' remaining p90: the bound a placement is checked
  // against. Summing p90s overstates the p90 of the sum, so it errs long.
  std::optional<absl::Duration> estimate_p90;
  // Both sums leave out a FIRST_READY phase, which follows the placement.
  std::vector<EstimatePhase> phases;
  // `estimate` and the FIRST_READY phase's remaining p50: set only when
  // there is an estimate and the pool measured first readies.
  std::optional<absl::Duration> estimate_to_ready;
  // "node start median 4m0s (5 samples) - 1m10s elapsed", or why none.
  std::string basis;
};

TimeToGpu EstimateTimeToGpu(const TimeToGpuInputs& in);

// Whether a workspace held back by `code` waits for a node the pool has not
// started yet (a scale-up to be requested, requested, or after a backoff):
// only then does the pool's picture of a new node's install matter.
bool WaitsForANewNode(PendingCode code);
// A new node, or one registered and not ready yet (NODE_PROVISIONING):
// only then does `new_node_install_kernel` matter.
bool WaitsForANodeToStart(PendingCode code);

// Whether a placement that took `took` kept its `p90` estimate. The queue's
// own pass and the change feed take a moment that no estimate counts (room
// that exists is estimated at 0), so a second of grace is allowed.
inline constexpr absl::Duration kEstimateGrace = absl::Seconds(1);
inline bool WithinEstimate(absl::Duration took, absl::Duration p90) {
  return took <= p90 + kEstimateGrace;
}

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_TIME_TO_GPU_H_
