// How many nodes pending workspaces need: first-fit decreasing, first onto
// room that already exists or is on its way (ready and provisioning nodes),
// then onto new nodes of the pool's shape.
#ifndef WSCHED_SERVER_SCALING_BINPACK_H_
#define WSCHED_SERVER_SCALING_BINPACK_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "server/scaling/capacity.h"

namespace wsched::scaling {

// Pending workspaces of one class.
struct PendingGroup {
  std::string class_id;
  Capacity per_workspace;
  int64_t count = 0;
};

struct PackingResult {
  // Parallel to the `existing` argument: true where pending work landed.
  std::vector<bool> existing_used;
  int64_t placed_on_existing = 0;
  int64_t placed_on_new = 0;
  int64_t new_nodes = 0;
  // By class id: workspaces that no empty node of this shape could hold, so
  // adding nodes would not help (placement reports these as errors).
  std::map<std::string, int64_t> never_fit;
  // Workspaces left out because more than `max_new_nodes` would be needed;
  // the target is clamped anyway, and this bounds the work.
  int64_t beyond_limit = 0;
  // The room left on each bin afterwards: `existing`'s in order, then the
  // new nodes', for a caller that packs more work after this.
  std::vector<Capacity> bins_left;
};

// `existing`: free room of each node pending work may use, in the order to
// try them (the caller puts busy nodes first, so empty ones stay empty and
// can be removed). Groups of the same class are merged; bigger workspaces
// are packed first, which keeps the node count close to optimal.
PackingResult PackPending(std::vector<PendingGroup> pending, const std::vector<Capacity>& existing,
                          const Capacity& new_node, int64_t max_new_nodes);

}  // namespace wsched::scaling

#endif  // WSCHED_SERVER_SCALING_BINPACK_H_
