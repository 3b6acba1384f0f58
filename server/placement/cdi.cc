#include "server/placement/cdi.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "server/placement/device_nodes.h"

namespace wsched::placement {
namespace {

using Json = nlohmann::ordered_json;  // Keeps field order: readable specs, stable diffs.

constexpr size_t kMaxUuidLength = 128;

// CDI device names: letters, digits, '-', '_', '.', ':'; NVIDIA UUIDs
// ("GPU-8f6a...") qualify. Anything else would make an invalid spec.
bool IsCdiDeviceName(const std::string& name) {
  if (name.empty() || name.size() > kMaxUuidLength || !absl::ascii_isalnum(name.front())) {
    return false;
  }
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.' && c != ':') return false;
  }
  return true;
}

Json DeviceNodeJson(const core::DeviceNode& node) {
  Json json;
  json["path"] = node.path;
  json["type"] = std::string(1, node.type);
  json["major"] = node.major;
  json["minor"] = node.minor;
  if (!node.permissions.empty()) json["permissions"] = node.permissions;
  return json;
}

Json DeviceNodesJson(const std::vector<core::DeviceNode>& nodes) {
  Json array = Json::array();
  for (const core::DeviceNode& node : nodes) array.push_back(DeviceNodeJson(node));
  return array;
}

}  // namespace

absl::StatusOr<CdiSpec> BuildCdiSpec(const core::WorkspaceClass& cls, const core::NodeInfo& node,
                                     const std::vector<int>& gpu_indices) {
  if (cls.gpu.isolation == core::Isolation::kVm && cls.is_gpu()) {
    return absl::InvalidArgumentError(
        absl::StrCat("class ", cls.id, " uses vm isolation; its GPUs pass through with VFIO"));
  }
  if (static_cast<int>(gpu_indices.size()) != cls.gpu.count) {
    return absl::InvalidArgumentError(absl::StrCat("class ", cls.id, " needs ", cls.gpu.count,
                                                   " GPUs, got ", gpu_indices.size()));
  }
  if (absl::Status status = CheckClassDevices(cls.devices); !status.ok()) return status;

  CdiSpec spec;
  if (!cls.is_gpu()) {
    MergeDeviceNodes(spec.extra_device_nodes, cls.devices);
    return spec;
  }

  // GPU nodes first, then control nodes, then the class's devices: earlier
  // entries win on a path, so nothing the class lists can replace them.
  std::vector<core::DeviceNode> all;
  std::vector<std::string> uuids;
  Json devices = Json::array();
  for (int index : gpu_indices) {
    const core::Gpu* gpu = nullptr;
    for (const core::Gpu& candidate : node.gpus) {
      if (candidate.index == index) gpu = &candidate;
    }
    if (gpu == nullptr) {
      return absl::NotFoundError(absl::StrCat("node ", node.name, " has no GPU ", index));
    }
    if (!IsCdiDeviceName(gpu->uuid)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "GPU ", index, " on node ", node.name, " has no usable UUID (\"", gpu->uuid, "\")"));
    }
    core::DeviceNode device{absl::StrCat("/dev/nvidia", gpu->index), 'c', kNvidiaMajor,
                            gpu->index, "rwm"};
    if (MergeDeviceNodes(all, {device}) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("GPU ", index, " requested twice"));
    }
    Json entry;
    entry["name"] = gpu->uuid;
    entry["containerEdits"]["deviceNodes"] = DeviceNodesJson({device});
    devices.push_back(std::move(entry));
    uuids.push_back(gpu->uuid);
    spec.device_names.push_back(absl::StrCat(kCdiKind, "=", gpu->uuid));
  }
  const size_t gpu_nodes = all.size();
  MergeDeviceNodes(all, node.control_devices);
  const size_t before_class = all.size();
  MergeDeviceNodes(all, cls.devices);
  spec.extra_device_nodes.assign(all.begin() + before_class, all.end());

  Json json;
  json["cdiVersion"] = kCdiVersion;
  json["kind"] = kCdiKind;
  json["devices"] = std::move(devices);
  json["containerEdits"]["env"] =
      Json::array({absl::StrCat("NVIDIA_VISIBLE_DEVICES=", absl::StrJoin(uuids, ","))});
  json["containerEdits"]["deviceNodes"] =
      DeviceNodesJson(std::vector<core::DeviceNode>(all.begin() + gpu_nodes, all.end()));
  spec.spec_json = json.dump();
  return spec;
}

}  // namespace wsched::placement
