#include "server/core/driver_readiness.h"

#include "absl/strings/str_cat.h"

namespace wsched::core {

DriverReadiness EvaluateDriver(const std::vector<DriverPolicyEntry>& policy, const NodeInfo& node,
                               const DriverHistory& history, GpuBinding binding) {
  DriverReadiness result;
  if (node.gpus.empty()) {
    result.detail = "no GPUs";
    return result;
  }
  if (binding == GpuBinding::kVfio) {
    result.detail = "GPUs pass through to VMs (gpu_binding vfio); the host needs no NVIDIA driver";
    return result;
  }
  result.requirement =
      FindDriverRequirement(policy, node.kernel_version, node.os_id, node.os_version);
  if (!result.requirement) {
    result.state = DriverState::kNoPolicy;
    result.detail = absl::StrCat("no driver policy entry for kernel ", node.kernel_version, " on ",
                                 node.os_id, " ", node.os_version);
    return result;
  }
  const std::string& wanted = result.requirement->driver_version;
  if (history.verified_kernel == node.kernel_version && node.driver_version == wanted) {
    result.state = DriverState::kReady;
    result.detail = absl::StrCat("driver ", wanted, " loaded for kernel ", node.kernel_version);
  } else if (history.installing_kernel == node.kernel_version) {
    result.state = DriverState::kInstalling;
    result.detail = absl::StrCat("the agent installs driver ", wanted, " for kernel ",
                                 node.kernel_version, " with ", result.requirement->installer_image);
  } else if (history.failed_kernel == node.kernel_version) {
    result.state = DriverState::kInstallFailed;
    result.detail = absl::StrCat("install of driver ", wanted, " for kernel ", node.kernel_version,
                                 " failed",
                                 history.failure.empty() ? "" : absl::StrCat(": ", history.failure),
                                 "; run ", result.requirement->installer_image, " again");
  } else if (history.verified_kernel == node.kernel_version && !node.driver_version.empty() &&
             history.released_driver != wanted) {
    // A policy change, not a kernel change: the loaded driver still works.
    result.state = DriverState::kOutdated;
    result.detail = absl::StrCat("driver ", node.driver_version, " works for kernel ",
                                 node.kernel_version, "; the policy wants ", wanted,
                                 ": it serves until the pool's driver rollout releases it");
  } else {
    result.state = DriverState::kNeedsDriver;
    result.detail = absl::StrCat(
        history.released_driver == wanted && history.verified_kernel == node.kernel_version
            ? "released by the pool's driver rollout: "
            : "",
        "kernel ", node.kernel_version, " needs driver ", wanted, " (loaded: ",
        node.driver_version.empty() ? "none" : node.driver_version, "); install with ",
        result.requirement->installer_image);
  }
  return result;
}

DriverHistory HistoryOnReport(const std::vector<DriverPolicyEntry>& policy, const NodeInfo& node,
                              const DriverHistory& history, bool first_registration) {
  DriverHistory next = history;
  if (!first_registration || node.gpus.empty()) return next;
  auto requirement =
      FindDriverRequirement(policy, node.kernel_version, node.os_id, node.os_version);
  if (requirement && node.driver_version == requirement->driver_version) {
    next.verified_kernel = node.kernel_version;  // Pre-baked image: already good.
  }
  return next;
}

}  // namespace wsched::core
