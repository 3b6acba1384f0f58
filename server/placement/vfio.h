// Device spec for VM workspaces: VFIO passthrough of whole IOMMU groups.
#ifndef WSCHED_SERVER_PLACEMENT_VFIO_H_
#define WSCHED_SERVER_PLACEMENT_VFIO_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/node.h"
#include "server/core/pool.h"

namespace wsched::placement {

struct VfioSpec {
  std::vector<int> iommu_groups;  // Ascending.
  // What goes to the VM, ascending: the GPUs and every other member of their
  // groups except PCI bridges. All of them must be bound to vfio-pci.
  std::vector<std::string> pci_addresses;
  // Bridges in those groups. They are not passed through: a bridge is not an
  // endpoint a guest can drive, it stays on the host's pcieport driver, and
  // VFIO accepts a group whose bridges do so. Listed for the operator.
  std::vector<std::string> bridges;
  // "/dev/vfio/vfio" (the container) then "/dev/vfio/<group>" per group.
  std::vector<std::string> device_paths;
  // cloud-hypervisor argv: "--device", "path=/sys/bus/pci/devices/<bdf>/"
  // for each of pci_addresses.
  std::vector<std::string> cloud_hypervisor_args;
};

// Builds the spec for `gpu_indices` on `node` of `pool`. FailedPrecondition:
// a GPU without an IOMMU group; a group only partly requested (a group goes
// to one VM whole); a group with foreign devices (USB, network, ...) unless
// pool.allow_unsafe_iommu — the error carries the reason; a group whose
// members are reported bound to anything but vfio-pci (core/vfio_binding.h),
// naming the member and its driver. NotFound: a GPU
// the node lacks. InvalidArgument: a malformed PCI address or a node of
// another pool.
absl::StatusOr<VfioSpec> BuildVfioSpec(const core::NodeInfo& node,
                                       const std::vector<int>& gpu_indices,
                                       const core::NodePool& pool);

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_VFIO_H_
