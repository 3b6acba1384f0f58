#include "server/placement/iommu_units.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "server/core/iommu.h"

namespace wsched::placement {

std::string PciSlot(const std::string& address) {
  auto dot = address.rfind('.');
  return dot == std::string::npos ? address : address.substr(0, dot);
}

bool IsPciBridge(const std::string& pci_class) {
  std::string lower = absl::AsciiStrToLower(pci_class);
  if (!absl::StartsWith(lower, "0x")) lower = "0x" + lower;
  return absl::StartsWith(lower, "0x0604");
}

NodeIommu AnalyzeIommu(const core::NodeInfo& node) {
  NodeIommu result;
  result.gpus.resize(node.gpus.size());

  absl::flat_hash_map<int, int> unit_of_group;
  for (size_t pos = 0; pos < node.gpus.size(); ++pos) {
    const core::Gpu& gpu = node.gpus[pos];
    if (gpu.iommu_group < 0) continue;
    auto [it, inserted] = unit_of_group.try_emplace(gpu.iommu_group, result.units.size());
    if (inserted) result.units.push_back(IommuUnit{gpu.iommu_group, {}});
    result.units[it->second].positions.push_back(static_cast<int>(pos));
    result.gpus[pos].unit = it->second;
  }

  for (size_t pos = 0; pos < node.gpus.size(); ++pos) {
    if (result.gpus[pos].unit < 0) {
      // No group: VFIO cannot take it at all; the core rule says why.
      core::PassthroughSafety safety = core::ClassifyPassthrough(node.gpus[pos]);
      result.gpus[pos].safe = safety.safe;
      result.gpus[pos].reason = safety.reason;
    }
  }

  for (size_t u = 0; u < result.units.size(); ++u) {
    const IommuUnit& unit = result.units[u];
    // Slots of the unit's own GPUs: their functions go along with them.
    absl::flat_hash_set<std::string> own_slots;
    for (int pos : unit.positions) own_slots.insert(PciSlot(node.gpus[pos].pci_address));

    core::PassthroughSafety verdict{true, ""};
    for (int pos : unit.positions) {
      core::Gpu view = node.gpus[pos];
      std::erase_if(view.iommu_group_members, [&](const core::PciDevice& member) {
        return own_slots.contains(PciSlot(member.address));
      });
      core::PassthroughSafety safety = core::ClassifyPassthrough(view);
      if (!safety.safe) {
        verdict = safety;
        break;
      }
    }
    for (int pos : unit.positions) {
      result.gpus[pos].safe = verdict.safe;
      result.gpus[pos].reason = verdict.reason;
    }
  }
  return result;
}

}  // namespace wsched::placement
