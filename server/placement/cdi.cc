#include "server/placement/cdi.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "server/core/cdi_names.h"
#include "server/placement/device_nodes.h"

namespace wsched::placement {
namespace {

using Json = nlohmann::ordered_json;  // Keeps field order: readable specs, stable diffs.

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

const core::Gpu* FindGpu(const core::NodeInfo& node, int index) {
  for (const core::Gpu& candidate : node.gpus) {
    if (candidate.index == index) return &candidate;
  }
  return nullptr;
}

// What a workspace is handed, a whole GPU or a MIG slice, as its CDI device:
// the name its spec entry has (the UUID), the node spec's qualified name, and
// the device nodes it brings.
struct HandedDevice {
  std::string what;  // "GPU 2", "MIG slice 1 of GPU 2": for errors.
  std::string uuid;
  std::string cdi_device;
  std::vector<core::DeviceNode> nodes;
};

HandedDevice WholeGpu(const core::Gpu& gpu) {
  return {absl::StrCat("GPU ", gpu.index),
          gpu.uuid,
          gpu.cdi_device,
          {{absl::StrCat("/dev/nvidia", gpu.index), 'c', kNvidiaMajor, gpu.index, "rwm"}}};
}

absl::StatusOr<std::vector<HandedDevice>> ChosenGpus(const core::NodeInfo& node,
                                                     const std::vector<int>& gpu_indices) {
  std::vector<const core::Gpu*> gpus;
  for (int index : gpu_indices) {
    const core::Gpu* gpu = FindGpu(node, index);
    if (gpu == nullptr) {
      return absl::NotFoundError(absl::StrCat("node ", node.name, " has no GPU ", index));
    }
    if (!core::IsCdiDeviceName(gpu->uuid)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "GPU ", index, " on node ", node.name, " has no usable UUID (\"", gpu->uuid, "\")"));
    }
    for (const core::Gpu* earlier : gpus) {
      if (earlier == gpu) return absl::InvalidArgumentError(absl::StrCat("GPU ", index, " requested twice"));
    }
    gpus.push_back(gpu);
  }
  std::vector<HandedDevice> handed;
  for (const core::Gpu* gpu : gpus) handed.push_back(WholeGpu(*gpu));
  return handed;
}

// The slice's device: its parent GPU's node and the capability nodes of its
// GPU instance and compute instance, nothing of the GPU's other slices.
absl::StatusOr<HandedDevice> ChosenSlice(const core::NodeInfo& node, const core::HeldSlice& slice) {
  const core::Gpu* gpu = FindGpu(node, slice.gpu_index);
  if (gpu == nullptr) {
    return absl::NotFoundError(absl::StrCat("node ", node.name, " has no GPU ", slice.gpu_index));
  }
  const std::string what = absl::StrCat("MIG slice ", slice.gpu_instance, " of GPU ", gpu->index);
  const core::MigInstance* instance = nullptr;
  if (gpu->mig) {
    for (const core::MigInstance& candidate : gpu->mig->instances) {
      if (candidate.gpu_instance == slice.gpu_instance) instance = &candidate;
    }
  }
  if (instance == nullptr)
    return absl::NotFoundError(absl::StrCat("node ", node.name, " has no ", what));
  if (!core::IsCdiDeviceName(instance->uuid) || !instance->gi_access || !instance->ci_access) {
    return absl::FailedPreconditionError(absl::StrCat(
        what, " on node ", node.name, " lacks a usable UUID or its capability device nodes"));
  }
  HandedDevice device = WholeGpu(*gpu);
  device.what = what;
  device.uuid = instance->uuid;
  device.cdi_device = instance->cdi_device;
  device.nodes.push_back(*instance->gi_access);
  device.nodes.push_back(*instance->ci_access);
  return device;
}

// The spec itself, for nodes whose agent wrote none.
CdiSpec InlineSpec(const core::WorkspaceClass& cls, const core::NodeInfo& node,
                   const std::vector<HandedDevice>& gpus) {
  CdiSpec spec;
  // GPU nodes first, then control nodes, then the class's devices: earlier
  // entries win on a path, so nothing the class lists can replace them.
  std::vector<core::DeviceNode> all;
  std::vector<std::string> uuids;
  Json devices = Json::array();
  for (const HandedDevice& gpu : gpus) {
    MergeDeviceNodes(all, gpu.nodes);
    Json entry;
    entry["name"] = gpu.uuid;
    entry["containerEdits"]["deviceNodes"] = DeviceNodesJson(gpu.nodes);
    devices.push_back(std::move(entry));
    uuids.push_back(gpu.uuid);
    spec.device_names.push_back(core::CdiQualifiedName(core::kNvidiaGpuKind, gpu.uuid));
  }
  const size_t gpu_nodes = all.size();
  MergeDeviceNodes(all, node.control_devices);
  const size_t before_class = all.size();
  MergeDeviceNodes(all, cls.devices);
  spec.extra_device_nodes.assign(all.begin() + before_class, all.end());

  Json json;
  json["cdiVersion"] = core::kCdiVersion;
  json["kind"] = core::kNvidiaGpuKind;
  json["devices"] = std::move(devices);
  json["containerEdits"]["env"] =
      Json::array({absl::StrCat("NVIDIA_VISIBLE_DEVICES=", absl::StrJoin(uuids, ","))});
  json["containerEdits"]["deviceNodes"] =
      DeviceNodesJson(std::vector<core::DeviceNode>(all.begin() + gpu_nodes, all.end()));
  spec.spec_json = json.dump();
  return spec;
}

