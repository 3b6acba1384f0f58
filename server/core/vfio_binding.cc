#include "server/core/vfio_binding.h"

#include "absl/strings/str_cat.h"
#include "server/core/iommu.h"

namespace wsched::core {
namespace {

std::string BoundTo(const std::optional<std::string>& driver) {
  if (!driver) return "has no reported driver";
  if (driver->empty()) return "is bound to no driver";
  return absl::StrCat("is bound to ", *driver);
}

}  // namespace

std::optional<std::string> VmBindingProblem(const Gpu& gpu) {
  if (!gpu.driver) return std::nullopt;  // Not reported: not judged.
  const std::string group =
      gpu.iommu_group >= 0 ? absl::StrCat("group ", gpu.iommu_group) : "no IOMMU group";
  if (*gpu.driver != kVfioPciDriver) {
    return absl::StrCat("GPU ", gpu.pci_address, " (", group, ") ", BoundTo(gpu.driver),
                        ", not ", kVfioPciDriver);
  }
  for (const PciDevice& member : gpu.iommu_group_members) {
    if (IsPciBridgeClass(member.pci_class)) continue;  // Stays on pcieport.
    if (member.driver == kVfioPciDriver) continue;
    return absl::StrCat("GPU ", gpu.pci_address, ": ", group, " member ", member.address, " ",
                        BoundTo(member.driver), ", not ", kVfioPciDriver);
  }
  return std::nullopt;
}

std::optional<std::string> ContainerBindingProblem(const Gpu& gpu) {
  if (gpu.mig && gpu.mig->enabled) {
    // CUDA in a container given the whole GPU finds no device while MIG
    // mode is on: only its slices can be used.
    return absl::StrCat("GPU ", gpu.pci_address,
                        " is in MIG mode: a container can use its slices, not the whole GPU");
  }
  if (gpu.driver != kVfioPciDriver) return std::nullopt;
  return absl::StrCat("GPU ", gpu.pci_address, " is bound to ", kVfioPciDriver,
                      ", which a container cannot use");
}

std::optional<std::string> PoolBindingProblem(const Gpu& gpu, GpuBinding binding) {
  return binding == GpuBinding::kVfio ? VmBindingProblem(gpu) : ContainerBindingProblem(gpu);
}

const char* GpuBindingName(GpuBinding binding) {
  return binding == GpuBinding::kVfio ? "vfio" : "host";
}

std::optional<GpuBinding> ParseGpuBinding(absl::string_view name) {
  if (name == "host") return GpuBinding::kHost;
  if (name == "vfio") return GpuBinding::kVfio;
  return std::nullopt;
}

}  // namespace wsched::core
