// A node's reported info (documents.h): resources, OS and driver, GPUs with
// their health and IOMMU groups, control devices and CDI.
#include <nlohmann/json.hpp>

#include "server/store/documents/device_node.h"
#include "server/store/documents/documents.h"
#include "server/store/documents/enums.h"
#include "server/store/documents/fields.h"
#include "server/store/documents/mig_document.h"

namespace wsched::store::documents {
namespace {

// Version 1 health: healthy unless stored as unhealthy.
enum class Health { kUnspecified, kHealthy, kUnhealthy };
const EnumNames& HealthNames() {
  static const EnumNames names = {{"GPU_HEALTH_UNSPECIFIED", static_cast<int>(Health::kUnspecified)},
                                  {"GPU_HEALTH_HEALTHY", static_cast<int>(Health::kHealthy)},
                                  {"GPU_HEALTH_UNHEALTHY", static_cast<int>(Health::kUnhealthy)}};
  return names;
}

nlohmann::json GpuJson(const core::Gpu& gpu) {
  nlohmann::json members = nlohmann::json::array();
  for (const auto& m : gpu.iommu_group_members) {
    nlohmann::json member = {{"pci_address", m.address}, {"pci_class", m.pci_class}, {"vendor", m.vendor}};
    if (m.driver) member["driver"] = *m.driver;  // Absent: not reported.
    members.push_back(std::move(member));
  }
  nlohmann::json j = {{"index", gpu.index},
                      {"uuid", gpu.uuid},
                      {"pci_address", gpu.pci_address},
                      {"model", gpu.model},
                      {"memory_bytes", gpu.memory_bytes},
                      {"numa_node", gpu.numa_node},
                      {"health", gpu.healthy ? "GPU_HEALTH_HEALTHY" : "GPU_HEALTH_UNHEALTHY"},
                      {"iommu_group", gpu.iommu_group},
                      {"iommu_group_members", members},
                      {"health_reason", gpu.health_reason},
                      {"cdi_device", gpu.cdi_device}};
  if (gpu.driver) j["driver"] = *gpu.driver;
  if (gpu.mig) j["mig"] = GpuMigJson(*gpu.mig);
  if (!gpu.links.empty()) j["links"] = GpuLinksJson(gpu.links);
  if (gpu.unhealthy_since != absl::InfinitePast()) j["unhealthy_since"] = Rfc3339(gpu.unhealthy_since);
  if (gpu.reported_healthy_since != absl::InfinitePast()) {
    j["reported_healthy_since"] = Rfc3339(gpu.reported_healthy_since);
  }
  return j;
}

core::Gpu ReadGpu(Fields& g) {
  core::Gpu gpu;
  gpu.index = g.Int("index");
  gpu.uuid = g.String("uuid");
  gpu.pci_address = g.String("pci_address");
  gpu.model = g.String("model");
  gpu.memory_bytes = g.Int64("memory_bytes");
  gpu.numa_node = g.Int("numa_node");
  gpu.healthy = g.Enum("health", HealthNames()) != static_cast<int>(Health::kUnhealthy);
  gpu.iommu_group = g.Int("iommu_group");
  for (Fields& m : g.Objects("iommu_group_members")) {
    core::PciDevice member{m.String("pci_address"), m.String("pci_class"), m.String("vendor")};
    if (m.Has("driver")) member.driver = m.String("driver");
    gpu.iommu_group_members.push_back(std::move(member));
  }
  if (g.Has("driver")) gpu.driver = g.String("driver");
  gpu.health_reason = g.String("health_reason");
  if (auto since = g.Time("unhealthy_since")) gpu.unhealthy_since = *since;
  if (auto since = g.Time("reported_healthy_since")) gpu.reported_healthy_since = *since;
  gpu.cdi_device = g.String("cdi_device");
  if (std::optional<Fields> mig = g.Object("mig")) gpu.mig = ReadGpuMig(*mig);
  gpu.links = ReadGpuLinks(g, "links");
  return gpu;
}

nlohmann::json CdiJson(const core::NodeCdi& cdi) {
  nlohmann::json extra = nlohmann::json::array();
  for (const auto& d : cdi.extra_devices) extra.push_back({{"path", d.path}, {"name", d.name}});
  return {{"mode", NameOf(CdiModeNames(), static_cast<int>(cdi.mode))},
          {"spec_dir", cdi.spec_dir},
          {"extra_devices", extra},
          {"problems", cdi.problems}};
}

core::NodeCdi ReadCdi(Fields& c) {
  core::NodeCdi cdi;
  cdi.mode = static_cast<core::CdiMode>(c.Enum("mode", CdiModeNames()));
  cdi.spec_dir = c.String("spec_dir");
  for (Fields& d : c.Objects("extra_devices")) cdi.extra_devices.push_back({d.String("path"), d.String("name")});
  cdi.problems = c.Strings("problems");
  return cdi;
}

}  // namespace

std::string EncodeNodeInfo(const core::NodeInfo& node) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& gpu : node.gpus) gpus.push_back(GpuJson(gpu));
  nlohmann::json j = {{"name", node.name},
                      {"pool", node.pool},
                      {"provider_id", node.provider_id},
                      {"allocatable",
                       {{"cpu_millis", node.cpu_millis},
                        {"memory_bytes", node.memory_bytes},
                        {"ephemeral_storage_bytes", node.ephemeral_storage_bytes},
                        {"disk_bytes", node.disk_bytes}}},
                      {"kernel_version", node.kernel_version},
                      {"os_id", node.os_id},
                      {"os_version", node.os_version},
                      {"driver_version", node.driver_version},
                      {"gpus", gpus},
                      {"control_devices", DeviceNodesJson(node.control_devices)},
                      {"cdi", CdiJson(node.cdi)}};
  return j.dump();
}

absl::StatusOr<core::NodeInfo> DecodeNodeInfo(absl::string_view json, const Origin& origin) {
  Decoding decoding(origin);
  std::optional<nlohmann::json> parsed = decoding.Parse(json);
  if (!parsed) return decoding.status();
  Fields n(*parsed, decoding);
  core::NodeInfo node;
  node.name = n.String("name");
  node.pool = n.String("pool");
  node.provider_id = n.String("provider_id");
  if (std::optional<Fields> a = n.Object("allocatable")) {
    node.cpu_millis = a->Int64("cpu_millis");
    node.memory_bytes = a->Int64("memory_bytes");
    node.ephemeral_storage_bytes = a->Int64("ephemeral_storage_bytes");
    node.disk_bytes = a->Int64("disk_bytes");
  }
  node.kernel_version = n.String("kernel_version");
  node.os_id = n.String("os_id");
  node.os_version = n.String("os_version");
  node.driver_version = n.String("driver_version");
  for (Fields& g : n.Objects("gpus")) node.gpus.push_back(ReadGpu(g));
  node.control_devices = ReadDeviceNodes(n, "control_devices");
  if (std::optional<Fields> c = n.Object("cdi")) node.cdi = ReadCdi(*c);
  if (!decoding.ok()) return decoding.status();
  return node;
}

}  // namespace wsched::store::documents
