// What the scaler is shown about one pool on each evaluation. The caller
// builds it from its snapshot; the scaler keeps only what it must remember
// between evaluations (timers, failure counts).
#ifndef WSCHED_SERVER_SCALING_POOL_OBSERVATION_H_
#define WSCHED_SERVER_SCALING_POOL_OBSERVATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "server/core/node.h"
#include "server/core/pool.h"
#include "server/core/workspace_class.h"
#include "server/scaling/capacity.h"

namespace wsched::scaling {

struct PoolNode {
  std::string name;
  core::NodeState state = core::NodeState::kReady;
  // Workspaces the node holds; on a lost node, those not yet stopped or
  // moved (they still hold its capacity).
  int workspaces = 0;
  // When the node was asked for (else when it registered). The provision
  // timeout and the time-to-ready estimate count from here. InfinitePast:
  // unknown, the scaler then counts from when it first saw the node.
  absl::Time requested_at = absl::InfinitePast();
  // When it first became ready; nullopt while it never was.
  std::optional<absl::Time> ready_at;
  // When it last became empty (its registration if it never held a
  // workspace). The scaler also restarts this timer itself whenever it sees
  // the node busy, so a stale value cannot get a node removed early.
  absl::Time empty_since = absl::InfinitePast();
  // Room left for new workspaces if the caller knows it (placement
  // snapshot). Without it a node counts as wholly free when empty and full
  // when busy: pending work must never wait on room that may not exist.
  std::optional<Capacity> free;
};

// Workspaces of one class waiting for room in this pool.
struct PendingWorkspaces {
  core::WorkspaceClass workspace_class;
  int64_t count = 1;
  // When the longest-waiting of them started waiting (InfiniteFuture: not
  // known). A scaler new to the pool - a new leader's - measures the
  // batching window from here, not from its own first look.
  absl::Time waiting_since = absl::InfiniteFuture();
};

// Nodes the actuator was asked for that have not registered yet; counting
// them keeps a burst of pending work from asking for the same nodes twice.
struct ProvisioningRequest {
  absl::Time requested_at;
  // Nodes of this request that have not registered yet: the caller lowers
  // it as nodes register (a node is counted either here or in `nodes`).
  int count = 0;
  // The generation of the signal that asked; when the actuator first
  // reported its instances RUNNING (its nodes' boot counts from there).
  int64_t generation = 0;
  std::optional<absl::Time> running_at;
};

struct PoolObservation {
  // With its warm-buffer and scale-down schedules. Passed on every
  // evaluation (not fixed at construction) so a catalog reload takes effect
  // on the next one.
  core::NodePool pool;
  // Every registered node, lost ones too: a lost node that still holds
  // workspaces (`workspaces` > 0) needs a replacement until they are
  // stopped or moved.
  std::vector<PoolNode> nodes;
  std::vector<PendingWorkspaces> pending;
  std::vector<ProvisioningRequest> in_flight;
};

// Feedback from an actuator (wsched.v1.ActuatorReport).
enum class ActuatorEventKind { kCreating, kRunning, kFailed, kOutOfResources };

struct ActuatorEvent {
  ActuatorEventKind kind = ActuatorEventKind::kCreating;
  int instances = 0;
  std::string detail;
  int64_t generation = 0;  // Of the signal acted upon.
};

}  // namespace wsched::scaling

#endif  // WSCHED_SERVER_SCALING_POOL_OBSERVATION_H_
