#include "server/placement/estimate_inputs.h"

#include <optional>

#include "server/placement/new_node_install.h"

namespace wsched::placement {
namespace {

template <typename Key>
std::optional<MeasuredTime> Find(const std::map<Key, MeasuredTime>& measured, const Key& key) {
  auto it = measured.find(key);
  if (it == measured.end()) return std::nullopt;
  return it->second;
}

// The install a new node of `pool_id` runs, as NewNodeInstallKernel says.
std::optional<std::string> NewNodeKernel(const std::string& pool_id, const MeasuredTimes& times,
                                         const PoolPicture& picture) {
  if (picture.pools == nullptr || picture.snapshot == nullptr || picture.driver_policy == nullptr) {
    return std::nullopt;
  }
  const core::NodePool* pool = core::FindPool(*picture.pools, pool_id);
  if (pool == nullptr) return std::nullopt;
  auto kernels = times.install_kernels.find(pool_id);
  return NewNodeInstallKernel(
      *pool, *picture.snapshot, *picture.driver_policy,
      kernels == times.install_kernels.end() ? std::vector<std::string>() : kernels->second);
}

}  // namespace

TimeToGpuInputs EstimateInputs(const PendingReason& reason, const MeasuredTimes& times,
                               const PoolPicture& picture, absl::Time now) {
  TimeToGpuInputs in;
  in.reason = reason;
  in.node_start = Find(times.node_start, reason.pool);
  in.cloud_start = Find(times.cloud_start, reason.pool);
  in.node_boot = Find(times.node_boot, reason.pool);
  in.first_ready = Find(times.first_ready, reason.pool);
  std::string install_kernel = reason.kernel;
  if (WaitsForANewNode(reason.code)) {
    in.new_node_install_kernel = NewNodeKernel(reason.pool, times, picture);
    install_kernel = in.new_node_install_kernel.value_or("");
  } else if (reason.code == PendingCode::kNodeProvisioning && picture.snapshot != nullptr) {
    if (const SnapshotNode* node = picture.snapshot->FindNode(reason.node)) {
      in.new_node_install_kernel = ProvisioningNodeInstallKernel(*node);
      install_kernel = in.new_node_install_kernel.value_or("");
    }
  }
  in.driver_install = Find(times.driver_install, std::pair(reason.pool, install_kernel));
  in.default_node_start = times.default_node_start;
  in.default_driver_install = times.default_driver_install;
  in.batching_window = times.batching_window;
  in.now = now;
  return in;
}

}  // namespace wsched::placement
