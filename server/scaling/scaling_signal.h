// What the autoscaler is told about one pool. Mirrors wsched.v1.PoolSignal;
// the gRPC layer converts. Kept free of protobuf so the scaling core stays
// pure and testable without generated code.
#ifndef WSCHED_SERVER_SCALING_SCALING_SIGNAL_H_
#define WSCHED_SERVER_SCALING_SCALING_SIGNAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace wsched::scaling {

// Why a pool has the target it has. Same order as the proto enum, so a
// sorted list of reasons reads the same on both sides.
enum class ScalingReason {
  kPendingWorkspaces,
  kWarmBuffer,
  kIdleTimeout,
  kMinSize,
  kMaxSize,
  kProvisioningFailed,
  kSteady,
};

// "pending_workspaces", "warm_buffer", ... (stable: actuator scripts see it).
const char* ScalingReasonName(ScalingReason reason);

struct PoolSignal {
  std::string pool;
  // Bumped only when the decision (target, nodes_to_remove, lost_nodes,
  // reasons) changes, so watchers can skip repeats; 0 means "never evaluated".
  int64_t generation = 0;
  int current_size = 0;
  int target_size = 0;
  // Specific empty nodes to delete; scale-down never leaves the choice to
  // the provider, which could pick a busy node.
  std::vector<std::string> nodes_to_remove;
  // Lost nodes that still hold workspaces: each counts in the target as a
  // node to replace until its workspaces are stopped or moved. Never in
  // nodes_to_remove; an actuator may delete and recreate them.
  std::vector<std::string> lost_nodes;
  // Sorted, no duplicates.
  std::vector<ScalingReason> reasons;
  std::string detail;
  std::optional<absl::Time> backoff_until;

  // The part of a signal whose change is worth a new generation.
  bool SameDecision(const PoolSignal& other) const {
    return target_size == other.target_size && nodes_to_remove == other.nodes_to_remove &&
           lost_nodes == other.lost_nodes && reasons == other.reasons;
  }
  friend bool operator==(const PoolSignal&, const PoolSignal&) = default;
};

// "pending_workspaces,warm_buffer" (for logs and actuator environments).
std::string JoinReasonNames(const std::vector<ScalingReason>& reasons);

}  // namespace wsched::scaling

#endif  // WSCHED_SERVER_SCALING_SCALING_SIGNAL_H_
