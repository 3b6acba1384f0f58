// Which replica packs which node, when several place at once. Each node
// belongs to one of the replicas placing now, by rendezvous (highest random
// weight) hashing of (node, replica): every replica computes the same owner
// without talking to the others, and a replica joining or leaving moves only
// its own share of the nodes. A replica prefers its own nodes and takes
// another's only when none of its own fits (DecideAvoiding), so two
// replicas stop racing for the same fullest node.
#ifndef WSCHED_SERVER_PLACEMENT_NODE_OWNERSHIP_H_
#define WSCHED_SERVER_PLACEMENT_NODE_OWNERSHIP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace wsched::placement {

// The same on every replica and every build (not absl::Hash, which is
// seeded per process).
uint64_t RendezvousWeight(absl::string_view node, absl::string_view replica);

// True when `me` outweighs every replica in `peers` for `node` (always true
// without peers).
bool OwnsNode(absl::string_view node, absl::string_view me, const std::vector<std::string>& peers);

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_NODE_OWNERSHIP_H_
