// When the scaler's answer for an unchanged pool can change: the earliest of
// its timers. The simulator evaluates a pool at events and at this time
// only; between the two, evaluating would return the same decision (wake_test
// checks that against PoolScaler tick by tick).
#ifndef WSCHED_SERVER_SIMULATE_WAKE_H_
#define WSCHED_SERVER_SIMULATE_WAKE_H_

#include <optional>

#include "absl/time/time.h"
#include "server/core/pool.h"
#include "server/scaling/pool_observation.h"

namespace wsched::simulate {

// What one evaluation left behind (from the PoolScaler after Evaluate).
struct WakeInputs {
  const scaling::PoolObservation* observation = nullptr;
  std::optional<absl::Time> unmet_since;
  absl::Time last_scale_up = absl::InfinitePast();
  std::optional<absl::Time> backoff_until;
  absl::Duration batching_window;
};

// Remembers the next edge of a pool's schedules, found by walking them a
// minute at a time (windows start and end on whole local minutes, and every
// zone's offset is whole minutes), so the walk happens once per edge.
struct ScheduleEdges {
  absl::Time next_edge = absl::InfinitePast();  // Unknown.
  absl::Time found_at = absl::InfinitePast();
};

// The first moment after `now` at which the warm buffer in effect or
// whether scale-down is allowed differ from `now`; InfiniteFuture for a pool
// without windows. Looks a day ahead at most (then returns that day's end,
// to look again from there).
absl::Time NextScheduleEdge(const core::NodePool& pool, absl::Time now, ScheduleEdges& edges);

// The first moment after `now` at which Evaluate could answer differently
// for the same observation: the batching window of unmet work running out,
// an empty node idle long enough, the delay after a scale-up passing, a
// request's provisioning deadline, the backoff ending, a schedule edge.
// InfiniteFuture when none applies.
absl::Time NextWake(const WakeInputs& in, ScheduleEdges& edges, absl::Time now);

}  // namespace wsched::simulate

#endif  // WSCHED_SERVER_SIMULATE_WAKE_H_
