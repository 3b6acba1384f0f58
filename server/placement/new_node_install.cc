#include "server/placement/new_node_install.h"

#include <algorithm>
#include <map>

namespace wsched::placement {
namespace {

// The pool's nodes on one kernel.
struct KernelNodes {
  int count = 0;
  const SnapshotNode* first = nullptr;  // By name: its OS is the kernel's.
  bool installs = false;                // One of them needs or runs an install.
};

bool ShowsAnInstall(core::DriverState state) {
  return state == core::DriverState::kNeedsDriver || state == core::DriverState::kInstalling ||
         state == core::DriverState::kInstallFailed || state == core::DriverState::kOutdated;
}

bool Contains(const std::vector<std::string>& kernels, const std::string& kernel) {
  return std::find(kernels.begin(), kernels.end(), kernel) != kernels.end();
}

bool PolicyNames(const std::vector<core::DriverPolicyEntry>& policy, const std::string& kernel) {
  return std::any_of(policy.begin(), policy.end(), [&](const core::DriverPolicyEntry& entry) {
    return core::GlobMatch(entry.kernel, kernel);
  });
}

}  // namespace

std::optional<std::string> NewNodeInstallKernel(const core::NodePool& pool,
                                                const Snapshot& snapshot,
                                                const std::vector<core::DriverPolicyEntry>& policy,
                                                const std::vector<std::string>& measured_kernels) {
  if (!pool.is_gpu() || pool.gpu_binding == core::GpuBinding::kVfio || policy.empty()) {
    return std::nullopt;
  }
  std::map<std::string, KernelNodes> by_kernel;
  snapshot.ForEachNodeOf(pool.id, [&](const SnapshotNode& node) {
    KernelNodes& nodes = by_kernel[node.info.kernel_version];
    ++nodes.count;
    if (nodes.first == nullptr || node.info.name < nodes.first->info.name) nodes.first = &node;
    nodes.installs = nodes.installs || ShowsAnInstall(node.driver_state);
  });
  if (by_kernel.empty()) {
    if (measured_kernels.empty()) return "";
    const std::string& latest = measured_kernels.front();
    return PolicyNames(policy, latest) ? std::optional(latest) : std::nullopt;
  }
  auto most = by_kernel.begin();
  for (auto it = by_kernel.begin(); it != by_kernel.end(); ++it) {
    const bool more = it->second.count > most->second.count;
    const bool tie_first = it->second.count == most->second.count &&
                           it->second.first->info.name < most->second.first->info.name;
    if (more || tie_first) most = it;
  }
  const auto& [kernel, nodes] = *most;
  const core::NodeInfo& info = nodes.first->info;
  if (!core::FindDriverRequirement(policy, kernel, info.os_id, info.os_version)) {
    return std::nullopt;
  }
  if (nodes.installs || Contains(measured_kernels, kernel)) return kernel;
  return std::nullopt;
}

std::optional<std::string> ProvisioningNodeInstallKernel(const SnapshotNode& node) {
  const bool installs = node.driver_state == core::DriverState::kNeedsDriver ||
                        node.driver_state == core::DriverState::kInstalling;
  if (node.info.gpus.empty() || !installs) return std::nullopt;
  return node.info.kernel_version;
}

}  // namespace wsched::placement
