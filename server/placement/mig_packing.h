// Where a MIG slice goes: which GPU, at which placement start. Pure: no I/O.
//
// A MIG GPU has 8 memory slots (core::kMigMemorySlots). An instance of a
// profile takes slots [start, start + size) at one of the profile's legal
// starts, and instances never overlap. Which start an instance takes decides
// what still fits beside it: a 1g at slot 0 leaves no room for a 4g, a 1g at
// slot 4 does. This file chooses starts and GPUs so that large profiles stay
// placeable for as long as possible (docs/placement.md "Packing slices").
//
// One rule is not in the placement table: NVIDIA's lists of valid MIG
// combinations never pair a 4g with a 3g, although a 4g at 0 and a 3g at 4
// do not share a slot. wsched keeps to the lists: a 4g also takes slot 7 out
// of play (SlotsTaken), which shuts out the two placements that need slot 7
// beside it, the 3g at 4 and a 1g with two slots' memory at 6 (the second
// is what keeping the rule this simple costs), and leaves the others.
#ifndef WSCHED_SERVER_PLACEMENT_MIG_PACKING_H_
#define WSCHED_SERVER_PLACEMENT_MIG_PACKING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/core/mig.h"
#include "server/core/mig_layout.h"
#include "server/core/mig_profiles.h"

namespace wsched::placement {

// A GPU's slot occupancy: bit i set = memory slot i is taken.
using SlotMask = core::MigSlotMask;
inline constexpr SlotMask kAllSlots = 0xFF;

// The slots an instance of `compute_slices` compute slices takes at
// [start, start + size): those, plus slot 7 for a 4g at 0 (the 4g+3g rule
// above). Slots outside 0..7 are dropped, so an odd report never spills.
inline SlotMask SlotsTaken(int compute_slices, int start, int size) {
  return core::MigSlotsTaken(compute_slices, start, size);
}

// What placing `profile` at `start` would take; 0 when the placement does
// not fit inside the 8 slots (size below 1, start below 0, or past slot 7).
// Says nothing about whether `start` is one of profile.starts.
SlotMask Footprint(const core::MigProfile& profile, int start);

// `start` is one of profile.starts and its footprint is free in `used`.
bool CanPlaceAt(const core::MigProfile& profile, int start, SlotMask used);

// The baseline: the lowest legal start whose footprint is free.
std::optional<int> FirstFitStart(const core::MigProfile& profile, SlotMask used);

// The legal free start that keeps the most possible afterwards, judged on the
// mask the placement leaves, with `profiles` (the GPU's table):
//   1. as few stranded slots (StrandedSlots) as possible;
//   2. then the largest profile still placeable (most compute slices, then
//      most slots) as large as possible;
//   3. then the free legal placements of every profile, each weighted by its
//      size in slots, adding up to as much as possible (profiles with the
//      same placements, like 1g.18gb and 1g.18gb+me, count once);
//   4. then the lowest start.
// Without 1, a 1g on an empty GPU goes to slot 6 (the one start that keeps
// both the 4g and the most placements) and leaves slot 7 to nothing: ranked
// without it, here and in ChooseSlice, every arrival order of the H100
// workload in mig_packing_test.cc ("EveryOrder") stranded four times as many
// slots as first fit (6912 against 1728); with it, 1056.
// nullopt when no legal start is free.
std::optional<int> BestStart(const core::MigProfile& profile, SlotMask used,
                             const std::vector<core::MigProfile>& profiles);

// One MIG GPU as the chooser sees it.
struct GpuSlots {
  int gpu = -1;       // core::Gpu::index.
  SlotMask used = 0;  // UsedSlots() of what exists on it.
  // The "+me" profiles (all media engines) allow one instance per GPU, which
  // the slots do not show.
  bool media_extensions_taken = false;
  int free_compute_slices = core::kMigComputeSlices;  // Only for WhyNoSlice.
  // The GPU's own table, or core::KnownMigProfiles() of its model until it
  // reports one. Not owned; nullptr or empty: nothing is placed on it.
  const std::vector<core::MigProfile>* profiles = nullptr;
};

struct SlicePick {
  int gpu = -1;           // GpuSlots::gpu of the chosen GPU.
  size_t slot_index = 0;  // Its position in the vector given to ChooseSlice.
  int start = -1;         // Placement start.
  // The wanted profile in that GPU's own table (its ID and size are the
  // GPU's), pointing into GpuSlots::profiles.
  const core::MigProfile* profile = nullptr;
  SlotMask footprint = 0;  // What the instance takes: add it to `used`.
};

// Chooses the GPU and start for one slice of `want`, matched by name in each
// GPU's own table (GPUs whose table lacks it are skipped). Among the GPUs
// where it has a legal free start:
//   1. GPUs already partly used before empty ones, so that as few GPUs as
//      possible are touched;
//   2. then the GPU where the slice strands the fewest more slots;
//   3. then the GPU whose free placements (weighted by size, as in
//      BestStart) shrink least: the best fit is where the slice costs least.
//      Not "whose largest placeable profile shrinks least": that would keep
//      any GPU from being filled up;
//   4. then the fewest free slots left (plain best fit);
//   5. then the lowest GPU index, then the earliest in `gpus`.
// On the chosen GPU the start is BestStart's. Deterministic for equal input.
std::optional<SlicePick> ChooseSlice(const std::vector<GpuSlots>& gpus,
                                     const core::MigProfile& want);

// Free slots that no profile of `profiles` can still use: slot i is stranded
// when it is free and no legal placement whose footprint is free covers it
// with its memory slots [start, start + size). Slot 7 is often the one: only
// the profiles that take two or more slots reach it, so seven 1g instances
// strand it. Slots a 4g takes out of play are not free, so not stranded.
int StrandedSlots(SlotMask used, const std::vector<core::MigProfile>& profiles);

// A "+me" profile takes every media engine of the GPU (core/mig_layout.h).
using core::UsesAllMediaEngines;

using core::ComputeSlicesOfName;

// From a GPU's report: the slots its instances take (SlotsTaken of each,
// with the compute slices of its profile in mig.profiles, else of its name,
// else its size), the compute slices still free (7 minus the instances',
// never below 0), and the GpuSlots of it (profiles points into `mig`).
SlotMask UsedSlots(const core::GpuMig& mig);
int FreeComputeSlices(const core::GpuMig& mig);
GpuSlots SlotsOf(int gpu, const core::GpuMig& mig);

// The facts behind "3 of 7 slices free on GPU 2, but no legal start for
// 3g.71gb"; the wording is the pending reason's.
struct SliceShortfall {
  int gpu = -1;
  std::string profile;                  // want.name
  int free_compute_slices = 0;          // Of core::kMigComputeSlices.
  int wanted_compute_slices = 0;        // The profile's.
  int free_slots = 0;                   // Of core::kMigMemorySlots.
  bool profile_unknown = false;         // The GPU's table has no such profile.
  bool media_extensions_taken = false;  // A "+me" profile, and the GPU's is in use.
  bool too_few_compute_slices = false;  // wanted > free.
  // The profile's legal starts on this GPU. Unless media_extensions_taken
  // is what stops the slice, none is free: each one's footprint meets a
  // taken slot.
  std::vector<int> legal_starts;
};

// nullopt when `want` has a legal free start on `gpu` (the slice fits).
std::optional<SliceShortfall> WhyNoSlice(const GpuSlots& gpu, const core::MigProfile& want);

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_MIG_PACKING_H_
