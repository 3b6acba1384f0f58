#include "server/placement/gpu_allocator.h"

#include <algorithm>
#include <bit>
#include <bitset>
#include <cstdint>
#include <map>

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

// The choice without links: GpuSetScore over NUMA subsets.
std::optional<std::vector<int>> ChooseByNuma(const std::vector<GpuUnit>& units, int count);

// Every exact subset of `units` (at most kMaxUnitsSearchedForLinks), scored
// by LinkedSetScore.
class LinkedSearch {
 public:
  LinkedSearch(const std::vector<GpuUnit>& units, int count, const LinkRule& rule)
      : units_(units), count_(count), rule_(rule) {
    for (const GpuUnit& unit : units) {
      free_.insert(free_.end(), unit.indices.begin(), unit.indices.end());
      free_on_numa_[unit.numa_node] += UnitSize(unit);
    }
  }

  std::optional<std::vector<int>> Run() {
    Visit(0, 0);
    if (!best_) return std::nullopt;
    return std::move(best_->indices);
  }

 private:
  void Visit(size_t next, int taken) {
    if (taken == count_) return Score();
    for (size_t i = next; i < units_.size(); ++i) {
      const GpuUnit& unit = units_[i];
      if (taken + UnitSize(unit) > count_) continue;
      // Required links prune here: a unit not linked to all chosen so far
      // can never be part of a linked set with them.
      if (rule_.require_linked && !LinkedToChosen(unit)) continue;
      chosen_.push_back(&unit);
      Visit(i + 1, taken + UnitSize(unit));
      chosen_.pop_back();
    }
  }

  bool LinkedToChosen(const GpuUnit& unit) const {
    for (const GpuUnit* other : chosen_) {
      for (int a : other->indices) {
        for (int b : unit.indices) {
          if (!rule_.peers->Linked(a, b)) return false;
        }
      }
    }
    return true;
  }

  void Score() {
    LinkedSetScore score;
    std::vector<int> numa_nodes;
    for (const GpuUnit* unit : chosen_) {
      score.indices.insert(score.indices.end(), unit->indices.begin(), unit->indices.end());
      if (std::find(numa_nodes.begin(), numa_nodes.end(), unit->numa_node) == numa_nodes.end()) {
        numa_nodes.push_back(unit->numa_node);
        score.numa_leftover += free_on_numa_.at(unit->numa_node);
      }
    }
    std::sort(score.indices.begin(), score.indices.end());
    const bool linked = rule_.peers->AllLinked(score.indices);
    if (rule_.require_linked && !linked) return;
    score.unlinked = rule_.prefer_linked && !linked ? 1 : 0;
    score.numa_nodes_spanned = static_cast<int>(numa_nodes.size());
    score.numa_leftover -= count_;
    for (int chosen : score.indices) {
      for (int other : free_) {
        if (!std::binary_search(score.indices.begin(), score.indices.end(), other) &&
            rule_.peers->Linked(chosen, other)) {
          ++score.broken_pairs;
        }
      }
    }
    if (!best_ || score < *best_) best_ = std::move(score);
  }

  const std::vector<GpuUnit>& units_;
  const int count_;
  const LinkRule& rule_;
  std::vector<int> free_;
  std::map<int, int> free_on_numa_;
  std::vector<const GpuUnit*> chosen_;
  std::optional<LinkedSetScore> best_;
};

}  // namespace

std::optional<std::vector<int>> ChooseGpus(std::vector<GpuUnit> units, int count,
                                           const LinkRule& links) {
  if (count <= 0) return std::vector<int>{};
  if (count > kMaxGpusPerWorkspace) return std::nullopt;

  std::erase_if(units, [](const GpuUnit& u) { return u.indices.empty(); });
  for (GpuUnit& unit : units) std::sort(unit.indices.begin(), unit.indices.end());
  std::sort(units.begin(), units.end(), [](const GpuUnit& a, const GpuUnit& b) {
    return a.indices.front() < b.indices.front();
  });

  const bool known = links.peers != nullptr && !links.peers->empty();
  if (links.require_linked && count >= 2 && !known) return std::nullopt;
  if (known && static_cast<int>(units.size()) <= kMaxUnitsSearchedForLinks) {
    return LinkedSearch(units, count, links).Run();
  }
  std::optional<std::vector<int>> plain = ChooseByNuma(units, count);
  if (plain && links.require_linked && !links.peers->AllLinked(*plain)) return std::nullopt;
  return plain;
}

namespace {

std::optional<std::vector<int>> ChooseByNuma(const std::vector<GpuUnit>& units, int count) {
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

}  // namespace
}  // namespace wsched::placement
