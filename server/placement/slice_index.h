// Free MIG slices of one pool's schedulable nodes, by profile, kept sorted by
// packing score: the slice counterpart of capacity_index.h.
//
// Why: a slice decision must cost about what a whole-GPU decision costs at
// 10,000 nodes (docs/performance.md "Slices"), so it is a lower_bound per
// pool and profile plus a walk over the few nodes the finer filters reject,
// never a scan. The snapshot keeps one per pool, updated on every hold,
// release and state change of a node with MIG GPUs.
#ifndef WSCHED_SERVER_PLACEMENT_SLICE_INDEX_H_
#define WSCHED_SERVER_PLACEMENT_SLICE_INDEX_H_

#include <compare>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "server/placement/capacity_index.h"

namespace wsched::placement {

// Free usable slices of a node, per profile name ("1g.18gb" -> 3); profiles
// with none free are left out.
using FreeSlices = std::vector<std::pair<std::string, int>>;

// Packing for slices, lower is better: the node with the fewest free slices
// of any profile first (slices fill partly used nodes, so idle nodes stay
// whole and can scale to zero), then the least free CPU, as for GPUs.
struct SliceScore {
  int free_slices = 0;
  int64_t free_cpu_millis = 0;
  friend auto operator<=>(const SliceScore&, const SliceScore&) = default;
};

class SliceIndex {
 public:
  // The caller passes the same slices and CPU to Erase that it inserted with.
  void Insert(NodeId node, const FreeSlices& free, int64_t free_cpu_millis);
  void Erase(NodeId node, const FreeSlices& free, int64_t free_cpu_millis);

  // Visits nodes with a free slice of `profile` and at least
  // `min_cpu_millis` free CPU, best score first, until `visit` returns true.
  // Returns whether it did. visit(NodeId, const SliceScore&).
  template <typename Visit>
  bool FindFirst(const std::string& profile, int64_t min_cpu_millis, Visit&& visit) const;

  // Free slices of `profile` summed over the indexed nodes.
  int64_t TotalFree(const std::string& profile) const;
  bool empty() const { return by_profile_.empty(); }

 private:
  struct Entry {
    SliceScore score;
    NodeId node = 0;
    friend auto operator<=>(const Entry&, const Entry&) = default;
  };
  struct Profile {
    absl::btree_set<Entry> nodes;
    int64_t total_free = 0;
  };
  static int TotalOf(const FreeSlices& free);

  absl::flat_hash_map<std::string, Profile> by_profile_;
};

template <typename Visit>
bool SliceIndex::FindFirst(const std::string& profile, int64_t min_cpu_millis,
                           Visit&& visit) const {
  auto found = by_profile_.find(profile);
  if (found == by_profile_.end()) return false;
  const absl::btree_set<Entry>& set = found->second.nodes;
  auto it = set.begin();
  while (it != set.end()) {
    if (it->score.free_cpu_millis < min_cpu_millis) {
      // The rest of this slice count is short of CPU; jump to where it is not.
      it = set.lower_bound(Entry{{it->score.free_slices, min_cpu_millis}, 0});
      continue;
    }
    if (visit(it->node, it->score)) return true;
    ++it;
  }
  return false;
}

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_SLICE_INDEX_H_
