#include "server/simulate/wake.h"

#include <algorithm>

#include "server/scaling/schedule.h"

namespace wsched::simulate {
namespace {

struct ScheduleState {
  int warm_nodes = 0;
  bool scale_down_allowed = true;
  bool operator==(const ScheduleState&) const = default;
};

ScheduleState StateAt(const core::NodePool& pool, absl::Time t) {
  return {scaling::WarmBufferAt(pool.warm_buffer, t).nodes,
          scaling::ScaleDownAt(pool.scale_down.schedule, t).allowed};
}

}  // namespace

absl::Time NextScheduleEdge(const core::NodePool& pool, absl::Time now, ScheduleEdges& edges) {
  if (pool.warm_buffer.windows.empty() && pool.scale_down.schedule.windows.empty()) {
    return absl::InfiniteFuture();
  }
  // Still valid: found from a moment not after `now`, and not passed yet.
  if (edges.found_at <= now && edges.next_edge > now) return edges.next_edge;
  const ScheduleState here = StateAt(pool, now);
  const absl::Time first = absl::UnixEpoch() + absl::Floor(now - absl::UnixEpoch(), absl::Minutes(1)) +
                           absl::Minutes(1);
  constexpr int kMinutesAhead = 24 * 60;
  absl::Time t = first;
  for (int i = 0; i < kMinutesAhead; ++i, t += absl::Minutes(1)) {
    if (!(StateAt(pool, t) == here)) break;
  }
  edges = {.next_edge = t, .found_at = now};
  return t;
}

absl::Time NextWake(const WakeInputs& in, ScheduleEdges& edges, absl::Time now) {
  const scaling::PoolObservation& obs = *in.observation;
  const core::NodePool& pool = obs.pool;
  absl::Time wake = absl::InfiniteFuture();
  auto consider = [&](absl::Time t) {
    if (t > now) wake = std::min(wake, t);
  };
  // Unmet work asks for nodes once it has waited out the window.
  if (in.unmet_since) consider(*in.unmet_since + in.batching_window);
  // Scale-down pauses for delay_after_add after the latest scale-up, which
  // the scaler also reads from the requests and nodes it is shown.
  absl::Time latest_scale_up = in.last_scale_up;
  for (const scaling::ProvisioningRequest& request : obs.in_flight) {
    latest_scale_up = std::max(latest_scale_up, request.requested_at);
    // Counted as failed once strictly past the deadline.
    consider(request.requested_at + pool.max_node_provision_time + absl::Nanoseconds(1));
  }
  for (const scaling::PoolNode& node : obs.nodes) {
    latest_scale_up = std::max(latest_scale_up, node.requested_at);
    if (node.state == core::NodeState::kProvisioning && node.requested_at != absl::InfinitePast()) {
      consider(node.requested_at + pool.max_node_provision_time + absl::Nanoseconds(1));
    }
    if (node.workspaces > 0) continue;
    // An empty node may go once idle for `unneeded`, counted from the latest
    // of its empty time and its becoming ready (as the scaler counts).
    absl::Time empty_since = node.empty_since;
    if (node.ready_at) empty_since = std::max(empty_since, *node.ready_at);
    consider(empty_since + pool.scale_down.unneeded);
  }
  consider(latest_scale_up + pool.scale_down.delay_after_add);
  if (in.backoff_until) consider(*in.backoff_until);
  consider(NextScheduleEdge(pool, now, edges));
  return wake;
}

}  // namespace wsched::simulate
