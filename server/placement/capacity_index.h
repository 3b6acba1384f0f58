// Free capacity of one pool's schedulable nodes, kept sorted by packing score.
//
// Why: a decision must not scan every node (docs/performance.md "Targets"). The
// snapshot keeps one index per pool (a pool fixes the GPU model, so this is
// the per-(pool, model) bucket) and updates it incrementally on every hold,
// release and state change. A decision is a lower_bound per pool plus a walk
// over the few entries that fail the finer filters (memory, disk, IOMMU).
#ifndef WSCHED_SERVER_PLACEMENT_CAPACITY_INDEX_H_
#define WSCHED_SERVER_PLACEMENT_CAPACITY_INDEX_H_

#include <array>
#include <compare>
#include <cstdint>

#include "absl/container/btree_set.h"
#include "server/placement/scorers.h"

namespace wsched::placement {

// Dense id of a node inside one Snapshot.
using NodeId = uint32_t;

// Which GPUs count as free, depending on how they would be handed out.
enum class GpuView : int {
  kContainer = 0,  // Every free healthy GPU, one by one.
  kVmSafe = 1,     // GPUs in wholly free, healthy, passthrough-safe IOMMU groups.
  kVmAny = 2,      // Same without the safety rule (pool.allow_unsafe_iommu).
};
inline constexpr int kGpuViews = 3;

// Free GPUs of a node in each view.
using GpuCounts = std::array<int, kGpuViews>;

class CapacityIndex {
 public:
  // The caller passes the same counts and CPU to Erase that it inserted with.
  void Insert(NodeId node, const GpuCounts& free_gpus, int64_t free_cpu_millis);
  void Erase(NodeId node, const GpuCounts& free_gpus, int64_t free_cpu_millis);

  // Visits nodes with at least `min_gpus` free GPUs in `view` and at least
  // `min_cpu_millis` free CPU, best packing score first, until `visit`
  // returns true. Returns whether it did. visit(NodeId, const PackingScore&).
  //
  // Within one free-GPU count the entries are sorted by free CPU, so nodes
  // without enough CPU are skipped with a lower_bound, not one by one: the
  // walk costs O(distinct GPU counts * log n) plus the nodes `visit` rejects.
  template <typename Visit>
  bool FindFirst(GpuView view, int min_gpus, int64_t min_cpu_millis, Visit&& visit) const;

  size_t size() const { return sets_[0].size(); }
  bool empty() const { return sets_[0].empty(); }
  // Largest free-GPU count of one node in `view`; 0 when empty.
  int MaxFreeGpus(GpuView view) const;
  // Free GPUs summed over the indexed nodes.
  int64_t TotalFreeGpus(GpuView view) const { return total_free_[static_cast<int>(view)]; }

 private:
  struct Entry {
    PackingScore score;
    NodeId node = 0;
    friend auto operator<=>(const Entry&, const Entry&) = default;
  };

  std::array<absl::btree_set<Entry>, kGpuViews> sets_;
  std::array<int64_t, kGpuViews> total_free_{};
};

template <typename Visit>
bool CapacityIndex::FindFirst(GpuView view, int min_gpus, int64_t min_cpu_millis,
                              Visit&& visit) const {
  const auto& set = sets_[static_cast<int>(view)];
  auto it = set.lower_bound(Entry{{min_gpus, min_cpu_millis}, 0});
  while (it != set.end()) {
    if (it->score.free_cpu_millis < min_cpu_millis) {
      // The rest of this GPU count is short of CPU; jump to where it is not.
      it = set.lower_bound(Entry{{it->score.free_gpus, min_cpu_millis}, 0});
      continue;
    }
    if (visit(it->node, it->score)) return true;
    ++it;
  }
  return false;
}

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_CAPACITY_INDEX_H_
