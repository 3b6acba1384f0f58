// How a driver policy change rolls through a pool without taking it down
// (docs/operations.md "Driver rollouts"): nodes whose working driver the
// policy no longer wants (DriverState::kOutdated) are released to install
// a few at a time, the first one alone as the canary. A released node takes
// no new work and installs once its last workspace ends (or at the pool's
// drain deadline). A failed canary stops the rollout until an admin
// resumes it. These are the pure decisions; the scaling leader applies
// them (inventory/driver_rollouts.h).
#ifndef WSCHED_SERVER_CORE_DRIVER_ROLLOUT_H_
#define WSCHED_SERVER_CORE_DRIVER_ROLLOUT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "server/core/driver_readiness.h"
#include "server/core/node.h"
#include "server/core/pool.h"

namespace wsched::core {

// A GPU node of the pool as the rollout sees it.
struct RolloutNode {
  std::string name;
  DriverState state = DriverState::kReady;
  // Released by this pool's rollout for the policy's current driver.
  bool released = false;
  int workspaces = 0;
  std::string detail;  // The node's driver detail (a failure's message).
};

// What is kept of a pool's rollout between decisions (and replicas).
struct RolloutRecord {
  std::string canary;  // The first node released; empty before.
  bool paused = false;
  std::string reason;  // Why it is paused.
  // The canary's failure has stopped the rollout once; it does not stop
  // it again until the canary installs again and fails again, so an
  // admin's resume lets the rollout wait for the canary's retry.
  bool canary_failure_seen = false;
  friend bool operator==(const RolloutRecord&, const RolloutRecord&) = default;
};

struct RolloutCounts {
  int waiting = 0;     // Outdated, not released yet.
  int in_flight = 0;   // Released and not yet ready: waiting for workspaces, installing, failed.
  int failed = 0;      // Of in_flight: the last install failed.
  friend bool operator==(const RolloutCounts&, const RolloutCounts&) = default;
};

// The pool's nodes by where they are in its rollout.
RolloutCounts CountRollout(const std::vector<RolloutNode>& nodes);

struct RolloutStep {
  std::vector<std::string> release;      // Nodes to release now.
  std::optional<RolloutRecord> record;   // The record to keep; none: the rollout is done.
  RolloutCounts counts;                  // After the releases.
  bool stopped_now = false;              // This step paused it (a failed canary).
};

// The next step of a pool's rollout. `record` is the kept one (none before
// a rollout starts); a paused one is kept when nothing is to do, so an admin
// can pause a pool before a policy change. Nodes to release are the outdated ones with the fewest
// workspaces first (then by name), so idle nodes go before busy ones.
RolloutStep PlanRollout(const DriverRollout& settings, const std::vector<RolloutNode>& nodes,
                        std::optional<RolloutRecord> record);

// Whether a node's install may start now: always, unless the rollout
// released it while it still holds workspaces (`workspaces` > 0) and the
// pool's drain deadline (zero: none) has not passed since its release. A
// node whose kernel changed installs at once: it has no working driver.
bool InstallMayStart(const DriverHistory& history, const NodeInfo& node,
                     const std::string& wanted_driver, int workspaces,
                     const DriverRollout& settings, absl::Time now);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_DRIVER_ROLLOUT_H_
