// Which free MIG slice of a node a slice workspace takes. Pure: no I/O.
//
// Slices that exist (a fixed layout) are handed out as they are; the choice
// is which GPU's. The one with the fewest free slices goes first, so slices
// fill GPUs that are already partly used and GPUs that hold nothing stay
// whole: free for another layout, for a large profile, or to scale the node
// down once it is empty (docs/placement.md "Slices").
#ifndef WSCHED_SERVER_PLACEMENT_SLICE_CHOICE_H_
#define WSCHED_SERVER_PLACEMENT_SLICE_CHOICE_H_

#include <optional>
#include <string>

#include "server/placement/snapshot.h"

namespace wsched::placement {

// A usable free slice of `profile` on the node (SnapshotNode::SliceUsable):
// on the GPU with the fewest usable free slices of any profile, then the
// lowest GPU index, then the lowest GPU instance. nullopt when none.
std::optional<HeldSlice> ChooseHeldSlice(const SnapshotNode& node, const std::string& profile);

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_SLICE_CHOICE_H_
