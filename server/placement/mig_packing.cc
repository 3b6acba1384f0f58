#include "server/placement/mig_packing.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <deque>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "server/core/mig_profiles.h"

namespace wsched::placement {
namespace {

// Slots [start, start + size), clipped to 0..7 (a report may hold anything).
SlotMask SlotRange(int start, int size) {
  if (size <= 0 || start >= core::kMigMemorySlots) return 0;
  const int64_t end = std::min<int64_t>(int64_t{start} + size, core::kMigMemorySlots);
  SlotMask mask = 0;
  for (int64_t slot = std::max(start, 0); slot < end; ++slot) mask |= SlotMask(1u << slot);
  return mask;
}

int FreeSlotCount(SlotMask used) { return std::popcount(SlotMask(~used)); }

// One legal placement of a table, for judging what a mask still allows.
struct Placement {
  int rank = 0;  // Larger profiles rank higher: compute slices, then slots.
  int size = 0;
  SlotMask footprint = 0;  // What it needs free.
  SlotMask memory = 0;     // The slots it puts to use.
};

int RankOf(int compute_slices, int size) {
  return std::clamp(compute_slices, 0, core::kMigComputeSlices) * 16 + size;
}

// Every legal placement of `profiles`, once: profiles that differ only in
// what the name says (1g.18gb and 1g.18gb+me) would otherwise count twice.
std::vector<Placement> PlacementsOf(const std::vector<core::MigProfile>& profiles) {
  std::vector<Placement> placements;
  std::vector<std::tuple<int, int, int>> seen;  // (compute, size, start)
  for (const core::MigProfile& profile : profiles) {
    for (int start : profile.starts) {
      const SlotMask footprint = Footprint(profile, start);
      if (footprint == 0) continue;
      const auto key = std::make_tuple(profile.compute_slices, profile.size, start);
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
      seen.push_back(key);
      placements.push_back({RankOf(profile.compute_slices, profile.size), profile.size, footprint,
                            SlotRange(start, profile.size)});
    }
  }
  return placements;
}

// What a mask still allows: the free slots no placement reaches, the largest
// placeable profile's rank, and the free placements weighted by size.
struct Room {
  int stranded = 0;
  int largest = 0;
  int weight = 0;
};

Room RoomLeft(SlotMask used, const std::vector<Placement>& placements) {
  Room room;
  SlotMask reachable = 0;
  for (const Placement& p : placements) {
    if ((p.footprint & used) != 0) continue;
    reachable |= p.memory;
    room.largest = std::max(room.largest, p.rank);
    room.weight += p.size;
  }
  room.stranded = std::popcount(SlotMask(~(used | reachable)));
  return room;
}

struct StartChoice {
  int start = -1;
  SlotMask footprint = 0;
  Room room;  // What is left after the placement.
};

// BestStart's rule with the placements already worked out.
std::optional<StartChoice> BestStartAmong(const core::MigProfile& profile, SlotMask used,
                                          const std::vector<Placement>& placements) {
  std::optional<StartChoice> best;
  for (int start : profile.starts) {
    if (!CanPlaceAt(profile, start, used)) continue;
    StartChoice candidate{start, Footprint(profile, start), {}};
    candidate.room = RoomLeft(used | candidate.footprint, placements);
    const auto key = [](const StartChoice& c) {
      return std::make_tuple(-c.room.stranded, c.room.largest, c.room.weight, -c.start);
    };
    if (!best || key(candidate) > key(*best)) best = candidate;
  }
  return best;
}

// What placing one slice costs a GPU, as ChooseSlice ranks it.
struct SliceCost {
  int start = -1;  // BestStart's.
  SlotMask footprint = 0;
  int more_stranded = 0;    // Stranded slots after, less before.
  int weight_lost = 0;      // Size-weighted free placements before, less after.
  int free_slots_left = 0;  // After.
};

// The cost of a slice of one profile on GPUs of one table. It depends only
// on the occupancy, and there are 256 of those: each is worked out once, so
// that choosing among 10,000 GPUs costs little more than looking at them.
class SliceCosts {
 public:
  SliceCosts(const std::vector<core::MigProfile>& table, absl::string_view want)
      : table_(&table), want_(core::FindProfile(table, want)), placements_(PlacementsOf(table)) {}

  const std::vector<core::MigProfile>* table() const { return table_; }
  // The wanted profile in this table; nullptr when it has none.
  const core::MigProfile* want() const { return want_; }

  // nullopt when no legal start is free (or the table lacks the profile).
  const std::optional<SliceCost>& At(SlotMask used) {
    if (!known_[used]) {
      costs_[used] = WorkOut(used);
      known_[used] = true;
    }
    return costs_[used];
  }

 private:
  std::optional<SliceCost> WorkOut(SlotMask used) const {
    if (want_ == nullptr) return std::nullopt;
    std::optional<StartChoice> choice = BestStartAmong(*want_, used, placements_);
    if (!choice) return std::nullopt;
    const Room before = RoomLeft(used, placements_);
    return SliceCost{choice->start, choice->footprint, choice->room.stranded - before.stranded,
                     before.weight - choice->room.weight, FreeSlotCount(used | choice->footprint)};
  }

