#include "server/agent/report.h"

#include <algorithm>
#include <string>

namespace wsched::agent {
namespace {

wsched::v1::GpuHealth HealthOf(const core::Gpu& gpu) {
  return gpu.healthy ? wsched::v1::GPU_HEALTH_HEALTHY : wsched::v1::GPU_HEALTH_UNHEALTHY;
}

void FillGpu(const core::Gpu& gpu, wsched::v1::Gpu& out) {
  out.set_index(gpu.index);
  out.set_uuid(gpu.uuid);
  out.set_pci_address(gpu.pci_address);
  out.set_model(gpu.model);
  out.set_memory_bytes(gpu.memory_bytes);
  out.set_numa_node(gpu.numa_node);
  out.set_health(HealthOf(gpu));
  out.set_iommu_group(gpu.iommu_group);
  for (const core::PciDevice& member : gpu.iommu_group_members) {
    wsched::v1::IommuGroupMember* proto = out.add_iommu_group_members();
    proto->set_pci_address(member.address);
    proto->set_pci_class(member.pci_class);
    proto->set_vendor(member.vendor);
  }
}

void FillDevice(const core::DeviceNode& device, wsched::v1::DeviceNode& out) {
  out.set_path(device.path);
  out.set_type(std::string(1, device.type));
  out.set_major(device.major);
  out.set_minor(device.minor);
  out.set_permissions(device.permissions);
}

}  // namespace

wsched::v1::NodeInfo NodeInfoToProto(const core::NodeInfo& node) {
  wsched::v1::NodeInfo out;
  out.set_name(node.name);
  out.set_pool(node.pool);
  out.set_provider_id(node.provider_id);
  wsched::v1::Resources* allocatable = out.mutable_allocatable();
  allocatable->set_cpu_millis(node.cpu_millis);
  allocatable->set_memory_bytes(node.memory_bytes);
  allocatable->set_ephemeral_storage_bytes(node.ephemeral_storage_bytes);
  allocatable->set_disk_bytes(node.disk_bytes);
  out.set_kernel_version(node.kernel_version);
  out.set_os_id(node.os_id);
  out.set_os_version(node.os_version);
  out.set_driver_version(node.driver_version);
  for (const core::Gpu& gpu : node.gpus) FillGpu(gpu, *out.add_gpus());
  for (const core::DeviceNode& device : node.control_devices) {
    FillDevice(device, *out.add_control_devices());
  }
  return out;
}

void ApplyVerdicts(const std::map<std::string, GpuVerdict>& verdicts, wsched::v1::NodeInfo& node) {
  for (wsched::v1::Gpu& gpu : *node.mutable_gpus()) {
    auto it = verdicts.find(gpu.uuid());
    if (it == verdicts.end()) continue;
    gpu.set_health(it->second.healthy ? wsched::v1::GPU_HEALTH_HEALTHY
                                      : wsched::v1::GPU_HEALTH_UNHEALTHY);
    gpu.set_health_reason(it->second.healthy ? "" : it->second.reason);
  }
}

wsched::v1::HeartbeatRequest MakeHeartbeat(const core::NodeInfo& node,
                                           const std::vector<GpuUsage>& usage,
                                           const std::map<std::string, GpuVerdict>* verdicts) {
  wsched::v1::HeartbeatRequest out;
  out.set_node_name(node.name);
  out.set_kernel_version(node.kernel_version);
  out.set_driver_version(node.driver_version);
  if (verdicts == nullptr) {
    for (const core::Gpu& gpu : node.gpus) {
      (*out.mutable_gpu_health_by_uuid())[gpu.uuid] = HealthOf(gpu);
    }
  } else {
    for (const auto& [uuid, verdict] : *verdicts) {
      (*out.mutable_gpu_health_by_uuid())[uuid] =
          verdict.healthy ? wsched::v1::GPU_HEALTH_HEALTHY : wsched::v1::GPU_HEALTH_UNHEALTHY;
      if (!verdict.healthy) (*out.mutable_gpu_health_reason_by_uuid())[uuid] = verdict.reason;
    }
  }
  for (const GpuUsage& sample : usage) {
    // Without a utilisation figure there is nothing to report; a made-up 0
    // would read as "idle" to the scaler.
    if (sample.utilization_percent < 0) continue;
    wsched::v1::GpuUsage* proto = out.add_gpu_usage();
    proto->set_uuid(sample.uuid);
    proto->set_utilization_percent(sample.utilization_percent);
    proto->set_memory_used_bytes(std::max<int64_t>(sample.memory_used_bytes, 0));
  }
  return out;
}

}  // namespace wsched::agent
