#include "server/placement/capacity_index.h"

namespace wsched::placement {

void CapacityIndex::Insert(NodeId node, const GpuCounts& free_gpus, int64_t free_cpu_millis) {
  for (int v = 0; v < kGpuViews; ++v) {
    sets_[v].insert(Entry{{free_gpus[v], free_cpu_millis}, node});
    total_free_[v] += free_gpus[v];
  }
}

void CapacityIndex::Erase(NodeId node, const GpuCounts& free_gpus, int64_t free_cpu_millis) {
  for (int v = 0; v < kGpuViews; ++v) {
    if (sets_[v].erase(Entry{{free_gpus[v], free_cpu_millis}, node}) > 0) {
      total_free_[v] -= free_gpus[v];
    }
  }
}

int CapacityIndex::MaxFreeGpus(GpuView view) const {
  const auto& set = sets_[static_cast<int>(view)];
  return set.empty() ? 0 : set.rbegin()->score.free_gpus;
}

}  // namespace wsched::placement
