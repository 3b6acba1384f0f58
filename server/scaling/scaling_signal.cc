#include "server/scaling/scaling_signal.h"

#include "absl/strings/str_join.h"

namespace wsched::scaling {

const char* ScalingReasonName(ScalingReason reason) {
  switch (reason) {
    case ScalingReason::kPendingWorkspaces:
      return "pending_workspaces";
    case ScalingReason::kWarmBuffer:
      return "warm_buffer";
    case ScalingReason::kIdleTimeout:
      return "idle_timeout";
    case ScalingReason::kMinSize:
      return "min_size";
    case ScalingReason::kMaxSize:
      return "max_size";
    case ScalingReason::kProvisioningFailed:
      return "provisioning_failed";
    case ScalingReason::kSteady:
      return "steady";
  }
  return "unknown";
}

std::string JoinReasonNames(const std::vector<ScalingReason>& reasons) {
  return absl::StrJoin(reasons, ",", [](std::string* out, ScalingReason reason) {
    out->append(ScalingReasonName(reason));
  });
}

}  // namespace wsched::scaling