  const std::vector<core::MigProfile>* table_;
  const core::MigProfile* want_;
  std::vector<Placement> placements_;
  std::array<bool, kAllSlots + 1> known_{};
  std::array<std::optional<SliceCost>, kAllSlots + 1> costs_;
};

}  // namespace

SlotMask Footprint(const core::MigProfile& profile, int start) {
  if (profile.size < 1 || start < 0 || start > core::kMigMemorySlots - profile.size) return 0;
  return SlotsTaken(profile.compute_slices, start, profile.size);
}

bool CanPlaceAt(const core::MigProfile& profile, int start, SlotMask used) {
  if (std::find(profile.starts.begin(), profile.starts.end(), start) == profile.starts.end()) {
    return false;
  }
  const SlotMask footprint = Footprint(profile, start);
  return footprint != 0 && (footprint & used) == 0;
}

std::optional<int> FirstFitStart(const core::MigProfile& profile, SlotMask used) {
  std::optional<int> lowest;
  for (int start : profile.starts) {
    if (CanPlaceAt(profile, start, used) && (!lowest || start < *lowest)) lowest = start;
  }
  return lowest;
}

std::optional<int> BestStart(const core::MigProfile& profile, SlotMask used,
                             const std::vector<core::MigProfile>& profiles) {
  std::optional<StartChoice> choice = BestStartAmong(profile, used, PlacementsOf(profiles));
  if (!choice) return std::nullopt;
  return choice->start;
}

std::optional<SlicePick> ChooseSlice(const std::vector<GpuSlots>& gpus,
                                     const core::MigProfile& want) {
  // GPUs of one model share a table (a deque keeps the references valid as it
  // grows).
  std::deque<SliceCosts> tables;
  auto costs_of = [&tables, &want](const std::vector<core::MigProfile>* table) -> SliceCosts& {
    for (SliceCosts& costs : tables) {
      if (costs.table() == table) return costs;
    }
    return tables.emplace_back(*table, want.name);
  };

  std::optional<SlicePick> best;
  std::tuple<int, int, int, int, int, size_t> best_key;  // Smaller is better.
  for (size_t i = 0; i < gpus.size(); ++i) {
    const GpuSlots& gpu = gpus[i];
    if (gpu.profiles == nullptr || gpu.profiles->empty()) continue;
    SliceCosts& costs = costs_of(gpu.profiles);
    const core::MigProfile* profile = costs.want();
    if (profile == nullptr) continue;
    if (gpu.media_extensions_taken && UsesAllMediaEngines(profile->name)) continue;
    const std::optional<SliceCost>& cost = costs.At(gpu.used);
    if (!cost) continue;
    const auto key = std::make_tuple(gpu.used == 0 ? 1 : 0, cost->more_stranded, cost->weight_lost,
                                     cost->free_slots_left, gpu.gpu, i);
    if (!best || key < best_key) {
      best = SlicePick{gpu.gpu, i, cost->start, profile, cost->footprint};
      best_key = key;
    }
  }
  return best;
}

int StrandedSlots(SlotMask used, const std::vector<core::MigProfile>& profiles) {
  return RoomLeft(used, PlacementsOf(profiles)).stranded;
}

namespace {

// An instance of a profile nobody can name counts its slots as compute
// slices: what it takes is then at least not under-counted.
int CountedComputeSlices(const core::MigInstance& instance, const core::GpuMig& mig) {
  return core::ComputeSlicesOf(instance, mig)
      .value_or(std::clamp(instance.size, 0, core::kMigComputeSlices));
}

}  // namespace

SlotMask UsedSlots(const core::GpuMig& mig) {
  SlotMask used = 0;
  for (const core::MigInstance& instance : mig.instances) {
    used |= SlotsTaken(CountedComputeSlices(instance, mig), instance.start, instance.size);
  }
  return used;
}

int FreeComputeSlices(const core::GpuMig& mig) {
  int taken = 0;
  for (const core::MigInstance& instance : mig.instances) {
    taken += CountedComputeSlices(instance, mig);
    if (taken >= core::kMigComputeSlices) return 0;
  }
  return core::kMigComputeSlices - taken;
}

GpuSlots SlotsOf(int gpu, const core::GpuMig& mig) {
  GpuSlots slots;
  slots.gpu = gpu;
  slots.used = UsedSlots(mig);
  slots.free_compute_slices = FreeComputeSlices(mig);
  slots.profiles = &mig.profiles;
  for (const core::MigInstance& instance : mig.instances) {
    if (UsesAllMediaEngines(instance.profile)) slots.media_extensions_taken = true;
  }
  return slots;
}

std::optional<SliceShortfall> WhyNoSlice(const GpuSlots& gpu, const core::MigProfile& want) {
  SliceShortfall facts;
  facts.gpu = gpu.gpu;
  facts.profile = want.name;
  facts.free_compute_slices = gpu.free_compute_slices;
  facts.wanted_compute_slices = want.compute_slices;
  facts.free_slots = FreeSlotCount(gpu.used);
  const core::MigProfile* profile =
      gpu.profiles == nullptr ? nullptr : core::FindProfile(*gpu.profiles, want.name);
  if (profile == nullptr) {
    facts.profile_unknown = true;
    return facts;
  }
  facts.wanted_compute_slices = profile->compute_slices;
  for (int start : profile->starts) {
    if (Footprint(*profile, start) != 0) facts.legal_starts.push_back(start);
  }
  facts.media_extensions_taken = gpu.media_extensions_taken && UsesAllMediaEngines(profile->name);
  if (!facts.media_extensions_taken && FirstFitStart(*profile, gpu.used)) return std::nullopt;
  facts.too_few_compute_slices = profile->compute_slices > gpu.free_compute_slices;
  return facts;
}

}  // namespace wsched::placement
