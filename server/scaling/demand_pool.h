// Which pools a class's pending workspaces count on.
#ifndef WSCHED_SERVER_SCALING_DEMAND_POOL_H_
#define WSCHED_SERVER_SCALING_DEMAND_POOL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace wsched::scaling {

// A share of one class's pending workspaces counted on one pool.
struct DemandShare {
  std::string pool;
  int64_t count = 0;
  bool operator==(const DemandShare&) const = default;
};

// Splits `count` pending workspaces of one class over `pools`, those that
// could hold them, preferred first (the class's model fallbacks), the way
// the pending walk hands them out (docs/placement.md "Pending reasons"):
// each pool that can grow now (`can_grow`: not backing off) takes what it
// can still hold (`take(pool, n)`: how many of `n` it holds on its free
// room and the nodes it may still add below max_size, which it then no
// longer offers), and the rest goes on to the next pool. What no pool
// takes counts on the preferred pool, whose signal then says why it does
// not grow (max_size, backoff). One share per pool, in `pools` order;
// empty when `pools` is or `count` is not positive.
std::vector<DemandShare> SplitDemand(
    const std::vector<std::string>& pools, int64_t count,
    const std::function<bool(const std::string& pool)>& can_grow,
    const std::function<int64_t(const std::string& pool, int64_t count)>& take);

}  // namespace wsched::scaling

#endif  // WSCHED_SERVER_SCALING_DEMAND_POOL_H_
