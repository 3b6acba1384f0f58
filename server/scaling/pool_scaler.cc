#include "server/scaling/pool_scaler.h"

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/scaling/binpack.h"
#include "server/scaling/capacity.h"
#include "server/scaling/schedule.h"
#include "server/scaling/signal_detail.h"
#include "server/scaling/slice_demand.h"

namespace wsched::scaling {
namespace {

// What a node can still take, when the caller did not say.
Capacity RoomOf(const PoolNode& node, const Capacity& whole_node) {
  if (node.free) return *node.free;
  return node.workspaces == 0 ? whole_node : Capacity{};
}

// Names up to `surplus` idle nodes for removal, skipping nodes pending work
// will use and nodes not idle long enough; nothing while the pool is within
// delay_after_add of a scale-up or while its scale-down schedule forbids it.
// Cordoned and draining nodes go first (they cannot serve as the warm
// buffer), then the longest-empty.
ScaleDownView ChooseIdleNodes(std::vector<std::pair<absl::Time, const PoolNode*>> empty,
                              int64_t surplus, const std::set<const PoolNode*>& used_by_pending,
                              const core::ScaleDownSettings& settings, absl::Time scale_down_after,
                              const ScaleDownNow& schedule, absl::Time now,
                              std::vector<std::string>& names) {
  ScaleDownView down{.scale_down_after = scale_down_after, .schedule = schedule};
  // Nothing to name: the loop below would stop at its first node, so the
  // sort (every empty node, by name among equal times) is skipped.
  if (surplus <= 0) return down;
  std::sort(empty.begin(), empty.end(), [](const auto& a, const auto& b) {
    bool a_ready = a.second->state == core::NodeState::kReady;
    bool b_ready = b.second->state == core::NodeState::kReady;
    return std::tie(a_ready, a.first, a.second->name) < std::tie(b_ready, b.first, b.second->name);
  });
  for (const auto& [empty_since, node] : empty) {
    if (down.removed_idle + down.held_by_schedule >= surplus) break;
    if (used_by_pending.contains(node)) continue;
    if (now - empty_since < settings.unneeded) {
      ++down.not_idle_long_enough;
    } else if (now < scale_down_after) {
      ++down.paused;
    } else if (!schedule.allowed) {
      ++down.held_by_schedule;
    } else {
      names.push_back(node->name);
      ++down.removed_idle;
    }
  }
  return down;
}

// Actuator details come from outside; keep the signal text bounded.
std::string Bounded(std::string text) {
  constexpr size_t kMaxDetail = 200;
  if (text.size() > kMaxDetail) text.resize(kMaxDetail);
  return text;
}

absl::Time LongestWaitStart(const PoolObservation& observation) {
  absl::Time since = absl::InfiniteFuture();
  for (const PendingWorkspaces& pending : observation.pending) {
    since = std::min(since, pending.waiting_since);
  }
  return since;
}

}  // namespace

// The pool's nodes sorted by what they mean for scaling.
struct PoolScaler::Census {
  int registered = 0;
  // Healthy nodes that hold workspaces.
  int holding = 0;
  // Nodes the pool has or is getting that are not broken: what the target
  // can never drop below without naming nodes.
  int kept = 0;
  // Of those, empty nodes that can take work now or soon: ready, booting and
  // requested ones (not cordoned or draining).
  int open_empty = 0;
  // Free room pending work may use before new nodes, in the order to try.
  std::vector<Capacity> room;
  // Parallel to `room`: the node (nullptr for a requested one), and whether
  // using it keeps a node the target would not otherwise count (an empty or
  // provisioning node, unlike a busy one).
  std::vector<const PoolNode*> room_node;
  std::vector<bool> room_adds_node;
  // Healthy empty nodes past provisioning, with their effective empty time.
  std::vector<std::pair<absl::Time, const PoolNode*>> empty;
  // Empty broken nodes, removed before any healthy one.
  std::vector<const PoolNode*> failed;
  std::vector<const PoolNode*> lost;
  // Lost nodes that still hold workspaces: each needs a node in its place.
  std::vector<const PoolNode*> lost_busy;
  int timed_out_requested = 0;
  bool new_failure = false;
};

PoolScaler::PoolScaler(ScalerOptions options)
    : options_(std::move(options)),
      backoff_(options_.backoff),
      history_(options_.history_samples) {}

void PoolScaler::ForgetVanished(const PoolObservation& observation) {
  absl::flat_hash_set<absl::string_view> present;  // Views into `observation`.
  for (const PoolNode& node : observation.nodes) present.insert(node.name);
  auto prune_map = [&](auto& by_name) {
    absl::erase_if(by_name, [&](const auto& entry) { return !present.contains(entry.first); });
  };
  auto prune_set = [&](absl::flat_hash_set<std::string>& names) {
    absl::erase_if(names, [&](const std::string& name) { return !present.contains(name); });
  };
  prune_map(last_seen_busy_);
  prune_map(first_seen_provisioning_);
  prune_set(counted_ready_);
  prune_set(counted_timed_out_);
  std::set<absl::Time> requested;
  for (const ProvisioningRequest& request : observation.in_flight) {
    requested.insert(request.requested_at);
  }
  std::erase_if(counted_timed_out_requests_,
                [&](absl::Time at) { return !requested.contains(at); });
}

void PoolScaler::RecordSightings(const PoolObservation& observation, absl::Time now) {
  if (first_evaluation_ == absl::InfinitePast()) first_evaluation_ = now;
  for (const PoolNode& node : observation.nodes) {
    if (node.workspaces > 0) last_seen_busy_[node.name] = now;
    if (node.state == core::NodeState::kProvisioning) {
      first_seen_provisioning_.try_emplace(node.name, now);
    }
    // A node that came up feeds the estimate, and if it came up after the
    // latest failure the provider works again: the backoff ends.
    if (node.ready_at && node.state != core::NodeState::kProvisioning &&
        counted_ready_.insert(node.name).second) {
      // Only starts this scaler watched: a new leader's first look finds
      // nodes that came up long ago, whose request it never saw.
      if (node.requested_at != absl::InfinitePast() && *node.ready_at >= first_evaluation_) {
        history_.Record(*node.ready_at - node.requested_at);
        new_start_samples_.push_back(*node.ready_at - node.requested_at);
      }
      if (*node.ready_at > backoff_.last_failure_at()) backoff_.RecordSuccess();
    }
  }
}

PoolScaler::Census PoolScaler::TakeCensus(const PoolObservation& observation, absl::Time now) {
  const core::NodePool& pool = observation.pool;
  const Capacity whole_node = Capacity::OfShape(pool.shape);
  Census census;
  std::vector<std::pair<absl::Time, const PoolNode*>> empty_ready;
  std::vector<const PoolNode*> busy_ready, provisioning;
  for (const PoolNode& node : observation.nodes) {
    ++census.registered;
    bool empty = node.workspaces == 0;
    if (node.state == core::NodeState::kLost) {
      // Not capacity. Its workspaces still need a node until they are
      // stopped or moved (then they are pending work or gone).
      (empty ? census.lost : census.lost_busy).push_back(&node);
      continue;
    }
    if (node.state == core::NodeState::kProvisioning) {
      absl::Time requested = node.requested_at != absl::InfinitePast()
                                 ? node.requested_at
                                 : first_seen_provisioning_.at(node.name);
      if (now - requested > pool.max_node_provision_time) {
        if (counted_timed_out_.insert(node.name).second) census.new_failure = true;
        if (empty) census.failed.push_back(&node);
        continue;
      }
      ++census.kept;
      if (!empty) ++census.holding;
      provisioning.push_back(&node);
      continue;
    }
    ++census.kept;
    if (!empty) {
      ++census.holding;
      if (node.state == core::NodeState::kReady) busy_ready.push_back(&node);
      continue;
    }
    // The node has been idle since the latest of: the caller's timer, the
    // last time this scaler saw it busy, and when it became ready.
    absl::Time empty_since = node.empty_since;
    if (auto it = last_seen_busy_.find(node.name); it != last_seen_busy_.end()) {
      empty_since = std::max(empty_since, it->second);
    }
    if (node.ready_at) empty_since = std::max(empty_since, *node.ready_at);
    census.empty.emplace_back(empty_since, &node);
    if (node.state == core::NodeState::kReady) empty_ready.emplace_back(empty_since, &node);
  }

  // Busy nodes first so pending work packs onto them and empty nodes stay
  // empty; among empty nodes the most recently used first, leaving the
  // longest-idle ones free to go. Only pending work reads this order, so
  // without any the sort is skipped.
  if (!observation.pending.empty()) {
    std::sort(empty_ready.begin(), empty_ready.end(), [](const auto& a, const auto& b) {
      return std::tie(b.first, a.second->name) < std::tie(a.first, b.second->name);
    });
  }
  auto add_room = [&](const PoolNode* node, Capacity room, bool adds_node) {
    if (adds_node) ++census.open_empty;
    census.room.push_back(room);
    census.room_node.push_back(node);
    census.room_adds_node.push_back(adds_node);
  };
  for (const PoolNode* node : busy_ready) add_room(node, RoomOf(*node, whole_node), false);
  for (const auto& [since, node] : empty_ready) add_room(node, RoomOf(*node, whole_node), true);
  for (const PoolNode* node : provisioning) {
    add_room(node, RoomOf(*node, whole_node), node->workspaces == 0);
  }

  for (const ProvisioningRequest& request : observation.in_flight) {
    if (request.count <= 0) continue;
    if (now - request.requested_at > pool.max_node_provision_time) {
      // Never registered: the provider did not deliver.
      if (counted_timed_out_requests_.insert(request.requested_at).second) {
        census.new_failure = true;
      }
      census.timed_out_requested += request.count;
      continue;
    }
    // More than max_size can never be wanted; the bound also keeps a bogus
    // count from costing time.
    int count = std::min(request.count, std::max(0, pool.max_size));
    census.kept += count;
    for (int i = 0; i < count; ++i) add_room(nullptr, whole_node, true);
  }
  return census;
}

PoolScaler::PendingNeed PoolScaler::AssessPending(const PoolObservation& observation,
                                                  const Census& census, absl::Time now) {
  const core::NodePool& pool = observation.pool;
  std::vector<PendingGroup> groups;
  for (const PendingWorkspaces& pending : observation.pending) {
    groups.push_back(PendingGroupOf(pool, pending.workspace_class, pending.count));
  }
  PendingNeed need;
  // One node past max_size is enough to know the clamp applies, and keeps
  // the packing cheap however much work is pending.
  need.packing = PackPending(std::move(groups), census.room, Capacity::OfShape(pool.shape),
                             std::max(0, pool.max_size) + 1);
  bool unmet = need.packing.new_nodes > 0 || need.packing.beyond_limit > 0;
  if (!unmet) {
    unmet_since_.reset();
  } else if (!unmet_since_) {
    // At its first look at the pool (a new leader's scaler) the work has
    // already waited: since its own start, so that a failover neither
    // restarts the window nor publishes a smaller target meanwhile.
    unmet_since_ = assessed_ ? now : std::min(now, LongestWaitStart(observation));
  }
  assessed_ = true;
  // New nodes only once the work has waited out the batching window; room
  // on existing empty or booting nodes counts at once (it only keeps them).
  if (unmet) {
    absl::Duration waited = now - *unmet_since_;
    if (waited >= options_.batching_window) {
      need.new_nodes = need.packing.new_nodes;
    } else {
      need.window_left = options_.batching_window - waited;
    }
  }
  for (size_t i = 0; i < census.room.size(); ++i) {
    if (!need.packing.existing_used[i]) continue;
    if (census.room_node[i] != nullptr) need.used_nodes.insert(census.room_node[i]);
    if (census.room_adds_node[i]) ++need.reused_nodes;
  }
  return need;
}

absl::Time PoolScaler::LatestScaleUp(const PoolObservation& observation) const {
  // Besides this scaler's own requests, recently requested nodes count, so
  // a freshly elected leader still honours delay_after_add.
  absl::Time latest = last_scale_up_;
  for (const ProvisioningRequest& request : observation.in_flight) {
    latest = std::max(latest, request.requested_at);
  }
  for (const PoolNode& node : observation.nodes) latest = std::max(latest, node.requested_at);
  return latest;
}

PoolSignal PoolScaler::Evaluate(const PoolObservation& observation, absl::Time now) {
  const core::NodePool& pool = observation.pool;
  ForgetVanished(observation);
  RecordSightings(observation, now);
  Census census = TakeCensus(observation, now);
  if (census.new_failure) {
    backoff_.RecordFailure(now);
    last_failure_ = absl::StrCat("a node did not come up within ",
                                 absl::FormatDuration(pool.max_node_provision_time));
  }

  PendingNeed need = AssessPending(observation, census, now);
  WarmBufferNow warm = WarmBufferAt(pool.warm_buffer, now);
  int64_t warm_buffer = std::max(0, warm.nodes);
  // A lost node holding workspaces counts like a busy node, but is no
  // capacity: an empty node the pool has or is getting stands in for it,
  // else a new one. No batching window: the node is already gone.
  int64_t lost_demand = static_cast<int64_t>(census.lost_busy.size());
  // What the pool should hold: busy and lost-busy nodes, nodes for pending
  // work, and the warm buffer. Clamped to [min_size, max_size] this is the
  // target once surplus nodes are gone.
  int64_t demand =
      census.holding + lost_demand + need.reused_nodes + need.new_nodes + warm_buffer;

  // Empty nodes that can take work now or soon (ready, booting, requested;
  // not cordoned or draining) serve the lost nodes' workspaces first, then
  // the warm buffer.
  int64_t open_empty = census.open_empty - need.reused_nodes;
  int64_t lost_on_existing = std::min(lost_demand, std::max<int64_t>(0, open_empty));
  open_empty -= lost_on_existing;
  int64_t warm_from_existing = std::min(warm_buffer, std::max<int64_t>(0, open_empty));
  int64_t missing =
      need.new_nodes + (lost_demand - lost_on_existing) + warm_buffer - warm_from_existing;
  int64_t surplus = census.kept - census.holding - need.reused_nodes - lost_on_existing -
                    warm_from_existing;

  // Scale down only by name: broken nodes first (they are not capacity),
  // then surplus idle nodes, never below min_size.
  PoolSignal signal;
  signal.pool = pool.id;
  signal.current_size = census.registered;
  for (const PoolNode* node : census.failed) signal.nodes_to_remove.push_back(node->name);
  for (const PoolNode* node : census.lost) signal.nodes_to_remove.push_back(node->name);
  for (const PoolNode* node : census.lost_busy) signal.lost_nodes.push_back(node->name);
  int64_t removable = std::max<int64_t>(
      0, std::min<int64_t>(surplus, census.kept + missing - std::max(0, pool.min_size)));
  std::vector<std::string> idle_removed;
  ScaleDownView down = ChooseIdleNodes(
      census.empty, removable, need.used_nodes, pool.scale_down,
      LatestScaleUp(observation) + pool.scale_down.delay_after_add,
      ScaleDownAt(pool.scale_down.schedule, now), now, idle_removed);
  signal.nodes_to_remove.insert(signal.nodes_to_remove.end(), idle_removed.begin(),
                                idle_removed.end());

  // Every healthy node not named stays, plus what is missing.
  int64_t remaining = census.kept - down.removed_idle;
  int64_t unclamped = remaining + missing;
  int64_t target = std::min<int64_t>(std::max<int64_t>(unclamped, pool.min_size), pool.max_size);

  // While backing off, ask for nothing the pool does not already have.
  signal.backoff_until = backoff_.ActiveUntil(now);
  bool held_back = signal.backoff_until.has_value() && target > remaining;
  if (held_back) target = remaining;
  if (target > remaining) last_scale_up_ = now;
  signal.target_size = static_cast<int>(target);

  std::set<ScalingReason> reasons;
  // A lost node's workspaces wait for a node just as pending ones do.
  if (need.new_nodes + need.reused_nodes + lost_demand > 0) {
    reasons.insert(ScalingReason::kPendingWorkspaces);
  }
  if (warm_buffer > 0) reasons.insert(ScalingReason::kWarmBuffer);
  if (down.removed_idle > 0 || !census.lost.empty()) reasons.insert(ScalingReason::kIdleTimeout);
  if (signal.backoff_until || !census.failed.empty()) {
    reasons.insert(ScalingReason::kProvisioningFailed);
  }
  if (demand < pool.min_size) reasons.insert(ScalingReason::kMinSize);
  if (unclamped > pool.max_size) {
    reasons.insert(ScalingReason::kMaxSize);
  }
  if (reasons.empty()) reasons.insert(ScalingReason::kSteady);
  signal.reasons.assign(reasons.begin(), reasons.end());

  DetailInputs detail{
      .pool = &pool,
      .pending = &observation.pending,
      .packing = &need.packing,
      .window_left = need.window_left,
      .warm_buffer = static_cast<int>(warm_buffer),
      .warm_window = warm.window,
      .demand = demand,
      .unclamped = unclamped,
      .failed = &census.failed,
      .lost = &census.lost,
      .lost_busy = &census.lost_busy,
      .timed_out_requested = census.timed_out_requested,
      .down = down,
      .removed_idle = std::move(idle_removed),
      .backoff_until = signal.backoff_until,
      .consecutive_failures = backoff_.consecutive_failures(),
      .last_failure = last_failure_,
      .held_back = held_back,
  };
  signal.detail = DescribeSignal(detail);

  signal.generation = last_signal_.generation + (signal.SameDecision(last_signal_) ? 0 : 1);
  last_signal_ = signal;
  return signal;
}

void PoolScaler::OnActuatorEvent(const ActuatorEvent& event, absl::Time now) {
  switch (event.kind) {
    case ActuatorEventKind::kCreating:
      return;
    case ActuatorEventKind::kRunning:
      backoff_.RecordSuccess();
      return;
    case ActuatorEventKind::kFailed:
      backoff_.RecordFailure(now);
      last_failure_ = Bounded(absl::StrCat("actuator reported a failure: ", event.detail));
      return;
    case ActuatorEventKind::kOutOfResources:
      backoff_.RecordFailure(now);
      last_failure_ = Bounded(absl::StrCat("provider is out of resources: ", event.detail));
      return;
  }
}

std::optional<absl::Duration> PoolScaler::EstimatePlacementDelay() const {
  return scaling::EstimatePlacementDelay(history_, options_.default_time_to_ready);
}

}  // namespace wsched::scaling
