#include "server/scaling/demand_pool.h"

namespace wsched::scaling {

std::string DemandPool(const std::vector<std::string>& pools,
                       const std::function<bool(const std::string& pool)>& can_grow) {
  for (const std::string& pool : pools) {
    if (can_grow(pool)) return pool;
  }
  return pools.empty() ? "" : pools.front();
}

}  // namespace wsched::scaling
