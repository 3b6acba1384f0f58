#include "server/placement/gpu_allocator.h"

#include <algorithm>
#include <bit>
#include <bitset>
#include <cstdint>

#include "server/placement/scorers.h"

namespace wsched::placement {
namespace {

using Sums = std::bitset<kMaxGpusPerWorkspace + 1>;

// Beyond this many distinct NUMA nodes the subset search (2^n) is not worth
// it; all units are then treated as one NUMA node. Real hosts have <= 8.
constexpr int kMaxNumaNodesSearched = 10;

int UnitSize(const GpuUnit& unit) { return static_cast<int>(unit.indices.size()); }

// Exactly `count` GPUs from `units` (sorted by first index), taking earlier
// units first so the result has the lowest indices; subset sum over the unit
// sizes decides whether a unit can be taken and the rest still add up.
std::optional<std::vector<int>> PickLowest(const std::vector<const GpuUnit*>& units, int count) {
  // reach[i]: GPU counts that units[i..] can make exactly.
  std::vector<Sums> reach(units.size() + 1);
  reach[units.size()].set(0);
  for (size_t i = units.size(); i-- > 0;) {
    reach[i] = reach[i + 1] | (reach[i + 1] << UnitSize(*units[i]));
  }
  if (!reach[0].test(count)) return std::nullopt;

  std::vector<int> picked;
  int remaining = count;
  for (size_t i = 0; i < units.size() && remaining > 0; ++i) {
    int size = UnitSize(*units[i]);
    if (size <= remaining && reach[i + 1].test(remaining - size)) {
      picked.insert(picked.end(), units[i]->indices.begin(), units[i]->indices.end());
      remaining -= size;
    }
  }
  std::sort(picked.begin(), picked.end());
  return picked;
}

}  // namespace

std::optional<std::vector<int>> ChooseGpus(std::vector<GpuUnit> units, int count) {
  if (count <= 0) return std::vector<int>{};
  if (count > kMaxGpusPerWorkspace) return std::nullopt;

  std::erase_if(units, [](const GpuUnit& u) { return u.indices.empty(); });
  for (GpuUnit& unit : units) std::sort(unit.indices.begin(), unit.indices.end());
  std::sort(units.begin(), units.end(), [](const GpuUnit& a, const GpuUnit& b) {
    return a.indices.front() < b.indices.front();
  });

  std::vector<int> numa_ids;
  for (const GpuUnit& unit : units) numa_ids.push_back(unit.numa_node);
  std::sort(numa_ids.begin(), numa_ids.end());
  numa_ids.erase(std::unique(numa_ids.begin(), numa_ids.end()), numa_ids.end());
  const bool search_numa = static_cast<int>(numa_ids.size()) <= kMaxNumaNodesSearched;
  const int numa_count = search_numa ? static_cast<int>(numa_ids.size()) : 1;

  auto numa_bit = [&](const GpuUnit& unit) -> uint32_t {
    if (!search_numa) return 1;
    auto pos = std::lower_bound(numa_ids.begin(), numa_ids.end(), unit.numa_node);
    return uint32_t{1} << (pos - numa_ids.begin());
  };

  // Try NUMA sets smallest first; the first size with any exact pick is the
  // minimum span, and every pick found at that size spans exactly that many.
  std::optional<GpuSetScore> best;
  std::vector<const GpuUnit*> subset;
  for (int span = 1; span <= numa_count && !best; ++span) {
    for (uint32_t mask = 1; mask < (uint32_t{1} << numa_count); ++mask) {
      if (std::popcount(mask) != span) continue;
      subset.clear();
      int total = 0;
      for (const GpuUnit& unit : units) {
        if (numa_bit(unit) & mask) {
          subset.push_back(&unit);
          total += UnitSize(unit);
        }
      }
      if (total < count) continue;
      std::optional<std::vector<int>> pick = PickLowest(subset, count);
      if (!pick) continue;
      GpuSetScore score{span, total - count, std::move(*pick)};
      if (!best || score < *best) best = std::move(score);
    }
  }
  if (!best) return std::nullopt;
  return std::move(best->indices);
}

}  // namespace wsched::placement
