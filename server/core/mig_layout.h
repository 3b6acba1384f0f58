// Laying out one MIG GPU from a list of profiles, as a pool's MIG layout
// names them (core/pool.h MigLayout; docs/catalog.md "Slices of a GPU").
// Pure: catalog validation uses it to tell a legal layout from one that is
// not, and whoever cuts a GPU into a layout takes the starts from it, so the
// two cannot disagree.
//
// A GPU has kMigMemorySlots memory slots; an instance of a profile takes
// [start, start + size) at one of the profile's legal starts, and instances
// never overlap. NVIDIA's lists of valid MIG combinations never pair a 4g
// with a 3g, although a 4g at 0 and a 3g at 4 share no slot: a 4g therefore
// also takes slot 7 out of play, as placement counts it
// (server/placement/mig_packing.h SlotsTaken, which says what this costs).
#ifndef WSCHED_SERVER_CORE_MIG_LAYOUT_H_
#define WSCHED_SERVER_CORE_MIG_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/core/mig.h"
#include "server/core/pool.h"

namespace wsched::core {

// Slot occupancy of one GPU: bit i set = memory slot i is taken.
using MigSlotMask = uint8_t;

// The slots an instance of `compute_slices` compute slices takes at
// [start, start + size), plus slot 7 for a 4g at 0 (the 4g+3g rule above).
// Slots outside 0..7 are dropped.
MigSlotMask MigSlotsTaken(int compute_slices, int start, int size);

// One instance of a laid-out GPU.
struct MigLayoutSlice {
  std::string profile;  // The name as the table spells it.
  int start = 0;
  friend bool operator==(const MigLayoutSlice&, const MigLayoutSlice&) = default;
};

// The first profile of a layout that cannot join the ones before it.
struct MigLayoutMisfit {
  size_t index = 0;
  std::string reason;  // For people: "no legal start is left for 1g.18gb ...".
};

struct MigLayoutPlan {
  // Every profile with its start, in the layout's order; empty with a misfit.
  std::vector<MigLayoutSlice> slices;
  std::optional<MigLayoutMisfit> misfit;
  bool legal() const { return !misfit.has_value(); }
};

// Lays out `profiles` (names of `table`; an "MIG " prefix and case do not
// matter) on one empty GPU. The order decides the starts: each profile
// takes the lowest legal start that is free and still lets every profile
// after it find one, so where the lowest start of every profile fits, that
// is where it goes ([4g, 2g, 1g] -> 0, 4, 6), and where it does not, an
// earlier profile moves up ([3g, 2g, 1g, 1g] -> 4, 0, 2, 3). A layout is
// legal when some arrangement holds all of it.
//
// The misfit is the first profile i for which profiles[0..i] cannot be laid
// out however they are arranged: one the table lacks, a second profile
// that takes all media engines ("+me": one per GPU), one that brings the
// compute slices over kMigComputeSlices, or one for which no legal start
// is left. At most kMigMemorySlots profiles are looked at; a longer list
// has its first misfit there at the latest.
MigLayoutPlan LayOutMig(const std::vector<MigProfile>& table,
                        const std::vector<std::string>& profiles);

// A "+me" profile ("1g.18gb+me") takes every media engine of the GPU, so a
// GPU has at most one instance of such a profile.
bool UsesAllMediaEngines(absl::string_view profile);

// The smallest profile of the table that is not a "+me" one: fewest compute
// slices, then fewest slots; nullptr for an empty table.
const MigProfile* SmallestMigProfile(const std::vector<MigProfile>& table);

// The profiles a GPU of a pool with `layout` starts with: a fixed layout's
// own, a by_demand layout's `profiles`, else as many of the smallest profile
// as fit (seven 1g on an H100 or H200); none for a whole layout.
std::vector<std::string> StartingMigProfiles(const MigLayout& layout,
                                             const std::vector<MigProfile>& table);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_MIG_LAYOUT_H_