std::string NameOfExtraDevice(const core::NodeInfo& node, const std::string& path) {
  for (const core::CdiExtraDevice& device : node.cdi.extra_devices) {
    if (device.path == path) return device.name;
  }
  return "";
}

// Names only: the node's spec holds the edits (docs/agent.md).
absl::StatusOr<CdiSpec> NodeSpecAnswer(const core::WorkspaceClass& cls, const core::NodeInfo& node,
                                       const std::vector<HandedDevice>& gpus) {
  CdiSpec spec;
  spec.mode = node.cdi.mode;
  spec.node_name = node.name;
  std::vector<std::string> uuids;
  for (const HandedDevice& gpu : gpus) {
    if (gpu.cdi_device.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          gpu.what, " on node ", node.name, " is not in the node's CDI spec",
          node.cdi.problems.empty() ? "" : ": ", absl::StrJoin(node.cdi.problems, "; ")));
    }
    spec.device_names.push_back(gpu.cdi_device);
    uuids.push_back(gpu.uuid);
  }
  // Control nodes come with the GPU spec; a class device on one of their
  // paths is dropped, as in the inline spec.
  std::vector<core::DeviceNode> taken = node.control_devices;
  MergeDeviceNodes(spec.extra_device_nodes, cls.devices);
  for (const core::DeviceNode& device : spec.extra_device_nodes) {
    if (MergeDeviceNodes(taken, {device}) == 0 && (cls.is_gpu() || cls.is_slice())) continue;
    if (std::string name = NameOfExtraDevice(node, device.path); !name.empty()) {
      spec.device_names.push_back(name);
    } else {
      spec.unnamed_devices.push_back(device.path);
    }
  }
  if (!uuids.empty()) spec.env.push_back(absl::StrCat("NVIDIA_VISIBLE_DEVICES=", absl::StrJoin(uuids, ",")));
  for (const std::string& name : spec.device_names) spec.podman_args.insert(spec.podman_args.end(), {"--device", name});
  for (const std::string& path : spec.unnamed_devices) spec.podman_args.insert(spec.podman_args.end(), {"--device", path});
  for (const std::string& env : spec.env) spec.podman_args.insert(spec.podman_args.end(), {"--env", env});
  if (!spec.device_names.empty()) {
    absl::StatusOr<std::string> key = core::CdiAnnotationKey(kCdiAnnotationPlugin, kCdiAnnotationDevice);
    if (!key.ok()) return key.status();
    absl::StatusOr<std::string> value = core::CdiAnnotationValue(spec.device_names);
    if (!value.ok()) return absl::FailedPreconditionError(value.status().message());
    spec.pod_annotations[*key] = *value;
  }
  return spec;
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
  absl::StatusOr<std::vector<HandedDevice>> gpus = ChosenGpus(node, gpu_indices);
  if (!gpus.ok()) return gpus.status();
  if (node.cdi.mode != core::CdiMode::kInline) return NodeSpecAnswer(cls, node, *gpus);
  if (!cls.is_gpu()) {
    CdiSpec spec;
    MergeDeviceNodes(spec.extra_device_nodes, cls.devices);
    return spec;
  }
  return InlineSpec(cls, node, *gpus);
}

absl::StatusOr<CdiSpec> BuildSliceCdiSpec(const core::WorkspaceClass& cls,
                                          const core::NodeInfo& node,
                                          const core::HeldSlice& slice) {
  if (!cls.is_slice()) {
    return absl::InvalidArgumentError(absl::StrCat("class ", cls.id, " asks for no MIG slice"));
  }
  if (absl::Status status = CheckClassDevices(cls.devices); !status.ok()) return status;
  absl::StatusOr<HandedDevice> device = ChosenSlice(node, slice);
  if (!device.ok()) return device.status();
  if (node.cdi.mode != core::CdiMode::kInline) return NodeSpecAnswer(cls, node, {*device});
  return InlineSpec(cls, node, {*device});
}

}  // namespace wsched::placement
