#include "server/agent/node_json.h"

#include <nlohmann/json.hpp>

#include "server/agent/nvidia_mig.h"
#include "server/agent/nvidia_proc.h"

namespace wsched::agent {
namespace {

nlohmann::ordered_json DeviceToJson(const core::DeviceNode& device) {
  return {{"path", device.path},
          {"type", std::string(1, device.type)},
          {"major", device.major},
          {"minor", device.minor}};
}

nlohmann::ordered_json OptionalDeviceToJson(const std::optional<core::DeviceNode>& device) {
  return device ? DeviceToJson(*device) : nlohmann::ordered_json();
}

nlohmann::ordered_json MigToJson(const std::optional<core::GpuMig>& mig) {
  if (!mig) return nullptr;
  nlohmann::ordered_json profiles = nlohmann::ordered_json::array();
  for (const core::MigProfile& profile : mig->profiles) {
    profiles.push_back({{"name", profile.name},
                        {"id", profile.id},
                        {"compute_slices", profile.compute_slices},
                        {"memory_bytes", profile.memory_bytes},
                        {"size", profile.size},
                        {"starts", profile.starts}});
  }
  nlohmann::ordered_json instances = nlohmann::ordered_json::array();
  for (const core::MigInstance& instance : mig->instances) {
    instances.push_back({{"profile", instance.profile},
                         {"gpu_instance", instance.gpu_instance},
                         {"compute_instance", instance.compute_instance},
                         {"start", instance.start},
                         {"size", instance.size},
                         {"uuid", instance.uuid},
                         {"gi_access", OptionalDeviceToJson(instance.gi_access)},
                         {"ci_access", OptionalDeviceToJson(instance.ci_access)},
                         {"usable", IsUsableSlice(instance)}});
  }
  return {{"enabled", mig->enabled},
          {"pending_enabled", mig->pending_enabled},
          {"profiles", std::move(profiles)},
          {"instances", std::move(instances)}};
}

nlohmann::ordered_json LinksToJson(const std::vector<core::GpuLink>& links) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const core::GpuLink& link : links) {
    out.push_back({{"peer", link.peer},
                   {"kind", core::GpuLinkKindName(link.kind)},
                   {"nvlinks", link.nvlinks}});
  }
  return out;
}

nlohmann::ordered_json GpuToJson(const core::Gpu& gpu, const core::PassthroughSafety& safety) {
  nlohmann::ordered_json members = nlohmann::ordered_json::array();
  for (const core::PciDevice& member : gpu.iommu_group_members) {
    members.push_back({{"pci_address", member.address},
                       {"pci_class", member.pci_class},
                       {"class_name", core::PciClassName(member.pci_class)},
                       {"vendor", member.vendor},
                       {"driver", member.driver.value_or("")}});
  }
  return {{"index", gpu.index},
          {"uuid", gpu.uuid},
          {"pci_address", gpu.pci_address},
          {"driver", gpu.driver.value_or("")},
          {"model", gpu.model},
          {"memory_bytes", gpu.memory_bytes},
          {"numa_node", gpu.numa_node},
          {"healthy", gpu.healthy},
          {"device", DeviceToJson(GpuDeviceNode(gpu.index))},
          {"iommu_group", gpu.iommu_group},
          {"iommu_group_members", std::move(members)},
          {"passthrough_safe", safety.safe},
          {"passthrough_unsafe_reason", safety.reason},
          {"mig", MigToJson(gpu.mig)},
          {"links", LinksToJson(gpu.links)}};
}

}  // namespace

std::vector<core::PassthroughSafety> ClassifyGpus(const core::NodeInfo& node) {
  std::vector<core::PassthroughSafety> safety;
  for (const core::Gpu& gpu : node.gpus) safety.push_back(core::ClassifyPassthrough(gpu));
  return safety;
}

std::string NodeInfoToJson(const core::NodeInfo& node,
                           const std::vector<core::PassthroughSafety>& safety) {
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    // A missing entry is a caller bug; say "unknown" rather than "safe".
    core::PassthroughSafety gpu_safety =
        i < safety.size() ? safety[i] : core::PassthroughSafety{false, "not classified"};
    gpus.push_back(GpuToJson(node.gpus[i], gpu_safety));
  }
  nlohmann::ordered_json control = nlohmann::ordered_json::array();
  for (const core::DeviceNode& device : node.control_devices) {
    control.push_back(DeviceToJson(device));
  }
  nlohmann::ordered_json out = {{"name", node.name},
                        {"pool", node.pool},
                        {"provider_id", node.provider_id},
                        {"cpu_millis", node.cpu_millis},
                        {"memory_bytes", node.memory_bytes},
                        {"kernel_version", node.kernel_version},
                        {"os_id", node.os_id},
                        {"os_version", node.os_version},
                        {"driver_version", node.driver_version},
                        {"gpus", std::move(gpus)},
                        {"control_devices", std::move(control)}};
  // ordered_json keeps keys as written, so the output reads top-down like the
  // node; "replace" keeps a model name with stray bytes from throwing.
  return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace wsched::agent
