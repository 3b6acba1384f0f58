#include "server/core/mig_layout.h"

#include <algorithm>
#include <bit>
#include <set>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/core/mig_profiles.h"

namespace wsched::core {
namespace {

MigSlotMask SlotRange(int start, int size) {
  if (size <= 0 || start >= kMigMemorySlots) return 0;
  const int64_t end = std::min<int64_t>(int64_t{start} + size, kMigMemorySlots);
  MigSlotMask mask = 0;
  for (int64_t slot = std::max(start, 0); slot < end; ++slot) mask |= MigSlotMask(1u << slot);
  return mask;
}

// What an instance of `profile` at `start` takes; 0 when it leaves the slots.
MigSlotMask Footprint(const MigProfile& profile, int start) {
  if (profile.size < 1 || start < 0 || start > kMigMemorySlots - profile.size) return 0;
  return MigSlotsTaken(profile.compute_slices, start, profile.size);
}

// The lowest starts that hold the first `count` profiles, by a depth-first
// search over starts in ascending order: the first arrangement found is the
// one with the lowest start for each profile in turn. States (next profile,
// taken slots, media engines taken) that led nowhere are remembered, so the
// search visits each at most once.
class StartSearch {
 public:
  StartSearch(const std::vector<const MigProfile*>& profiles, size_t count)
      : profiles_(profiles), count_(count), starts_(count, -1) {}

  std::optional<std::vector<int>> Run() {
    if (!Place(0, 0, false)) return std::nullopt;
    return starts_;
  }

 private:
  bool Place(size_t i, MigSlotMask used, bool media_taken) {
    if (i == count_) return true;
    const auto state = std::make_tuple(i, used, media_taken);
    if (dead_ends_.count(state) > 0) return false;
    const MigProfile& profile = *profiles_[i];
    const bool media = UsesAllMediaEngines(profile.name);
    if (!(media && media_taken)) {
      std::vector<int> starts = profile.starts;
      std::sort(starts.begin(), starts.end());
      for (int start : starts) {
        const MigSlotMask footprint = Footprint(profile, start);
        if (footprint == 0 || (footprint & used) != 0) continue;
        starts_[i] = start;
        if (Place(i + 1, used | footprint, media_taken || media)) return true;
      }
    }
    dead_ends_.insert(state);
    return false;
  }

  const std::vector<const MigProfile*>& profiles_;
  size_t count_;
  std::vector<int> starts_;
  std::set<std::tuple<size_t, MigSlotMask, bool>> dead_ends_;
};

std::string StartsText(const MigProfile& profile) {
  std::vector<int> starts = profile.starts;
  std::sort(starts.begin(), starts.end());
  if (starts.size() == 1) return absl::StrCat("start ", starts[0]);
  return absl::StrCat("starts ", absl::StrJoin(starts, ", "));
}

// Why profiles[i] cannot join profiles[0..i), which `starts` lay out.
std::string Unplaceable(const std::vector<const MigProfile*>& profiles, size_t i,
                        const std::vector<int>& starts) {
  const MigProfile& misfit = *profiles[i];
  MigSlotMask before = 0;  // The same count in every arrangement: sizes, and a 4g's slot 7.
  bool three_before = false;
  bool four_before = false;
  for (size_t k = 0; k < i; ++k) {
    before |= Footprint(*profiles[k], starts[k]);
    three_before = three_before || profiles[k]->compute_slices == 3;
    four_before = four_before || profiles[k]->compute_slices == 4;
  }
  const int slots_before = std::popcount(before);
  std::string reason = absl::StrCat(
      "no legal start is left for ", misfit.name, " beside the ", i,
      i == 1 ? " profile" : " profiles", " before it, however they are arranged (", misfit.name,
      " takes ", misfit.size, misfit.size == 1 ? " slot" : " slots", " at ", StartsText(misfit),
      "; the ones before it take ", slots_before, " of the ", kMigMemorySlots, " memory slots)");
  if ((misfit.compute_slices == 3 && four_before) || (misfit.compute_slices == 4 && three_before)) {
    absl::StrAppend(&reason, "; NVIDIA's valid MIG combinations never pair a 4g with a 3g");
  }
  return reason;
}

}  // namespace

MigSlotMask MigSlotsTaken(int compute_slices, int start, int size) {
  MigSlotMask taken = SlotRange(start, size);
  // NVIDIA's valid combinations never put a 3g beside a 4g (mig_layout.h).
  if (compute_slices == 4 && start == 0 && size == 4) {
    taken |= MigSlotMask(1u << (kMigMemorySlots - 1));
  }
  return taken;
}

MigLayoutPlan LayOutMig(const std::vector<MigProfile>& table,
                        const std::vector<std::string>& profiles) {
  MigLayoutPlan plan;
  std::vector<const MigProfile*> found;
  std::vector<int> starts;  // Of `found`, once they are laid out.
  const MigProfile* media_holder = nullptr;
  int compute_slices = 0;
  for (size_t i = 0; i < profiles.size(); ++i) {
    const MigProfile* profile = FindProfile(table, profiles[i]);
    if (profile == nullptr) {
      plan.misfit = {i, absl::StrCat(profiles[i], " is not a profile of this GPU's table")};
      return plan;
    }
    if (UsesAllMediaEngines(profile->name) && media_holder != nullptr) {
      plan.misfit = {i, absl::StrCat(profile->name, " takes all of the GPU's media engines, as ",
                                     media_holder->name, " before it does: one per GPU")};
      return plan;
    }
    if (UsesAllMediaEngines(profile->name)) media_holder = profile;
    compute_slices += profile->compute_slices;
    if (compute_slices > kMigComputeSlices) {
      plan.misfit = {i, absl::StrCat(profile->name, " brings the compute slices to ",
                                     compute_slices, "; a GPU has ", kMigComputeSlices)};
      return plan;
    }
    found.push_back(profile);
    std::optional<std::vector<int>> laid_out = StartSearch(found, found.size()).Run();
    if (!laid_out) {
      plan.misfit = {i, Unplaceable(found, i, starts)};
      return plan;
    }
    starts = *std::move(laid_out);
  }
  for (size_t i = 0; i < found.size(); ++i) plan.slices.push_back({found[i]->name, starts[i]});
  return plan;
}

bool UsesAllMediaEngines(absl::string_view profile) {
  return absl::StrContains(absl::AsciiStrToLower(profile), "+me");
}

const MigProfile* SmallestMigProfile(const std::vector<MigProfile>& table) {
  const MigProfile* smallest = nullptr;
  for (const MigProfile& profile : table) {
    if (UsesAllMediaEngines(profile.name) || profile.compute_slices < 1 || profile.size < 1) {
      continue;
    }
    if (smallest == nullptr || std::pair(profile.compute_slices, profile.size) <
                                   std::pair(smallest->compute_slices, smallest->size)) {
      smallest = &profile;
    }
  }
  return smallest;
}

std::vector<std::string> StartingMigProfiles(const MigLayout& layout,
                                             const std::vector<MigProfile>& table) {
  if (layout.kind == MigLayoutKind::kWhole) return {};
  if (!layout.profiles.empty()) return layout.profiles;
  if (layout.kind != MigLayoutKind::kByDemand) return {};
  const MigProfile* smallest = SmallestMigProfile(table);
  if (smallest == nullptr) return {};
  std::vector<std::string> profiles;
  while (static_cast<int>(profiles.size()) < kMigMemorySlots) {
    profiles.push_back(smallest->name);
    if (!LayOutMig(table, profiles).legal()) {
      profiles.pop_back();
      break;
    }
  }
  return profiles;
}

}  // namespace wsched::core
