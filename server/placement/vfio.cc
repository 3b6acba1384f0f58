#include "server/placement/vfio.h"

#include <algorithm>

#include "absl/container/btree_set.h"
#include "absl/strings/str_cat.h"
#include "server/core/validation.h"
#include "server/core/vfio_binding.h"
#include "server/placement/iommu_units.h"

namespace wsched::placement {
namespace {

// Addresses end up in a sysfs path on the host: only dddd:bb:dd.f passes.
absl::Status CheckAddress(const std::string& address) {
  if (core::IsPciAddress(address)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("malformed PCI address \"", address, "\""));
}

}  // namespace

absl::StatusOr<VfioSpec> BuildVfioSpec(const core::NodeInfo& node,
                                       const std::vector<int>& gpu_indices,
                                       const core::NodePool& pool) {
  if (node.pool != pool.id) {
    return absl::InvalidArgumentError(
        absl::StrCat("node ", node.name, " is in pool ", node.pool, ", not ", pool.id));
  }
  const NodeIommu iommu = AnalyzeIommu(node);

  absl::btree_set<int> wanted_positions;  // Ordered: the first error is repeatable.
  for (int index : gpu_indices) {
    auto it = std::find_if(node.gpus.begin(), node.gpus.end(),
                           [&](const core::Gpu& gpu) { return gpu.index == index; });
    if (it == node.gpus.end()) {
      return absl::NotFoundError(absl::StrCat("node ", node.name, " has no GPU ", index));
    }
    wanted_positions.insert(static_cast<int>(it - node.gpus.begin()));
  }

  absl::btree_set<int> groups;
  absl::btree_set<std::string> addresses;
  absl::btree_set<std::string> bridges;
  for (int pos : wanted_positions) {
    const core::Gpu& gpu = node.gpus[pos];
    const GpuPassthrough& verdict = iommu.gpus[pos];
    if (verdict.unit < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("GPU ", gpu.index, " on node ", node.name, ": ", verdict.reason));
    }
    for (int other : iommu.units[verdict.unit].positions) {
      if (!wanted_positions.contains(other)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "GPU ", gpu.index, " shares IOMMU group ", gpu.iommu_group, " with GPU ",
            node.gpus[other].index, ", which is not requested; a group goes to one VM whole"));
      }
    }
    if (!verdict.safe && !pool.allow_unsafe_iommu) {
      return absl::FailedPreconditionError(absl::StrCat(
          "GPU ", gpu.index, " on node ", node.name, " is unsafe for passthrough: ",
          verdict.reason, " (pool ", pool.id, " does not set allow_unsafe_iommu)"));
    }
    // VFIO takes a group only when every endpoint in it is on vfio-pci; a
    // VM handed anything less fails to start (docs/placement.md "VFIO binding").
    if (std::optional<std::string> problem = core::VmBindingProblem(gpu)) {
      return absl::FailedPreconditionError(
          absl::StrCat("GPU ", gpu.index, " on node ", node.name, " is not bound for a VM: ",
                       *problem));
    }
    if (absl::Status status = CheckAddress(gpu.pci_address); !status.ok()) return status;
    groups.insert(gpu.iommu_group);
    addresses.insert(gpu.pci_address);
    for (const core::PciDevice& member : gpu.iommu_group_members) {
      if (absl::Status status = CheckAddress(member.address); !status.ok()) return status;
      (IsPciBridge(member.pci_class) ? bridges : addresses).insert(member.address);
    }
  }

  VfioSpec spec;
  spec.iommu_groups.assign(groups.begin(), groups.end());
  spec.pci_addresses.assign(addresses.begin(), addresses.end());
  spec.bridges.assign(bridges.begin(), bridges.end());
  if (!spec.iommu_groups.empty()) spec.device_paths.push_back("/dev/vfio/vfio");
  for (int group : spec.iommu_groups) spec.device_paths.push_back(absl::StrCat("/dev/vfio/", group));
  for (const std::string& address : spec.pci_addresses) {
    spec.cloud_hypervisor_args.push_back("--device");
    spec.cloud_hypervisor_args.push_back(absl::StrCat("path=/sys/bus/pci/devices/", address, "/"));
  }
  return spec;
}

}  // namespace wsched::placement
