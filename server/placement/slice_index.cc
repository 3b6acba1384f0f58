#include "server/placement/slice_index.h"

namespace wsched::placement {

int SliceIndex::TotalOf(const FreeSlices& free) {
  int total = 0;
  for (const auto& [profile, count] : free) total += count;
  return total;
}

void SliceIndex::Insert(NodeId node, const FreeSlices& free, int64_t free_cpu_millis) {
  const Entry entry{{TotalOf(free), free_cpu_millis}, node};
  for (const auto& [profile, count] : free) {
    Profile& entries = by_profile_[profile];
    if (entries.nodes.insert(entry).second) entries.total_free += count;
  }
}

void SliceIndex::Erase(NodeId node, const FreeSlices& free, int64_t free_cpu_millis) {
  const Entry entry{{TotalOf(free), free_cpu_millis}, node};
  for (const auto& [profile, count] : free) {
    auto it = by_profile_.find(profile);
    if (it == by_profile_.end() || it->second.nodes.erase(entry) == 0) continue;
    it->second.total_free -= count;
    // An empty profile goes, so that empty() and lookups stay cheap.
    if (it->second.nodes.empty()) by_profile_.erase(it);
  }
}

int64_t SliceIndex::TotalFree(const std::string& profile) const {
  auto it = by_profile_.find(profile);
  return it == by_profile_.end() ? 0 : it->second.total_free;
}

}  // namespace wsched::placement
