// Which pool a pending workspace's demand goes to.
#ifndef WSCHED_SERVER_SCALING_DEMAND_POOL_H_
#define WSCHED_SERVER_SCALING_DEMAND_POOL_H_

#include <functional>
#include <string>
#include <vector>

namespace wsched::scaling {

// `pools` are those that could hold the workspace, preferred first (its
// class's model fallbacks). The demand goes to the first that can grow
// now, so a fallback pool scales up while the preferred one is at max_size
// or backing off; when none can, to the preferred pool (where the signal
// then says why it does not grow). Empty when `pools` is.
std::string DemandPool(const std::vector<std::string>& pools,
                       const std::function<bool(const std::string& pool)>& can_grow);

}  // namespace wsched::scaling

#endif  // WSCHED_SERVER_SCALING_DEMAND_POOL_H_
