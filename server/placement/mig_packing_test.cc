#include "server/placement/mig_packing.h"

#include <algorithm>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <numeric>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/mig_profiles.h"

namespace wsched::placement {
namespace {

using ::testing::ElementsAre;
using ::testing::Optional;

const std::vector<core::MigProfile>& H100() {
  return *core::KnownMigProfiles("NVIDIA H100 80GB HBM3");
}
const std::vector<core::MigProfile>& H200() { return *core::KnownMigProfiles("NVIDIA H200"); }

const core::MigProfile& Profile(const std::vector<core::MigProfile>& table,
                                const std::string& name) {
  static const core::MigProfile kMissing;
  const core::MigProfile* profile = core::FindProfile(table, name);
  EXPECT_NE(profile, nullptr) << name;
  return profile != nullptr ? *profile : kMissing;
}

SlotMask Slots(std::initializer_list<int> slots) {
  SlotMask mask = 0;
  for (int slot : slots) mask |= SlotMask(1u << slot);
  return mask;
}

GpuSlots Gpu(int index, SlotMask used, const std::vector<core::MigProfile>& table = H100()) {
  GpuSlots gpu;
  gpu.gpu = index;
  gpu.used = used;
  gpu.profiles = &table;
  return gpu;
}

core::MigInstance Instance(const std::string& profile, int start, int size) {
  core::MigInstance instance;
  instance.profile = profile;
  instance.start = start;
  instance.size = size;
  return instance;
}

TEST(Footprint, MemorySlotsOfThePlacement) {
  EXPECT_EQ(Footprint(Profile(H100(), "1g.10gb"), 6), Slots({6}));
  EXPECT_EQ(Footprint(Profile(H100(), "1g.20gb"), 6), Slots({6, 7}));
  EXPECT_EQ(Footprint(Profile(H100(), "3g.40gb"), 4), Slots({4, 5, 6, 7}));
  EXPECT_EQ(Footprint(Profile(H100(), "7g.80gb"), 0), kAllSlots);
}

TEST(Footprint, AFourGTakesSlotSevenOutOfPlay) {
  EXPECT_EQ(Footprint(Profile(H100(), "4g.40gb"), 0), Slots({0, 1, 2, 3, 7}));
  EXPECT_EQ(SlotsTaken(4, 0, 4), Slots({0, 1, 2, 3, 7}));
  EXPECT_EQ(SlotsTaken(3, 0, 4), Slots({0, 1, 2, 3}));
}

TEST(Footprint, PlacementsOutsideTheSlotsTakeNothing) {
  core::MigProfile odd = Profile(H100(), "1g.20gb");
  EXPECT_EQ(Footprint(odd, 7), 0);  // 7 + 2 > 8.
  EXPECT_EQ(Footprint(odd, -1), 0);
  odd.size = 0;
  EXPECT_EQ(Footprint(odd, 0), 0);
  odd.size = 9;
  EXPECT_EQ(Footprint(odd, 0), 0);
  EXPECT_EQ(Footprint(odd, std::numeric_limits<int>::max()), 0);
  odd.size = std::numeric_limits<int>::max();
  EXPECT_EQ(Footprint(odd, 1), 0);
  // An instance as reported keeps what lies inside the slots.
  EXPECT_EQ(SlotsTaken(1, 6, 4), Slots({6, 7}));
  EXPECT_EQ(SlotsTaken(1, -2, 3), Slots({0}));
  EXPECT_EQ(SlotsTaken(1, std::numeric_limits<int>::max(), std::numeric_limits<int>::max()), 0);
  EXPECT_EQ(SlotsTaken(1, 5, std::numeric_limits<int>::max()), Slots({5, 6, 7}));
  EXPECT_EQ(SlotsTaken(1, std::numeric_limits<int>::min(), 3), 0);
  EXPECT_EQ(SlotsTaken(1, 2, -1), 0);
}

TEST(FirstFitStart, LowestFreeLegalStart) {
  const core::MigProfile& one = Profile(H100(), "1g.10gb");
  const core::MigProfile& two = Profile(H100(), "2g.20gb");
  EXPECT_THAT(FirstFitStart(one, 0), Optional(0));
  EXPECT_THAT(FirstFitStart(one, Slots({0, 1})), Optional(2));
  EXPECT_THAT(FirstFitStart(two, Slots({1})), Optional(2));
  EXPECT_THAT(FirstFitStart(two, Slots({0, 2, 4})), std::nullopt);
  // Slot 7 is free, but no 1g starts there.
  EXPECT_EQ(FirstFitStart(one, Slots({0, 1, 2, 3, 4, 5, 6})), std::nullopt);
}

TEST(FirstFitStart, NoThreeGBesideAFourG) {
  const SlotMask four_g = Footprint(Profile(H100(), "4g.40gb"), 0);
  EXPECT_EQ(FirstFitStart(Profile(H100(), "3g.40gb"), four_g), std::nullopt);
  EXPECT_THAT(FirstFitStart(Profile(H100(), "2g.20gb"), four_g), Optional(4));
  EXPECT_THAT(FirstFitStart(Profile(H100(), "1g.10gb"), four_g), Optional(4));
  // And no 4g beside a 3g at 4.
  const SlotMask three_g = Footprint(Profile(H100(), "3g.40gb"), 4);
  EXPECT_EQ(FirstFitStart(Profile(H100(), "4g.40gb"), three_g), std::nullopt);
  EXPECT_THAT(FirstFitStart(Profile(H100(), "3g.40gb"), three_g), Optional(0));
}

TEST(FirstFitStart, MalformedProfilesHaveNoStart) {
  core::MigProfile odd = Profile(H100(), "2g.20gb");
  odd.starts = {-2, 7, 9};
  EXPECT_EQ(FirstFitStart(odd, 0), std::nullopt);
  EXPECT_EQ(BestStart(odd, 0, H100()), std::nullopt);
  odd.starts = {};
  EXPECT_EQ(FirstFitStart(odd, 0), std::nullopt);
  odd = Profile(H100(), "2g.20gb");
  odd.size = 0;
  EXPECT_EQ(FirstFitStart(odd, 0), std::nullopt);
  EXPECT_EQ(BestStart(odd, 0, H100()), std::nullopt);
}

TEST(BestStart, OneGKeepsTheFourGWithoutStrandingSlotSeven) {
  // A 1g at 6 would leave slot 7 to nothing (a 1g.20gb there needs slot 6);
  // at 0..3 it would shut out the 4g. At 4 and 5 it leaves as much (24
  // slot-weighted placements each); 4 is the lower start.
  EXPECT_THAT(BestStart(Profile(H100(), "1g.10gb"), 0, H100()), Optional(4));
  EXPECT_THAT(FirstFitStart(Profile(H100(), "1g.10gb"), 0), Optional(0));
}

TEST(BestStart, KeepsTheFourGThenTakesTheLowestOfEqualStarts) {
  // With slot 6 taken, a 1g at 4 or 5 keeps the 4g and leaves as much
  // (21 slot-weighted placements each); 4 is the lower start.
  EXPECT_THAT(BestStart(Profile(H100(), "1g.10gb"), Slots({6}), H100()), Optional(4));
}

TEST(BestStart, ThreeGTakesTheUpperHalf) {
  // Either half leaves a 3g; the lower half left free holds more placements
  // (two 2g, two 1g.20gb, four 1g) than the upper one (one 2g, two 1g.20gb,
  // three 1g).
  EXPECT_THAT(BestStart(Profile(H100(), "3g.40gb"), 0, H100()), Optional(4));
}

TEST(BestStart, TwoGKeepsTheFourG) {
  EXPECT_THAT(BestStart(Profile(H100(), "2g.20gb"), 0, H100()), Optional(4));
}

TEST(BestStart, BesideAThreeGStrandsNothing) {
  // 3g at 0: a 1g at 6 would keep the 2g at 4 but leave slot 7 to nothing;
  // at 4 (or 5) the other two slots stay usable by a 1g and a 1g.20gb.
  EXPECT_THAT(BestStart(Profile(H100(), "1g.10gb"), Slots({0, 1, 2, 3}), H100()), Optional(4));
}

TEST(BestStart, NoneWhenNothingIsFree) {
  EXPECT_EQ(BestStart(Profile(H100(), "1g.10gb"), kAllSlots, H100()), std::nullopt);
  EXPECT_EQ(BestStart(Profile(H100(), "7g.80gb"), Slots({6}), H100()), std::nullopt);
}

TEST(ChooseSlice, PartlyUsedGpuBeforeAnEmptyOne) {
  std::optional<SlicePick> pick =
      ChooseSlice({Gpu(0, 0), Gpu(1, Slots({6}))}, Profile(H100(), "1g.10gb"));
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(pick->gpu, 1);
  EXPECT_EQ(pick->slot_index, 1u);
  EXPECT_EQ(pick->start, 4);
  EXPECT_EQ(pick->footprint, Slots({4}));
  EXPECT_EQ(pick->profile, core::FindProfile(H100(), "1g.10gb"));
}

TEST(ChooseSlice, WhereTheSliceCostsLeast) {
  // GPU 0 has a 1g at 0, GPU 1 a 3g at 0. Both can still take a 3g at 4.
  // A 1g on GPU 1 would take that away; on GPU 0, at 1, it does not.
  std::optional<SlicePick> pick =
      ChooseSlice({Gpu(0, Slots({0})), Gpu(1, Slots({0, 1, 2, 3}))}, Profile(H100(), "1g.10gb"));
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(pick->gpu, 0);
  EXPECT_EQ(pick->start, 1);
}

TEST(ChooseSlice, BestFitWhenTheCostIsEqual) {
  // A 3g at 4 costs either GPU 13 slot-weighted placements; GPU 1 is then
  // full, GPU 0 keeps three slots, and the fuller one wins.
  std::optional<SlicePick> pick =
      ChooseSlice({Gpu(0, Slots({0})), Gpu(1, Slots({0, 1, 2, 3}))}, Profile(H100(), "3g.40gb"));
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(pick->gpu, 1);
  EXPECT_EQ(pick->start, 4);
}

TEST(ChooseSlice, EmptyGpuWhenOnlyItFits) {
  std::optional<SlicePick> pick =
      ChooseSlice({Gpu(0, Slots({6})), Gpu(1, 0)}, Profile(H100(), "7g.80gb"));
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(pick->gpu, 1);
  EXPECT_EQ(pick->start, 0);
}

TEST(ChooseSlice, TiesGoToTheLowestGpuIndex) {
  std::optional<SlicePick> pick =
      ChooseSlice({Gpu(5, Slots({6})), Gpu(3, Slots({6}))}, Profile(H100(), "1g.10gb"));
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(pick->gpu, 3);
  EXPECT_EQ(pick->slot_index, 1u);
  pick = ChooseSlice({Gpu(0, 0), Gpu(1, 0), Gpu(2, 0)}, Profile(H100(), "1g.10gb"));
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(pick->gpu, 0);
  EXPECT_EQ(pick->start, 4);
}

TEST(ChooseSlice, UsesEachGpusOwnTable) {
  // "3g.71gb" exists on the H200 only; its ID and placement come from there.
  std::optional<SlicePick> pick =
      ChooseSlice({Gpu(0, 0, H100()), Gpu(1, Slots({0}), H200())}, Profile(H200(), "3g.71gb"));
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(pick->gpu, 1);
  EXPECT_EQ(pick->profile, core::FindProfile(H200(), "3g.71gb"));
  EXPECT_EQ(pick->start, 4);
}

TEST(ChooseSlice, SkipsGpusItCannotUse) {
  GpuSlots no_table = Gpu(0, 0);
  no_table.profiles = nullptr;
  const std::vector<core::MigProfile> empty;
  GpuSlots empty_table = Gpu(1, 0, empty);
  GpuSlots full = Gpu(2, kAllSlots);
  const core::MigProfile& one = Profile(H100(), "1g.10gb");
  EXPECT_EQ(ChooseSlice({no_table, empty_table, full}, one), std::nullopt);
  EXPECT_EQ(ChooseSlice({}, one), std::nullopt);
  core::MigProfile unknown = one;
  unknown.name = "1g.11gb";
  EXPECT_EQ(ChooseSlice({Gpu(0, 0)}, unknown), std::nullopt);
}

TEST(ChooseSlice, OneMediaProfilePerGpu) {
  GpuSlots taken = Gpu(0, Slots({6}));
  taken.media_extensions_taken = true;
  const core::MigProfile& media = Profile(H100(), "1g.10gb+me");
  std::optional<SlicePick> pick = ChooseSlice({taken, Gpu(1, 0)}, media);
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(pick->gpu, 1);
  EXPECT_EQ(ChooseSlice({taken}, media), std::nullopt);
  // The plain 1g still goes beside it.
  pick = ChooseSlice({taken, Gpu(1, 0)}, Profile(H100(), "1g.10gb"));
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(pick->gpu, 0);
}

// Every start the packing code hands out, for every occupancy of every
// built-in table, is one of the profile's starts and free, checked here
// without the code's own Footprint.
TEST(Starts, NeverOutsideTheProfilesStarts) {
  for (const char* model :
       {"NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "NVIDIA H200"}) {
    const std::vector<core::MigProfile>& table = *core::KnownMigProfiles(model);
    for (const core::MigProfile& profile : table) {
      for (int mask = 0; mask <= kAllSlots; ++mask) {
        const SlotMask used = SlotMask(mask);
        SCOPED_TRACE(absl::StrCat(model, " ", profile.name, " used=", mask));
        auto check = [&](std::optional<int> start) {
          if (!start) return;
          EXPECT_NE(std::find(profile.starts.begin(), profile.starts.end(), *start),
                    profile.starts.end());
          for (int slot = *start; slot < *start + profile.size; ++slot) {
            EXPECT_LT(slot, core::kMigMemorySlots);
            EXPECT_EQ(used & (1u << slot), 0u) << "slot " << slot;
          }
        };
        std::optional<int> first = FirstFitStart(profile, used);
        std::optional<int> best = BestStart(profile, used, table);
        check(first);
        check(best);
        EXPECT_EQ(first.has_value(), best.has_value());
        std::optional<SlicePick> pick = ChooseSlice({Gpu(0, used, table)}, profile);
        EXPECT_EQ(pick.has_value(), best.has_value());
        if (pick) {
          EXPECT_EQ(pick->start, *best);
          check(pick->start);
        }
      }
    }
  }
}

TEST(StrandedSlots, FreeSlotsNoPlacementReaches) {
  EXPECT_EQ(StrandedSlots(0, H100()), 0);
  EXPECT_EQ(StrandedSlots(kAllSlots, H100()), 0);
  // Seven 1g: slot 7 is free and only two-slot placements reach it.
  EXPECT_EQ(StrandedSlots(Slots({0, 1, 2, 3, 4, 5, 6}), H100()), 1);
  // 1g.20gb at 6 reaches 6 and 7.
  EXPECT_EQ(StrandedSlots(Slots({0, 1, 2, 3, 4, 5}), H100()), 0);
  // 2g at 0 and 2, 1g at 4: slot 5 is for a 1g, 6 and 7 for a 1g.20gb.
  EXPECT_EQ(StrandedSlots(Slots({0, 1, 2, 3, 4}), H100()), 0);
  // 1g at 6 and at 4..5 taken: slot 7 left alone.
  EXPECT_EQ(StrandedSlots(Slots({4, 5, 6}), H100()), 1);
  // Without 1g.20gb in the table, 6 and 7 are reachable only through 3g or 7g.
  std::vector<core::MigProfile> no_double;
  for (const core::MigProfile& p : H100()) {
    if (p.name != "1g.20gb") no_double.push_back(p);
  }
  EXPECT_EQ(StrandedSlots(Slots({0, 1, 2, 3, 4, 5}), no_double), 1);
  // Slot 7 under a 4g is out of play, not stranded.
  EXPECT_EQ(StrandedSlots(Footprint(Profile(H100(), "4g.40gb"), 0), H100()), 0);
  // With no table nothing reaches anything.
  EXPECT_EQ(StrandedSlots(Slots({0}), {}), 7);
}

TEST(ComputeSlicesOfName, ReadsTheLeadingCount) {
  EXPECT_THAT(ComputeSlicesOfName("3g.71gb"), Optional(3));
  EXPECT_THAT(ComputeSlicesOfName("MIG 1g.18gb+me"), Optional(1));
  EXPECT_THAT(ComputeSlicesOfName("7g.141gb"), Optional(7));
  EXPECT_EQ(ComputeSlicesOfName("8g.1gb"), std::nullopt);
  EXPECT_EQ(ComputeSlicesOfName("0g.1gb"), std::nullopt);
  EXPECT_EQ(ComputeSlicesOfName("12g.1gb"), std::nullopt);
  EXPECT_EQ(ComputeSlicesOfName("g.1gb"), std::nullopt);
  EXPECT_EQ(ComputeSlicesOfName("3"), std::nullopt);
  EXPECT_EQ(ComputeSlicesOfName(""), std::nullopt);
}

TEST(SlotsOf, FromTheGpusReport) {
  core::GpuMig mig;
  mig.enabled = true;
  mig.profiles = H200();
  mig.instances = {Instance("4g.71gb", 0, 4), Instance("1g.18gb+me", 4, 1)};
  GpuSlots slots = SlotsOf(2, mig);
  EXPECT_EQ(slots.gpu, 2);
  EXPECT_EQ(slots.used, Slots({0, 1, 2, 3, 4, 7}));
  EXPECT_EQ(slots.free_compute_slices, 2);
  EXPECT_TRUE(slots.media_extensions_taken);
  EXPECT_EQ(slots.profiles, &mig.profiles);
}

TEST(SlotsOf, InstancesOfProfilesTheTableLacks) {
  core::GpuMig mig;
  // No table yet: the compute slices come from the names, else the size.
  mig.instances = {Instance("4g.71gb", 0, 4), Instance("odd", 5, 2), Instance("2g.35gb", 6, 4)};
  EXPECT_EQ(UsedSlots(mig), Slots({0, 1, 2, 3, 5, 6, 7}));
  EXPECT_EQ(FreeComputeSlices(mig), 0);  // 4 + 2 + 2, never below 0.
  mig.instances = {Instance("3g.71gb", 4, 4)};
  EXPECT_EQ(UsedSlots(mig), Slots({4, 5, 6, 7}));
  EXPECT_EQ(FreeComputeSlices(mig), 4);
  mig.instances.clear();
  EXPECT_EQ(UsedSlots(mig), 0);
  EXPECT_EQ(FreeComputeSlices(mig), core::kMigComputeSlices);
}

TEST(WhyNoSlice, ThreeComputeSlicesFreeButNoStartForA3g) {
  core::GpuMig mig;
  mig.profiles = H200();
  mig.instances = {Instance("4g.71gb", 0, 4)};
  GpuSlots slots = SlotsOf(2, mig);
  std::optional<SliceShortfall> why = WhyNoSlice(slots, Profile(H200(), "3g.71gb"));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->gpu, 2);
  EXPECT_EQ(why->profile, "3g.71gb");
  EXPECT_EQ(why->free_compute_slices, 3);
  EXPECT_EQ(why->wanted_compute_slices, 3);
  EXPECT_EQ(why->free_slots, 3);
  EXPECT_FALSE(why->too_few_compute_slices);
  EXPECT_FALSE(why->profile_unknown);
  EXPECT_FALSE(why->media_extensions_taken);
  EXPECT_THAT(why->legal_starts, ElementsAre(0, 4));
  // A 2g fits beside the 4g: no shortfall.
  EXPECT_EQ(WhyNoSlice(slots, Profile(H200(), "2g.35gb")), std::nullopt);
}

TEST(WhyNoSlice, TooFewComputeSlices) {
  core::GpuMig mig;
  mig.profiles = H100();
  mig.instances = {Instance("3g.40gb", 0, 4), Instance("3g.40gb", 4, 4)};
  std::optional<SliceShortfall> why = WhyNoSlice(SlotsOf(0, mig), Profile(H100(), "1g.10gb"));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->free_compute_slices, 1);
  EXPECT_EQ(why->free_slots, 0);
  EXPECT_FALSE(why->too_few_compute_slices);  // One is free; the slots are not.
  why = WhyNoSlice(SlotsOf(0, mig), Profile(H100(), "2g.20gb"));
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(why->too_few_compute_slices);
}

TEST(WhyNoSlice, MediaEnginesInUseAndUnknownProfiles) {
  core::GpuMig mig;
  mig.profiles = H100();
  mig.instances = {Instance("1g.10gb+me", 6, 1)};
  GpuSlots slots = SlotsOf(0, mig);
  std::optional<SliceShortfall> why = WhyNoSlice(slots, Profile(H100(), "1g.10gb+me"));
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(why->media_extensions_taken);
  EXPECT_EQ(WhyNoSlice(slots, Profile(H100(), "1g.10gb")), std::nullopt);
  why = WhyNoSlice(slots, Profile(H200(), "1g.18gb"));
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(why->profile_unknown);
  slots.profiles = nullptr;
  why = WhyNoSlice(slots, Profile(H100(), "1g.10gb"));
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(why->profile_unknown);
}

// ---- Every arrival order of a small mixed workload on two GPUs ----

using Chooser = std::optional<SlicePick> (*)(const std::vector<GpuSlots>&, const core::MigProfile&);

// The baseline: the first GPU with a free legal start, at its lowest one.
std::optional<SlicePick> FirstFit(const std::vector<GpuSlots>& gpus, const core::MigProfile& want) {
  for (size_t i = 0; i < gpus.size(); ++i) {
    const core::MigProfile* profile = core::FindProfile(*gpus[i].profiles, want.name);
    if (profile == nullptr) continue;
    if (gpus[i].media_extensions_taken && absl::StrContains(profile->name, "+me")) continue;
    if (std::optional<int> start = FirstFitStart(*profile, gpus[i].used)) {
      return SlicePick{gpus[i].gpu, i, *start, profile, Footprint(*profile, *start)};
    }
  }
  return std::nullopt;
}

struct Totals {
  int placed = 0;
  int stranded = 0;
  int violations = 0;
  std::string first_violation;
};

// Places `order` on `gpu_count` empty GPUs with `choose` and checks each
// placement on its own terms, not with the packing code: a legal start, the
// memory slots inside the GPU and shared with no other instance, never a 4g
// beside a 3g.
void PlaceInOrder(const std::vector<core::MigProfile>& table, const std::vector<std::string>& order,
                  Chooser choose, int gpu_count, Totals& totals) {
  struct Held {
    int start, size, compute;
  };
  std::vector<GpuSlots> gpus;
  std::vector<std::vector<Held>> held(gpu_count);
  for (int g = 0; g < gpu_count; ++g) gpus.push_back(Gpu(g, 0, table));
  auto violation = [&](const std::string& what) {
    if (totals.violations++ == 0) totals.first_violation = what;
  };
  for (const std::string& name : order) {
    const core::MigProfile& want = Profile(table, name);
    std::optional<SlicePick> pick = choose(gpus, want);
    if (!pick) continue;
    const int start = pick->start, size = want.size;
    if (std::find(want.starts.begin(), want.starts.end(), start) == want.starts.end() ||
        start < 0 || start + size > core::kMigMemorySlots) {
      violation(absl::StrCat(name, " at illegal start ", start));
    }
    for (const Held& other : held[pick->slot_index]) {
      if (start < other.start + other.size && other.start < start + size) {
        violation(absl::StrCat(name, " at ", start, " overlaps an instance at ", other.start));
      }
      if ((want.compute_slices == 4 && other.compute == 3) ||
          (want.compute_slices == 3 && other.compute == 4)) {
        violation(absl::StrCat(name, " beside a ", other.compute, "g"));
      }
    }
    held[pick->slot_index].push_back({start, size, want.compute_slices});
    GpuSlots& gpu = gpus[pick->slot_index];
    gpu.used |= pick->footprint;
    if (absl::StrContains(name, "+me")) gpu.media_extensions_taken = true;
    ++totals.placed;
  }
  for (const GpuSlots& gpu : gpus) totals.stranded += StrandedSlots(gpu.used, table);
}

// Runs every order (n! of them, equal names included) with both choosers.
void CompareOverEveryOrder(const std::string& label, const std::vector<core::MigProfile>& table,
                           const std::vector<std::string>& workload) {
  std::vector<int> order(workload.size());
  std::iota(order.begin(), order.end(), 0);
  Totals smart, first_fit;
  int orders = 0;
  do {
    std::vector<std::string> names;
    for (int i : order) names.push_back(workload[i]);
    PlaceInOrder(table, names, &ChooseSlice, 2, smart);
    PlaceInOrder(table, names, &FirstFit, 2, first_fit);
    ++orders;
  } while (std::next_permutation(order.begin(), order.end()));

  std::cout << label << ", " << orders << " orders on 2 GPUs: ChooseSlice placed " << smart.placed
            << " and stranded " << smart.stranded << " slots; first fit placed " << first_fit.placed
            << " and stranded " << first_fit.stranded << "\n";
  ::testing::Test::RecordProperty("orders", orders);
  ::testing::Test::RecordProperty("choose_slice_placed", smart.placed);
  ::testing::Test::RecordProperty("choose_slice_stranded", smart.stranded);
  ::testing::Test::RecordProperty("first_fit_placed", first_fit.placed);
  ::testing::Test::RecordProperty("first_fit_stranded", first_fit.stranded);

  EXPECT_EQ(smart.violations, 0) << smart.first_violation;
  EXPECT_EQ(first_fit.violations, 0) << first_fit.first_violation;
  EXPECT_GE(smart.placed, first_fit.placed);
  EXPECT_LT(smart.stranded, first_fit.stranded);
}

TEST(EveryOrder, H100ThreeGTwoTwoGsFourOneGs) {
  CompareOverEveryOrder(
      "H100 {3g, 2g, 2g, 1g, 1g, 1g, 1g}", H100(),
      {"3g.40gb", "2g.20gb", "2g.20gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"});
}

TEST(EveryOrder, H200WithAFourGAndA1g35gb) {
  CompareOverEveryOrder(
      "H200 {4g, 3g, 2g, 1g.35gb, 1g, 1g, 1g}", H200(),
      {"4g.71gb", "3g.71gb", "2g.35gb", "1g.35gb", "1g.18gb", "1g.18gb", "1g.18gb"});
}

}  // namespace
}  // namespace wsched::placement
