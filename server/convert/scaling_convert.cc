#include "server/convert/scaling_convert.h"

#include <google/protobuf/util/time_util.h>

namespace wsched::convert {

v1::ScalingReason ToProto(scaling::ScalingReason reason) {
  using R = scaling::ScalingReason;
  switch (reason) {
    case R::kPendingWorkspaces: return v1::SCALING_REASON_PENDING_WORKSPACES;
    case R::kWarmBuffer: return v1::SCALING_REASON_WARM_BUFFER;
    case R::kIdleTimeout: return v1::SCALING_REASON_IDLE_TIMEOUT;
    case R::kMinSize: return v1::SCALING_REASON_MIN_SIZE;
    case R::kMaxSize: return v1::SCALING_REASON_MAX_SIZE;
    case R::kProvisioningFailed: return v1::SCALING_REASON_PROVISIONING_FAILED;
    case R::kSteady: return v1::SCALING_REASON_STEADY;
  }
  return v1::SCALING_REASON_UNSPECIFIED;
}

v1::PoolSignal ToProto(const scaling::PoolSignal& signal) {
  v1::PoolSignal out;
  out.set_pool(signal.pool);
  out.set_generation(signal.generation);
  out.set_current_size(signal.current_size);
  out.set_target_size(signal.target_size);
  for (const auto& node : signal.nodes_to_remove) out.add_nodes_to_remove(node);
  for (const auto& node : signal.lost_nodes) out.add_lost_nodes(node);
  for (scaling::ScalingReason reason : signal.reasons) out.add_reasons(ToProto(reason));
  out.set_detail(signal.detail);
  if (signal.backoff_until) {
    *out.mutable_backoff_until() = google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(
        absl::ToUnixMicros(*signal.backoff_until));
  }
  return out;
}

}  // namespace wsched::convert
