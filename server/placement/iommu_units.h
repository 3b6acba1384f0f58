// IOMMU groups of one node's GPUs, and whether each group can go to a VM.
//
// The group is the unit of ownership for VFIO (docs/placement.md "Device specs"): all
// its devices are bound to vfio-pci and go to one VM. So GPUs that share a
// group are handed out together, and a group is only as safe as its least
// safe member.
#ifndef WSCHED_SERVER_PLACEMENT_IOMMU_UNITS_H_
#define WSCHED_SERVER_PLACEMENT_IOMMU_UNITS_H_

#include <string>
#include <vector>

#include "server/core/node.h"

namespace wsched::placement {

// The GPUs of one node that sit in one IOMMU group.
struct IommuUnit {
  int group = -1;
  std::vector<int> positions;  // Into NodeInfo::gpus, ascending.
};

// Passthrough verdict of one GPU, which is the verdict of its whole group.
struct GpuPassthrough {
  bool safe = false;
  std::string reason;  // Why not; empty when safe.
  int unit = -1;       // Into NodeIommu::units; -1 when the IOMMU is off.
};

struct NodeIommu {
  std::vector<IommuUnit> units;       // One per group holding GPUs, by first position.
  std::vector<GpuPassthrough> gpus;  // Parallel to NodeInfo::gpus.
};

// Groups the node's GPUs and classifies each group with
// core::ClassifyPassthrough. Another GPU of the same node in the group (and
// its functions, e.g. its audio device) is not a foreign device here: it goes
// to the same VM as part of the unit. core::ClassifyPassthrough alone, which
// sees one GPU, would call such a neighbour unsafe.
NodeIommu AnalyzeIommu(const core::NodeInfo& node);

// "0000:3b:00.1" -> "0000:3b:00": the slot a device's functions share.
std::string PciSlot(const std::string& address);

// True for a PCI bridge class ("0x0604xx"): bridges stay with the host.
bool IsPciBridge(const std::string& pci_class);

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_IOMMU_UNITS_H_
