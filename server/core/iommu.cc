#include "server/core/iommu.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace wsched::core {
namespace {

// "0000:3b:00.1" -> "0000:3b:00" (domain:bus:device, without the function).
absl::string_view SlotOf(absl::string_view address) {
  auto dot = address.rfind('.');
  return dot == absl::string_view::npos ? address : address.substr(0, dot);
}

// The base+sub class, e.g. "0x0604" from "0x060400".
std::string ClassPrefix(const std::string& pci_class) {
  std::string lower = absl::AsciiStrToLower(pci_class);
  if (!absl::StartsWith(lower, "0x")) lower = "0x" + lower;
  return lower.substr(0, 6);
}

}  // namespace

bool IsPciBridgeClass(const std::string& pci_class) { return ClassPrefix(pci_class) == "0x0604"; }

std::string PciClassName(const std::string& pci_class) {
  std::string prefix = ClassPrefix(pci_class);
  if (prefix == "0x0604") return "PCI bridge";
  if (prefix == "0x0c03") return "USB controller";
  if (prefix == "0x0200") return "Ethernet controller";
  if (prefix == "0x0280") return "network controller";
  if (prefix == "0x0300") return "VGA controller";
  if (prefix == "0x0302") return "3D controller";
  if (prefix == "0x0403") return "audio device";
  if (prefix == "0x0106") return "SATA controller";
  if (prefix == "0x0108") return "NVMe controller";
  return absl::StrCat("PCI class ", pci_class);
}

PassthroughSafety ClassifyPassthrough(const Gpu& gpu) {
  if (gpu.iommu_group < 0) {
    return {false, "IOMMU is off (no IOMMU group); VFIO passthrough is impossible"};
  }
  for (const PciDevice& member : gpu.iommu_group_members) {
    if (SlotOf(member.address) == SlotOf(gpu.pci_address)) continue;  // Own function.
    if (ClassPrefix(member.pci_class) == "0x0604") continue;           // Bridge.
    return {false, absl::StrCat("IOMMU group ", gpu.iommu_group, " also holds ", member.address,
                                " (", PciClassName(member.pci_class), ")")};
  }
  return {true, ""};
}

}  // namespace wsched::core
