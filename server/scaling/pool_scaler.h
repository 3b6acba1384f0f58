// PoolScaler: turns what one pool looks like now into its scaling signal,
// with the memory that hysteresis needs (batching window, empty timers,
// delay after a scale-up, provisioning backoff, time-to-ready history).
//
// Pure: the caller passes `now` into every call; no clock reads, no threads,
// no locks. One instance per pool, owned by the caller's loop, which holds
// whatever lock guards it.
#ifndef WSCHED_SERVER_SCALING_POOL_SCALER_H_
#define WSCHED_SERVER_SCALING_POOL_SCALER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "server/scaling/backoff.h"
#include "server/scaling/binpack.h"
#include "server/scaling/pool_observation.h"
#include "server/scaling/provision_estimate.h"
#include "server/scaling/scaling_signal.h"

namespace wsched::scaling {

struct ScalerOptions {
  // Pending work must be unmet this long before the pool grows, so a burst
  // of arrivals is answered with one request, and work that comes and goes
  // quickly asks for nothing.
  absl::Duration batching_window = absl::Seconds(2);
  BackoffPolicy backoff;
  // Time-to-ready estimate before any node of the pool has come up.
  std::optional<absl::Duration> default_time_to_ready;
  size_t history_samples = ProvisionHistory::kDefaultSamples;
};

class PoolScaler {
 public:
  explicit PoolScaler(ScalerOptions options = {});
  PoolScaler(const PoolScaler&) = delete;
  PoolScaler& operator=(const PoolScaler&) = delete;

  // The pool's signal at `now`. In steady state
  //   target = clamp(min_size, max_size,
  //                  nodes holding workspaces (lost ones too, named in
  //                  lost_nodes) + nodes pending work needs (bin-packed onto
  //                  free room first) + the warm buffer in effect at `now`).
  // Idle nodes are named only while the pool's scale-down schedule allows.
  // The pool shrinks only by naming empty nodes in nodes_to_remove: every
  // healthy node not named stays in the target, so surplus nodes that are
  // not idle long enough yet keep it higher, and nodes that cannot take work
  // (cordoned, draining, lost, stuck provisioning) never stand in for needed
  // ones. While backing off the target does not exceed the healthy nodes the
  // pool has (registered or requested). current_size counts registered
  // nodes in every state. The generation moves only when target,
  // nodes_to_remove or reasons change.
  PoolSignal Evaluate(const PoolObservation& observation, absl::Time now);

  // Actuator feedback: failures and stockouts back the pool off, running
  // instances end the backoff.
  void OnActuatorEvent(const ActuatorEvent& event, absl::Time now);

  // The last signal Evaluate returned (generation 0 before the first).
  const PoolSignal& last_signal() const { return last_signal_; }
  // How long new work waits for a node of this pool ("time to GPU").
  std::optional<absl::Duration> EstimatePlacementDelay() const;
  const ProvisionHistory& provision_history() const { return history_; }
  // Start times (asked for -> ready) measured since the last call, for the
  // caller to persist: every replica's time-to-GPU estimate reads them.
  std::vector<absl::Duration> TakeNewStartSamples() { return std::exchange(new_start_samples_, {}); }
  std::optional<absl::Time> BackoffUntil(absl::Time now) const { return backoff_.ActiveUntil(now); }
  // The timers Evaluate compares with `now`, for a caller that evaluates
  // only when an answer can change (the simulator): since when pending work
  // has not fit (nullopt while it fits), and when this scaler last asked for
  // more nodes than the pool had.
  std::optional<absl::Time> unmet_since() const { return unmet_since_; }
  absl::Time last_scale_up() const { return last_scale_up_; }

 private:
  struct Census;
  // What pending work asks of the pool.
  struct PendingNeed {
    PackingResult packing;
    // New nodes the work needs (0 until the batching window has passed).
    int64_t new_nodes = 0;
    // Empty, booting or requested nodes the work will land on.
    int64_t reused_nodes = 0;
    std::set<const PoolNode*> used_nodes;
    std::optional<absl::Duration> window_left;
  };

  void ForgetVanished(const PoolObservation& observation);
  void RecordSightings(const PoolObservation& observation, absl::Time now);
  Census TakeCensus(const PoolObservation& observation, absl::Time now);
  PendingNeed AssessPending(const PoolObservation& observation, const Census& census,
                            absl::Time now);
  absl::Time LatestScaleUp(const PoolObservation& observation) const;

  const ScalerOptions options_;
  Backoff backoff_;
  ProvisionHistory history_;
  std::string last_failure_;  // For the detail text while backing off.
  // Since when pending work has not fit on ready + provisioning nodes.
  std::optional<absl::Time> unmet_since_;
  bool assessed_ = false;  // AssessPending has run once.
  // When this scaler last asked for more nodes than the pool had.
  absl::Time last_scale_up_ = absl::InfinitePast();
  // By node name.
  // By node name; looked up, never walked in order (hash containers: the
  // leader evaluates every pool's nodes four times a second).
  absl::flat_hash_map<std::string, absl::Time> last_seen_busy_;
  absl::flat_hash_map<std::string, absl::Time> first_seen_provisioning_;
  absl::flat_hash_set<std::string> counted_ready_;
  absl::flat_hash_set<std::string> counted_timed_out_;
  // Provisioning requests already counted as failed, by request time.
  std::set<absl::Time> counted_timed_out_requests_;
  PoolSignal last_signal_;
  std::vector<absl::Duration> new_start_samples_;
  absl::Time first_evaluation_ = absl::InfinitePast();
};

}  // namespace wsched::scaling

#endif  // WSCHED_SERVER_SCALING_POOL_SCALER_H_
