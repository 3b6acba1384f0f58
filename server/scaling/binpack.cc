#include "server/scaling/binpack.h"

#include <algorithm>
#include <tuple>
#include <utility>

namespace wsched::scaling {
namespace {

// Biggest first; GPUs dominate because they are the scarce dimension.
bool PackBefore(const PendingGroup& a, const PendingGroup& b) {
  const Capacity& x = a.per_workspace;
  const Capacity& y = b.per_workspace;
  return std::tie(y.gpus, y.cpu_millis, y.memory_bytes, y.ephemeral_storage_bytes, y.disk_bytes,
                  a.class_id) < std::tie(x.gpus, x.cpu_millis, x.memory_bytes,
                                         x.ephemeral_storage_bytes, x.disk_bytes, b.class_id);
}

std::vector<PendingGroup> MergeByClass(std::vector<PendingGroup> pending) {
  std::map<std::string, PendingGroup> by_class;
  for (PendingGroup& group : pending) {
    if (group.count <= 0) continue;
    auto [it, inserted] = by_class.try_emplace(group.class_id, group);
    if (!inserted) it->second.count += group.count;
  }
  std::vector<PendingGroup> merged;
  for (auto& [id, group] : by_class) merged.push_back(std::move(group));
  std::sort(merged.begin(), merged.end(), PackBefore);
  return merged;
}

// Takes `n` items out of `room`; callers checked that they fit.
void Take(Capacity& room, const Capacity& item, int64_t n) {
  room -= Capacity{.gpus = item.gpus * n,
                   .cpu_millis = item.cpu_millis * n,
                   .memory_bytes = item.memory_bytes * n,
                   .ephemeral_storage_bytes = item.ephemeral_storage_bytes * n,
                   .disk_bytes = item.disk_bytes * n};
}

}  // namespace

PackingResult PackPending(std::vector<PendingGroup> pending, const std::vector<Capacity>& existing,
                          const Capacity& new_node, int64_t max_new_nodes) {
  PackingResult result;
  result.existing_used.assign(existing.size(), false);
  // Existing room first, then nodes opened here; a later (smaller) class can
  // use what an earlier class left on a new node.
  std::vector<Capacity> bins = existing;

  for (const PendingGroup& group : MergeByClass(std::move(pending))) {
    int64_t left = group.count;
    // Placing as many as fit per bin equals placing them one by one with
    // first fit: a bin one workspace did not fit cannot fit the next one.
    for (size_t i = 0; i < bins.size() && left > 0; ++i) {
      int64_t n = std::min(left, HowManyFit(bins[i], group.per_workspace));
      if (n <= 0) continue;
      Take(bins[i], group.per_workspace, n);
      left -= n;
      if (i < existing.size()) {
        result.existing_used[i] = true;
        result.placed_on_existing += n;
      } else {
        result.placed_on_new += n;
      }
    }
    if (left == 0) continue;
    int64_t per_new_node = HowManyFit(new_node, group.per_workspace);
    if (per_new_node <= 0) {
      result.never_fit[group.class_id] += left;
      continue;
    }
    while (left > 0) {
      if (result.new_nodes >= max_new_nodes) {
        result.beyond_limit += left;
        break;
      }
      int64_t n = std::min(left, per_new_node);
      Capacity bin = new_node;
      Take(bin, group.per_workspace, n);
      bins.push_back(bin);
      ++result.new_nodes;
      result.placed_on_new += n;
      left -= n;
    }
  }
  result.bins_left = std::move(bins);
  return result;
}

}  // namespace wsched::scaling
