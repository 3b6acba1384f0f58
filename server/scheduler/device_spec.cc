#include "server/scheduler/device_spec.h"

#include "absl/strings/str_cat.h"
#include "server/convert/convert.h"
#include "server/placement/cdi.h"
#include "server/placement/device_nodes.h"
#include "server/placement/vfio.h"
#include "wsched/v1/placement.pb.h"

namespace wsched::scheduler {
namespace {

void AddDevice(const core::DeviceNode& device, v1::DeviceNode* out) {
  out->set_path(device.path);
  out->set_type(std::string(1, device.type));
  out->set_major(device.major);
  out->set_minor(device.minor);
  out->set_permissions(device.permissions);
}

void FillCdi(const placement::CdiSpec& cdi, v1::CdiSpec& out) {
  out.set_spec_json(cdi.spec_json);
  for (const auto& name : cdi.device_names) out.add_device_names(name);
  out.set_mode(convert::ToProto(cdi.mode));
  if (cdi.mode == core::CdiMode::kInline) return;  // As before node specs: the spec only.
  for (const auto& env : cdi.env) out.add_env(env);
  for (const auto& arg : cdi.podman_args) out.add_podman_args(arg);
  auto* kubernetes = out.mutable_kubernetes();
  kubernetes->set_node_name(cdi.node_name);
  for (const auto& [key, value] : cdi.pod_annotations) (*kubernetes->mutable_annotations())[key] = value;
  for (const auto& path : cdi.unnamed_devices) kubernetes->add_unnamed_devices(path);
}

}  // namespace

absl::StatusOr<BuiltPlacement> BuildPlacement(const core::WorkspaceClass& cls,
                                              const core::NodeInfo& node,
                                              const core::NodePool& pool,
                                              const std::vector<int>& gpu_indices) {
  BuiltPlacement built;
  v1::Workspace out;
  for (int index : gpu_indices) {
    const core::Gpu* gpu = nullptr;
    for (const auto& candidate : node.gpus) {
      if (candidate.index == index) gpu = &candidate;
    }
    if (gpu == nullptr) {
      return absl::InternalError(absl::StrCat("node ", node.name, " has no GPU ", index));
    }
    built.gpu_uuids.push_back(gpu->uuid);
    auto* assigned = out.add_gpus();
    assigned->set_index(gpu->index);
    assigned->set_uuid(gpu->uuid);
    assigned->set_pci_address(gpu->pci_address);
    assigned->set_model(gpu->model);
  }
  auto* spec = out.mutable_device_spec();
  if (cls.is_gpu() && cls.gpu.isolation == core::Isolation::kVm) {
    // Extra devices (e.g. /dev/kvm) are for the VMM's host side.
    if (absl::Status s = placement::CheckClassDevices(cls.devices); !s.ok()) return s;
    std::vector<core::DeviceNode> extra;
    placement::MergeDeviceNodes(extra, cls.devices);
    for (const auto& device : extra) AddDevice(device, spec->add_extra_devices());
    auto vfio = placement::BuildVfioSpec(node, gpu_indices, pool);
    if (!vfio.ok()) return vfio.status();
    auto* v = spec->mutable_vfio();
    for (const auto& address : vfio->pci_addresses) v->add_pci_addresses(address);
    for (const auto& path : vfio->device_paths) v->add_device_paths(path);
    for (const auto& arg : vfio->cloud_hypervisor_args) v->add_cloud_hypervisor_args(arg);
    built.placement_json = convert::ToJson(out);
    built.placement_binary = out.SerializeAsString();
    return built;
  }
  // Extra devices (fuse, tun) are merged into the GPU edits, never over them.
  auto cdi = placement::BuildCdiSpec(cls, node, gpu_indices);
  if (!cdi.ok()) return cdi.status();
  for (const auto& device : cdi->extra_device_nodes) AddDevice(device, spec->add_extra_devices());
  // A CPU class on an inline node has nothing to name; on a node with its
  // own spec its extra devices have names like a GPU's.
  if (cls.is_gpu() || !cdi->device_names.empty() || !cdi->unnamed_devices.empty()) {
    FillCdi(*cdi, *spec->mutable_cdi());
  }
  built.placement_json = convert::ToJson(out);
  built.placement_binary = out.SerializeAsString();
  return built;
}

}  // namespace wsched::scheduler
