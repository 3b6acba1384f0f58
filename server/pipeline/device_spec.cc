#include "server/pipeline/device_spec.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server/core/mig_profiles.h"
#include "server/placement/cdi.h"
#include "server/placement/device_nodes.h"
#include "server/placement/mig_packing.h"
#include "server/placement/nvlink_peers.h"
#include "server/placement/vfio.h"

namespace wsched::pipeline {
namespace {

core::CdiHandOff CdiOf(placement::CdiSpec& cdi) {
  core::CdiHandOff out;
  out.mode = cdi.mode;
  out.spec_json = std::move(cdi.spec_json);
  out.device_names = std::move(cdi.device_names);
  if (cdi.mode == core::CdiMode::kInline) return out;  // As before node specs: the spec only.
  out.env = std::move(cdi.env);
  out.podman_args = std::move(cdi.podman_args);
  out.kubernetes_node_name = std::move(cdi.node_name);
  out.kubernetes_annotations = std::move(cdi.pod_annotations);
  out.kubernetes_unnamed_devices = std::move(cdi.unnamed_devices);
  return out;
}

const core::MigInstance* FindInstance(const core::Gpu& gpu, int gpu_instance) {
  if (!gpu.mig) return nullptr;
  for (const core::MigInstance& instance : gpu.mig->instances) {
    if (instance.gpu_instance == gpu_instance) return &instance;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<BuiltPlacement> BuildPlacement(const core::WorkspaceClass& cls,
                                              const core::NodeInfo& node,
                                              const core::NodePool& pool,
                                              const std::vector<int>& gpu_indices) {
  BuiltPlacement built;
  auto out = std::make_shared<core::HandOff>();
  for (int index : gpu_indices) {
    const core::Gpu* gpu = nullptr;
    for (const auto& candidate : node.gpus) {
      if (candidate.index == index) gpu = &candidate;
    }
    if (gpu == nullptr) {
      return absl::InternalError(absl::StrCat("node ", node.name, " has no GPU ", index));
    }
    built.gpu_uuids.push_back(gpu->uuid);
    out->gpus.push_back({gpu->index, gpu->uuid, gpu->pci_address, gpu->model});
  }
  out->gpu_link = placement::NvlinkPeers::Weakest(node.gpus, gpu_indices);
  if (cls.is_gpu() && cls.gpu.isolation == core::Isolation::kVm) {
    // Extra devices (e.g. /dev/kvm) are for the VMM's host side.
    if (absl::Status s = placement::CheckClassDevices(cls.devices); !s.ok()) return s;
    placement::MergeDeviceNodes(out->extra_devices, cls.devices);
    auto vfio = placement::BuildVfioSpec(node, gpu_indices, pool);
    if (!vfio.ok()) return vfio.status();
    out->vfio = core::VfioHandOff{std::move(vfio->pci_addresses), std::move(vfio->device_paths),
                                  std::move(vfio->cloud_hypervisor_args)};
    built.hand_off = std::move(out);
    return built;
  }
  // Extra devices (fuse, tun) are merged into the GPU edits, never over them.
  auto cdi = placement::BuildCdiSpec(cls, node, gpu_indices);
  if (!cdi.ok()) return cdi.status();
  out->extra_devices = cdi->extra_device_nodes;
  // A CPU class on an inline node has nothing to name; on a node with its
  // own spec its extra devices have names like a GPU's.
  if (cls.is_gpu() || !cdi->device_names.empty() || !cdi->unnamed_devices.empty()) {
    out->cdi = CdiOf(*cdi);
  }
  built.hand_off = std::move(out);
  return built;
}

absl::StatusOr<BuiltPlacement> BuildSlicePlacement(const core::WorkspaceClass& cls,
                                                   const core::NodeInfo& node,
                                                   const core::HeldSlice& slice) {
  absl::StatusOr<placement::CdiSpec> cdi = placement::BuildSliceCdiSpec(cls, node, slice);
  if (!cdi.ok()) return cdi.status();
  // BuildSliceCdiSpec found both.
  const core::Gpu& gpu = *std::find_if(node.gpus.begin(), node.gpus.end(), [&](const core::Gpu& g) {
    return g.index == slice.gpu_index;
  });
  const core::MigInstance& instance = *FindInstance(gpu, slice.gpu_instance);
  // The GPU's own table first; a profile it does not list still names its
  // compute slices ("3g.71gb").
  const int compute_slices = core::ComputeSlicesOf(instance, *gpu.mig).value_or(0);
  if (compute_slices <= 0) {
    return absl::FailedPreconditionError(absl::StrCat("GPU ", gpu.index, " on node ", node.name,
                                                      " reports an unknown profile \"",
                                                      instance.profile, "\""));
  }
  BuiltPlacement built;
  built.slice = core::WorkspaceSlice{slice, instance.uuid, compute_slices};
  auto out = std::make_shared<core::HandOff>();
  out->slice = core::AssignedSlice{{gpu.index, gpu.uuid, gpu.pci_address, gpu.model},
                                   instance.gpu_instance,
                                   instance.compute_instance,
                                   instance.uuid,
                                   instance.profile,
                                   compute_slices};
  out->extra_devices = cdi->extra_device_nodes;
  out->cdi = CdiOf(*cdi);
  built.hand_off = std::move(out);
  return built;
}

}  // namespace wsched::pipeline
