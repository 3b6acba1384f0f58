#include "server/scaling/demand_pool.h"

#include <algorithm>

namespace wsched::scaling {

std::vector<DemandShare> SplitDemand(
    const std::vector<std::string>& pools, int64_t count,
    const std::function<bool(const std::string& pool)>& can_grow,
    const std::function<int64_t(const std::string& pool, int64_t count)>& take) {
  std::vector<DemandShare> shares;
  if (pools.empty() || count <= 0) return shares;
  int64_t left = count;
  for (const std::string& pool : pools) {
    if (left == 0) break;
    if (!can_grow(pool)) continue;
    const int64_t taken = std::clamp<int64_t>(take(pool, left), 0, left);
    if (taken > 0) shares.push_back({pool, taken});
    left -= taken;
  }
  if (left > 0) {
    auto preferred = std::find_if(shares.begin(), shares.end(), [&](const DemandShare& share) {
      return share.pool == pools.front();
    });
    if (preferred == shares.end()) {
      shares.insert(shares.begin(), {pools.front(), left});
    } else {
      preferred->count += left;
    }
  }
  return shares;
}

}  // namespace wsched::scaling
