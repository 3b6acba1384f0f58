// PCI functions as sysfs shows them, and the NVIDIA GPUs among them.
#ifndef WSCHED_SERVER_AGENT_PCI_H_
#define WSCHED_SERVER_AGENT_PCI_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/agent/rooted_fs.h"

namespace wsched::agent {

inline constexpr char kNvidiaVendor[] = "0x10de";

// One function under /sys/bus/pci/devices/<address>. Hex ids are lower-case
// with a "0x" prefix, exactly as sysfs prints them.
struct PciFunction {
  std::string address;  // "0000:3b:00.0"
  std::string vendor;   // "0x10de"
  std::string device;   // "0x2330"
  std::string pci_class;  // "0x030200"
  int numa_node = -1;     // -1: unknown or single-node machine.
  int iommu_group = -1;   // -1: IOMMU off.
  // Every function in the IOMMU group, this one included, sorted.
  std::vector<std::string> iommu_group_addresses;
  // The kernel driver it is bound to: the name of the directory its
  // `driver` link points to ("nvidia", "vfio-pci"); "" when unbound.
  std::string driver;
  // What /sys/bus/pci/devices/<address>/driver_override says; "" for none
  // ("(null)" as the kernel prints it) or a kernel without the file.
  std::string driver_override;
};

// Every PCI function of the node, sorted by address. An absent
// /sys/bus/pci/devices (no PCI bus) is an empty list, not an error.
absl::StatusOr<std::vector<PciFunction>> ScanPci(const RootedFs& fs);

// An NVIDIA display controller: VGA (0x0300xx) or 3D controller (0x0302xx).
// Datacenter GPUs are 3D controllers; NVSwitches (0x0680xx) and the GPU's
// audio function share the vendor id but are not GPUs.
bool IsNvidiaGpu(const PciFunction& function);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_PCI_H_
