// The IOMMU rule for VM passthrough: the group is the unit of ownership.
#ifndef WSCHED_SERVER_CORE_IOMMU_H_
#define WSCHED_SERVER_CORE_IOMMU_H_

#include <string>

#include "server/core/node.h"

namespace wsched::core {

struct PassthroughSafety {
  bool safe = true;
  std::string reason;  // Empty when safe.
};

// A GPU is safe for VFIO passthrough when every other member of its IOMMU
// group is one of its own functions (same bus:device) or a PCI bridge.
// Anything else (USB, network, another tenant's device) makes it unsafe.
PassthroughSafety ClassifyPassthrough(const Gpu& gpu);

// True for a PCI bridge ("0x0604xx"): bridges stay on the host (pcieport)
// and never go to a VM, so VFIO binding and passthrough leave them alone.
bool IsPciBridgeClass(const std::string& pci_class);

// Human name of a PCI class code ("USB controller"), for reasons.
std::string PciClassName(const std::string& pci_class);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_IOMMU_H_
