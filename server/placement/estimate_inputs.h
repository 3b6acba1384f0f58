// What the time-to-GPU estimate of a waiting workspace is made from, in one
// place for every answer that carries one: a pending workspace's read and
// a quote (docs/placement.md "Estimates that are checked"). Both go from a
// reason and what the server measured of its pools to the same
// TimeToGpuInputs, so a quote "after a scale-up" and the estimate the
// workspace then gets count the same phases.
//
// Pure: no I/O, no clock reads.
#ifndef WSCHED_SERVER_PLACEMENT_ESTIMATE_INPUTS_H_
#define WSCHED_SERVER_PLACEMENT_ESTIMATE_INPUTS_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "server/core/driver_policy.h"
#include "server/core/pool.h"
#include "server/placement/pending_reason.h"
#include "server/placement/snapshot.h"
#include "server/placement/time_to_gpu.h"

namespace wsched::placement {

// What the server measured of its pools (timing_samples), and the
// configured times standing in for what it has not.
struct MeasuredTimes {
  std::map<std::string, MeasuredTime> node_start;   // By pool: asked for -> ready.
  std::map<std::string, MeasuredTime> cloud_start;  // By pool: signal -> RUNNING.
  std::map<std::string, MeasuredTime> node_boot;    // By pool: RUNNING -> registered.
  std::map<std::string, MeasuredTime> first_ready;  // By pool: placed -> first ready.
  // By (pool, kernel).
  std::map<std::pair<std::string, std::string>, MeasuredTime> driver_install;
  // By pool: the kernels of its measured installs, the most recent first.
  std::map<std::string, std::vector<std::string>> install_kernels;
  absl::Duration default_node_start = absl::Minutes(5);
  absl::Duration default_driver_install = absl::Minutes(10);
  // The scaler's --scaling_batching_window.
  absl::Duration batching_window = absl::ZeroDuration();
};

// Where the reason's pool stands: the catalog's pools, the nodes and the
// driver policy, for the install a node not started yet would run.
struct PoolPicture {
  const std::vector<core::NodePool>* pools = nullptr;
  const Snapshot* snapshot = nullptr;
  const std::vector<core::DriverPolicyEntry>* driver_policy = nullptr;
};

// The estimate's inputs for a workspace held back by `reason` at `now`:
// its pool's measured times and, when it waits for a node the pool has not
// started (WaitsForANewNode), the install such a node runs
// (NewNodeInstallKernel); when it waits for a provisioning node, the
// install that node reported it needs (ProvisioningNodeInstallKernel);
// each measured on that kernel when it can be.
TimeToGpuInputs EstimateInputs(const PendingReason& reason, const MeasuredTimes& times,
                               const PoolPicture& picture, absl::Time now);

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_ESTIMATE_INPUTS_H_
