// The human-readable `detail` of a pool signal: why the target is what it is,
// in words an operator can act on ("3 pending gpu-1x workspaces need 1 more
// node; warm buffer 0").
#ifndef WSCHED_SERVER_SCALING_SIGNAL_DETAIL_H_
#define WSCHED_SERVER_SCALING_SIGNAL_DETAIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "server/core/pool.h"
#include "server/scaling/binpack.h"
#include "server/scaling/pool_observation.h"
#include "server/scaling/schedule.h"

namespace wsched::scaling {

// How scale-down went for the idle nodes of a pool.
struct ScaleDownView {
  // delay_after_add after the last scale-up.
  absl::Time scale_down_after = absl::InfinitePast();
  int64_t removed_idle = 0;
  // Surplus empty nodes kept because they have not been empty `unneeded` yet,
  // or because the pool scaled up too recently.
  int not_idle_long_enough = 0;
  int paused = 0;
  // What the pool's scale-down schedule says now, and how many idle nodes
  // it kept that would otherwise have been named.
  ScaleDownNow schedule;
  int held_by_schedule = 0;
};

// Everything the text mentions; pointers are borrowed for the call.
struct DetailInputs {
  const core::NodePool* pool = nullptr;
  const std::vector<PendingWorkspaces>* pending = nullptr;
  const PackingResult* packing = nullptr;
  // Set while unmet pending work waits out the batching window.
  std::optional<absl::Duration> window_left;
  int warm_buffer = 0;
  // The warm_buffer window in effect (nullopt: the default or a constant).
  std::optional<size_t> warm_window;
  // Busy nodes + nodes for pending work + warm buffer.
  int64_t demand = 0;
  // The target before the min/max clamp (also counting nodes kept while
  // they wait for their idle timeout).
  int64_t unclamped = 0;
  const std::vector<const PoolNode*>* failed = nullptr;
  const std::vector<const PoolNode*>* lost = nullptr;
  // Lost nodes still holding workspaces (see PoolSignal::lost_nodes).
  const std::vector<const PoolNode*>* lost_busy = nullptr;
  int timed_out_requested = 0;
  ScaleDownView down;
  std::vector<std::string> removed_idle;
  std::optional<absl::Time> backoff_until;
  int consecutive_failures = 0;
  std::string last_failure;
  bool held_back = false;  // The backoff kept the target from growing.
};

std::string DescribeSignal(const DetailInputs& in);

}  // namespace wsched::scaling

#endif  // WSCHED_SERVER_SCALING_SIGNAL_DETAIL_H_
