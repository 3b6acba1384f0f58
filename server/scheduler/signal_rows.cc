#include "server/scheduler/signal_rows.h"

#include <utility>

namespace wsched::scheduler {
namespace {

// Spelled out (not a cast): the two enums are apart so that either can grow.
store::SignalReason RowReason(scaling::ScalingReason reason) {
  using R = scaling::ScalingReason;
  using S = store::SignalReason;
  switch (reason) {
    case R::kPendingWorkspaces: return S::kPendingWorkspaces;
    case R::kWarmBuffer: return S::kWarmBuffer;
    case R::kIdleTimeout: return S::kIdleTimeout;
    case R::kMinSize: return S::kMinSize;
    case R::kMaxSize: return S::kMaxSize;
    case R::kProvisioningFailed: return S::kProvisioningFailed;
    case R::kSteady: return S::kSteady;
  }
  return S::kSteady;
}

scaling::ScalingReason SignalReason(store::SignalReason reason) {
  using R = scaling::ScalingReason;
  using S = store::SignalReason;
  switch (reason) {
    case S::kPendingWorkspaces: return R::kPendingWorkspaces;
    case S::kWarmBuffer: return R::kWarmBuffer;
    case S::kIdleTimeout: return R::kIdleTimeout;
    case S::kMinSize: return R::kMinSize;
    case S::kMaxSize: return R::kMaxSize;
    case S::kProvisioningFailed: return R::kProvisioningFailed;
    case S::kSteady: return R::kSteady;
  }
  return R::kSteady;
}

}  // namespace

store::SignalRow SignalRowOf(const scaling::PoolSignal& signal, int64_t generation,
                             std::string leader) {
  store::SignalRow row;
  row.pool = signal.pool;
  row.generation = generation;
  row.leader = std::move(leader);
  row.current_size = signal.current_size;
  row.target_size = signal.target_size;
  row.nodes_to_remove = signal.nodes_to_remove;
  row.lost_nodes = signal.lost_nodes;
  for (scaling::ScalingReason reason : signal.reasons) row.reasons.push_back(RowReason(reason));
  row.detail = signal.detail;
  row.backoff_until = signal.backoff_until;
  return row;
}

scaling::PoolSignal PoolSignalOf(const store::SignalRow& row) {
  scaling::PoolSignal signal;
  signal.pool = row.pool;
  signal.generation = row.generation;
  signal.current_size = row.current_size;
  signal.target_size = row.target_size;
  signal.nodes_to_remove = row.nodes_to_remove;
  signal.lost_nodes = row.lost_nodes;
  for (store::SignalReason reason : row.reasons) signal.reasons.push_back(SignalReason(reason));
  signal.detail = row.detail;
  signal.backoff_until = row.backoff_until;
  return signal;
}

store::RelayoutRow RelayoutRowOf(const placement::RelayoutOrder& order, std::string leader) {
  store::RelayoutRow row;
  row.node = order.node;
  row.pool = order.pool;
  row.gpu_index = order.gpu_index;
  for (const placement::PlannedSlice& slice : order.layout) {
    row.layout.emplace_back(slice.profile, slice.start);
  }
  row.for_profile = order.for_profile;
  row.ordered_at = order.ordered_at;
  row.leader = std::move(leader);
  return row;
}

placement::RelayoutOrder RelayoutOrderOf(const store::RelayoutRow& row) {
  placement::RelayoutOrder order;
  order.node = row.node;
  order.pool = row.pool;
  order.gpu_index = row.gpu_index;
  for (const auto& [profile, start] : row.layout) order.layout.push_back({profile, start});
  order.for_profile = row.for_profile;
  order.ordered_at = row.ordered_at;
  return order;
}

}  // namespace wsched::scheduler
