#include "server/placement/slice_choice.h"

#include <tuple>
#include <vector>

namespace wsched::placement {

std::optional<HeldSlice> ChooseHeldSlice(const SnapshotNode& node, const std::string& profile) {
  std::optional<HeldSlice> best;
  std::tuple<int, int, int> best_key;  // Free slices on the GPU, GPU index, GPU instance.
  for (size_t pos = 0; pos < node.info.gpus.size(); ++pos) {
    const core::Gpu& gpu = node.info.gpus[pos];
    if (!gpu.mig) continue;
    const std::vector<core::MigInstance>& slices = gpu.mig->instances;
    int free_here = 0;
    std::optional<int> wanted_instance;
    for (size_t k = 0; k < slices.size(); ++k) {
      if (!node.SliceUsable(static_cast<int>(pos), k)) continue;
      ++free_here;
      if (slices[k].profile != profile) continue;
      if (!wanted_instance || slices[k].gpu_instance < *wanted_instance) {
        wanted_instance = slices[k].gpu_instance;
      }
    }
    if (!wanted_instance) continue;
    const std::tuple<int, int, int> key{free_here, gpu.index, *wanted_instance};
    if (!best || key < best_key) {
      best = HeldSlice{gpu.index, *wanted_instance};
      best_key = key;
    }
  }
  return best;
}

}  // namespace wsched::placement
