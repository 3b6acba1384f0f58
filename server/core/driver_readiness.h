// Whether a GPU node may take GPU workspaces, from the driver policy.
#ifndef WSCHED_SERVER_CORE_DRIVER_READINESS_H_
#define WSCHED_SERVER_CORE_DRIVER_READINESS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

#include "server/core/driver_policy.h"
#include "server/core/node.h"
#include "server/core/pool.h"

namespace wsched::core {

// What the store remembers about a node's driver installs.
struct DriverHistory {
  // Kernel for which the driver is known good: an installer reported
  // success for it, or the node first registered with the wanted driver
  // already loaded. A kernel change leaves it behind, so readiness resets.
  std::string verified_kernel;
  // Kernel whose last install job failed; empty when none.
  std::string failed_kernel;
  // Kernel whose install the node's agent has started and not yet
  // reported the end of (a `node` pool); empty when none.
  std::string installing_kernel;
  // What the last failed install said (its message and log tail), for
  // operators; cleared by the next start or success.
  std::string failure;
  // The driver the pool's rollout released this node to install while it
  // still runs an older one that works (core/driver_rollout.h), and when:
  // a released node takes no new work and installs once its workspaces
  // end. Compared with the policy's driver, so a later policy change finds
  // the node outdated again instead of released.
  std::string released_driver;
  absl::Time released_at = absl::InfinitePast();

  friend bool operator==(const DriverHistory&, const DriverHistory&) = default;
};

struct DriverReadiness {
  DriverState state = DriverState::kNotNeeded;
  std::string detail;  // For operators: why, and what is wanted.
  std::optional<DriverRequirement> requirement;
};

// `binding` is the node's pool's: GPUs bound to vfio-pci pass through to VMs,
// whose guests load their own driver, so the host of a vfio pool needs none
// (kNotNeeded, like a node without GPUs).
DriverReadiness EvaluateDriver(const std::vector<DriverPolicyEntry>& policy, const NodeInfo& node,
                               const DriverHistory& history,
                               GpuBinding binding = GpuBinding::kHost);

// The history after a (re-)registration or heartbeat that reports `node`:
// a first registration with the wanted driver loaded counts as verified.
DriverHistory HistoryOnReport(const std::vector<DriverPolicyEntry>& policy, const NodeInfo& node,
                              const DriverHistory& history, bool first_registration);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_DRIVER_READINESS_H_
