#include "server/placement/relayout_plan.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "server/core/mig_layout.h"
#include "server/core/mig_profiles.h"
#include "server/placement/filters.h"
#include "server/placement/mig_packing.h"
#include "server/placement/resources.h"

namespace wsched::placement {
namespace {

// A GPU has at most seven slices: one order never serves more workspaces.
constexpr size_t kMaxSlicesPerGpu = core::kMigComputeSlices;

bool ByDemand(const core::NodePool& pool) {
  return pool.mig.kind == core::MigLayoutKind::kByDemand;
}

bool PlanHasByDemand(const PoolPlan& plan) {
  for (const auto& tier : plan.tiers) {
    if (std::any_of(tier.begin(), tier.end(), [](const auto* p) { return ByDemand(*p); })) {
      return true;
    }
  }
  return false;
}

// Slices per (pool, profile) as the queue hands them out, in order: the
// free ones, then those the re-layouts under way will make.
class SliceLedger {
 public:
  SliceLedger(const Snapshot& snapshot, const std::vector<RelayoutOrder>& under_way)
      : snapshot_(snapshot) {
    for (const RelayoutOrder& order : under_way) {
      for (const PlannedSlice& slice : order.layout) ++coming_[{order.pool, slice.profile}];
    }
  }

  bool TakeFree(const core::WorkspaceClass& cls, const PoolPlan& plan) {
    return Take(cls, plan, [this](const Key& key) -> int64_t& { return Free(key); });
  }
  bool TakeComing(const core::WorkspaceClass& cls, const PoolPlan& plan) {
    return Take(cls, plan, [this](const Key& key) -> int64_t& { return coming_[key]; });
  }

  // The free slices of the profile in the pool that the queue leaves: a GPU
  // whose free slices the workspaces ahead count on is not cut under them
  // (its slices are out of play while it is cut, even the ones it keeps).
  int64_t Spare(const std::string& pool, const std::string& profile) {
    return Free({pool, profile});
  }
  void Lose(const std::string& pool, const std::string& profile, int64_t count) {
    Free({pool, profile}) -= count;
  }

 private:
  using Key = std::pair<std::string, std::string>;  // (pool, profile)

  int64_t& Free(const Key& key) {
    auto [it, added] = free_.try_emplace(key, 0);
    if (added) {
      if (const SliceIndex* index = snapshot_.ReadySlices(key.first)) {
        it->second = index->TotalFree(key.second);
      }
    }
    return it->second;
  }

  // One slice for the class where Decide would look: its tiers in order,
  // each tier's profiles in the class's order, each over the tier's pools.
  template <typename Count>
  bool Take(const core::WorkspaceClass& cls, const PoolPlan& plan, Count count) {
    for (const auto& tier : plan.tiers) {
      for (const std::string& profile : cls.gpu.mig_profiles) {
        for (const core::NodePool* pool : tier) {
          int64_t& left = count({pool->id, profile});
          if (left > 0) {
            --left;
            return true;
          }
        }
      }
    }
    return false;
  }

  const Snapshot& snapshot_;
  std::map<Key, int64_t> free_;
  std::map<Key, int64_t> coming_;
};

// A pending workspace that neither a free slice nor a re-layout under way
// serves.
struct Unmet {
  const core::WorkspaceClass* cls = nullptr;
  PoolPlan plan;
  bool served = false;
};

// Whether the GPU at `pos` may be cut anew (the rules in the header).
bool Idle(const SnapshotNode& node, size_t pos) {
  const core::Gpu& gpu = node.info.gpus[pos];
  const SnapshotGpu& state = node.gpus[pos];
  if (!gpu.healthy || !state.holder.empty() || state.relayout || !gpu.mig) return false;
  const core::GpuMig& mig = *gpu.mig;
  if (!mig.enabled || !mig.pending_enabled || mig.profiles.empty()) return false;
  return std::all_of(state.slice_holders.begin(), state.slice_holders.end(),
                     [](const std::string& holder) { return holder.empty(); });
}

struct IdleGpu {
  const SnapshotNode* node = nullptr;
  size_t pos = 0;
  int node_free_slices = 0;
};

int TotalFreeSlices(const SnapshotNode& node) {
  int total = 0;
  for (const auto& [profile, count] : node.free_slices) total += count;
  return total;
}

bool Usable(const core::MigInstance& slice) {
  return slice.compute_instance >= 0 && !slice.uuid.empty();
}

// The slots an existing instance takes, judged with the GPU's table.
SlotMask FootprintOf(const core::MigInstance& instance,
                     const std::vector<core::MigProfile>& table) {
  const core::MigProfile* profile = core::FindProfile(table, instance.profile);
  const int compute = profile != nullptr ? profile->compute_slices
                                         : ComputeSlicesOfName(instance.profile).value_or(1);
  return SlotsTaken(compute, instance.start, instance.size);
}

// A GPU's new layout as it is built, slice by slice, always legal.
class LayoutBuilder {
 public:
  explicit LayoutBuilder(const std::vector<core::MigProfile>& table) : table_(table) {}

  // Within the seven compute slices, and one "+me" profile at most.
  bool Fits(const core::MigProfile& profile) const {
    return compute_ + profile.compute_slices <= core::kMigComputeSlices &&
           !(media_taken_ && UsesAllMediaEngines(profile.name));
  }
  bool CanAdd(const core::MigProfile& profile, int start) const {
    return Fits(profile) && CanPlaceAt(profile, start, used_);
  }
  void Add(const core::MigProfile& profile, int start) {
    used_ |= Footprint(profile, start);
    compute_ += profile.compute_slices;
    media_taken_ = media_taken_ || UsesAllMediaEngines(profile.name);
    slices_.push_back({profile.name, start});
  }
  // BestStart's start when the profile fits.
  std::optional<int> BestFreeStart(const core::MigProfile& profile) const {
    if (!Fits(profile)) return std::nullopt;
    return BestStart(profile, used_, table_);
  }

  SlotMask used() const { return used_; }
  std::vector<PlannedSlice> Take() {
    std::sort(slices_.begin(), slices_.end(),
              [](const PlannedSlice& a, const PlannedSlice& b) { return a.start < b.start; });
    return std::move(slices_);
  }

 private:
  const std::vector<core::MigProfile>& table_;
  SlotMask used_ = 0;
  int compute_ = 0;
  bool media_taken_ = false;
  std::vector<PlannedSlice> slices_;
};

struct NewLayout {
  std::vector<PlannedSlice> slices;
  std::vector<bool> demand_placed;  // Parallel to the demand.
  int stranded = 0;                 // Free slots no profile can use.
  int lost = 0;                     // Usable slices of the GPU not made again.
};

// The start for a demanded slice: the legal free one that overlaps the
// fewest of the GPU's slices (so most are kept), then strands the fewest
// slots, then the lowest.
std::optional<int> DemandStart(const LayoutBuilder& layout, const core::MigProfile& profile,
                               const std::vector<SlotMask>& existing,
                               const std::vector<core::MigProfile>& table) {
  std::optional<std::tuple<int, int, int>> best;
  for (int start : profile.starts) {
    if (!layout.CanAdd(profile, start)) continue;
    const SlotMask footprint = Footprint(profile, start);
    const int overlapped =
        static_cast<int>(std::count_if(existing.begin(), existing.end(),
                                       [&](SlotMask taken) { return (taken & footprint) != 0; }));
    const auto key =
        std::make_tuple(overlapped, StrandedSlots(layout.used() | footprint, table), start);
    if (!best || key < *best) best = key;
  }
  if (!best) return std::nullopt;
  return std::get<2>(*best);
}

// The GPU's new layout for `demand` (profile names, the first the one it is
// ordered for) with the first slice at `first_start`; nullopt when it cannot
// go there.
std::optional<NewLayout> LayOutFrom(const core::GpuMig& mig, const std::vector<std::string>& demand,
                                    const std::vector<std::string>& starting, int first_start) {
  const std::vector<core::MigProfile>& table = mig.profiles;
  std::vector<SlotMask> existing;
  for (const core::MigInstance& instance : mig.instances) {
    existing.push_back(FootprintOf(instance, table));
  }
  LayoutBuilder layout(table);
  NewLayout result;
  result.demand_placed.assign(demand.size(), false);
  for (size_t i = 0; i < demand.size(); ++i) {
    const core::MigProfile* profile = core::FindProfile(table, demand[i]);
    if (profile == nullptr) continue;
    std::optional<int> start =
        i == 0 ? std::optional<int>(first_start) : DemandStart(layout, *profile, existing, table);
    if (!start || !layout.CanAdd(*profile, *start)) {
      if (i == 0) return std::nullopt;
      continue;
    }
    layout.Add(*profile, *start);
    result.demand_placed[i] = true;
  }
  // Keep what does not stand in the demand's way, where it is.
  for (const core::MigInstance& instance : mig.instances) {
    const core::MigProfile* profile = core::FindProfile(table, instance.profile);
    if (profile != nullptr && layout.CanAdd(*profile, instance.start)) {
      layout.Add(*profile, instance.start);
    }
  }
  for (const std::string& name : starting) {
    const core::MigProfile* profile = core::FindProfile(table, name);
    if (profile == nullptr) continue;
    if (std::optional<int> start = layout.BestFreeStart(*profile)) layout.Add(*profile, *start);
  }
  if (const core::MigProfile* smallest = core::SmallestMigProfile(table)) {
    while (std::optional<int> start = layout.BestFreeStart(*smallest)) {
      layout.Add(*smallest, *start);
    }
  }
  result.stranded = StrandedSlots(layout.used(), table);
  result.slices = layout.Take();
  for (const core::MigInstance& instance : mig.instances) {
    if (!Usable(instance)) continue;
    const core::MigProfile* profile = core::FindProfile(table, instance.profile);
    const std::string name = profile != nullptr ? profile->name : instance.profile;
    const PlannedSlice same{name, instance.start};
    if (std::find(result.slices.begin(), result.slices.end(), same) == result.slices.end()) {
      ++result.lost;
    }
  }
  return result;
}

// The GPU's best new layout for `demand`: every legal start of the first
// slice is tried (a greedy first choice strands what a later one would
// not: a 3g at 0 on an empty H200 leaves slot 7 to nothing, at 4 it does
// not); the fewest stranded slots, then the fewest slices lost, then the
// lowest start. nullopt when the first slice fits nowhere.
std::optional<NewLayout> LayOut(const core::GpuMig& mig, const std::vector<std::string>& demand,
                                const std::vector<std::string>& starting) {
  const core::MigProfile* first = core::FindProfile(mig.profiles, demand.front());
  if (first == nullptr) return std::nullopt;
  std::optional<NewLayout> best;
  for (int start : first->starts) {
    std::optional<NewLayout> layout = LayOutFrom(mig, demand, starting, start);
    if (layout && (!best || std::pair(layout->stranded, layout->lost) <
                                std::pair(best->stranded, best->lost))) {
      best = std::move(layout);
    }
  }
  return best;
}

// The first of the class's profiles the table has; empty when none.
std::string FirstProfileIn(const core::WorkspaceClass& cls,
                           const std::vector<core::MigProfile>& table) {
  for (const std::string& profile : cls.gpu.mig_profiles) {
    if (const core::MigProfile* found = core::FindProfile(table, profile)) return found->name;
  }
  return "";
}

// The GPU's usable free slices, per profile.
std::map<std::string, int64_t> FreeSlicesOn(const SnapshotNode& node, size_t pos) {
  std::map<std::string, int64_t> free;
  const std::vector<core::MigInstance>& slices = node.info.gpus[pos].mig->instances;
  for (size_t k = 0; k < slices.size(); ++k) {
    if (node.SliceUsable(static_cast<int>(pos), k)) ++free[slices[k].profile];
  }
  return free;
}

class Planner {
 public:
  Planner(const RelayoutInputs& in, SliceLedger& ledger, std::vector<Unmet> unmet)
      : in_(in), ledger_(ledger), unmet_(std::move(unmet)) {
    for (const RelayoutOrder& order : in.under_way) busy_nodes_.insert(order.node);
    for (size_t u = 0; u < unmet_.size(); ++u) {
      for (const auto& tier : unmet_[u].plan.tiers) {
        for (const core::NodePool* pool : tier) {
          if (!ByDemand(*pool)) continue;
          std::vector<size_t>& wanting = unmet_by_pool_[pool->id];
          if (wanting.empty() || wanting.back() != u) wanting.push_back(u);
        }
      }
    }
    FindIdleGpus();
  }

  std::vector<RelayoutOrder> Plan() {
    std::vector<RelayoutOrder> orders;
    for (size_t u = 0; u < unmet_.size(); ++u) {
      if (static_cast<int>(orders.size()) >= in_.limits.max_orders) break;
      if (unmet_[u].served) continue;
      if (std::optional<RelayoutOrder> order = OrderFor(u)) orders.push_back(*std::move(order));
    }
    return orders;
  }

 private:
  struct Choice {
    std::tuple<int, int, int, std::string, int> key;  // Smaller is better.
    const IdleGpu* gpu = nullptr;
    const core::NodePool* pool = nullptr;
    std::vector<size_t> served;  // Indices into unmet_.
    NewLayout layout;
    std::string for_profile;  // As the GPU's table names it.
  };

  // One walk over the nodes, stopping at max_gpus idle GPUs.
  void FindIdleGpus() {
    int found = 0;
    in_.snapshot->ForEachNode([&](const SnapshotNode& node) {
      if (found >= in_.limits.max_gpus || !node.schedulable) return;
      if (!unmet_by_pool_.contains(node.info.pool) || busy_nodes_.contains(node.info.name)) return;
      for (size_t pos = 0; pos < node.gpus.size() && found < in_.limits.max_gpus; ++pos) {
        if (!Idle(node, pos)) continue;
        idle_[node.info.pool].push_back({&node, pos, TotalFreeSlices(node)});
        ++found;
      }
    });
  }

  // The workspaces one GPU of `pool` on `node` would serve, `first` first:
  // later unmet workspaces that may use the pool, each with the first of
  // its profiles the table has, while the node's CPU and memory cover them.
  std::vector<std::pair<size_t, std::string>> DemandOn(size_t first, const std::string& profile,
                                                       const core::NodePool& pool,
                                                       const SnapshotNode& node,
                                                       const std::vector<core::MigProfile>& table) {
    std::vector<std::pair<size_t, std::string>> demand = {{first, profile}};
    Resources wanted = RequestOf(*unmet_[first].cls);
    const std::vector<size_t>& wanting = unmet_by_pool_[pool.id];
    for (auto it = std::upper_bound(wanting.begin(), wanting.end(), first);
         it != wanting.end() && demand.size() < kMaxSlicesPerGpu; ++it) {
      const Unmet& other = unmet_[*it];
      if (other.served) continue;
      std::string name = FirstProfileIn(*other.cls, table);
      if (name.empty()) continue;
      Resources with = wanted;
      with += RequestOf(*other.cls);
      if (!Covers(node.free, with)) continue;
      wanted = with;
      demand.emplace_back(*it, std::move(name));
    }
    return demand;
  }

  std::optional<Choice> Consider(size_t u, const std::string& profile, const core::NodePool& pool,
                                 const IdleGpu& gpu) {
    const SnapshotNode& node = *gpu.node;
    if (ordered_nodes_.contains(node.info.name)) return std::nullopt;
    if (!Covers(node.free, RequestOf(*unmet_[u].cls))) return std::nullopt;
    for (const auto& [name, count] : FreeSlicesOn(node, gpu.pos)) {
      if (ledger_.Spare(pool.id, name) < count) return std::nullopt;
    }
    const core::GpuMig& mig = *node.info.gpus[gpu.pos].mig;
    const core::MigProfile* wanted = core::FindProfile(mig.profiles, profile);
    if (wanted == nullptr) return std::nullopt;
    std::vector<std::pair<size_t, std::string>> demand =
        DemandOn(u, wanted->name, pool, node, mig.profiles);
    std::vector<std::string> names;
    for (const auto& [index, name] : demand) names.push_back(name);
    std::optional<NewLayout> layout = LayOut(mig, names, pool.mig.profiles);
    if (!layout) return std::nullopt;
    Choice choice;
    choice.key = {layout->stranded, layout->lost, gpu.node_free_slices, node.info.name,
                  node.info.gpus[gpu.pos].index};
    choice.gpu = &gpu;
    choice.pool = &pool;
    for (size_t i = 0; i < demand.size(); ++i) {
      if (layout->demand_placed[i]) choice.served.push_back(demand[i].first);
    }
    choice.layout = *std::move(layout);
    choice.for_profile = wanted->name;
    return choice;
  }

  // The best GPU for unmet workspace `u`: its tiers in order, each tier's
  // profiles in the class's order, the best GPU over the tier's pools.
  std::optional<RelayoutOrder> OrderFor(size_t u) {
    const Unmet& want = unmet_[u];
    for (const auto& tier : want.plan.tiers) {
      for (const std::string& profile : want.cls->gpu.mig_profiles) {
        std::optional<Choice> best;
        for (const core::NodePool* pool : tier) {
          if (!ByDemand(*pool)) continue;
          auto idle = idle_.find(pool->id);
          if (idle == idle_.end()) continue;
          for (const IdleGpu& gpu : idle->second) {
            std::optional<Choice> choice = Consider(u, profile, *pool, gpu);
            if (choice && (!best || choice->key < best->key)) best = std::move(choice);
          }
        }
        if (best) return Order(*std::move(best));
      }
    }
    return std::nullopt;
  }

  RelayoutOrder Order(Choice choice) {
    const SnapshotNode& node = *choice.gpu->node;
    for (size_t index : choice.served) unmet_[index].served = true;
    for (const auto& [name, count] : FreeSlicesOn(node, choice.gpu->pos)) {
      ledger_.Lose(choice.pool->id, name, count);
    }
    ordered_nodes_.insert(node.info.name);
    RelayoutOrder order;
    order.node = node.info.name;
    order.pool = choice.pool->id;
    order.gpu_index = node.info.gpus[choice.gpu->pos].index;
    order.layout = std::move(choice.layout.slices);
    order.for_profile = std::move(choice.for_profile);
    order.ordered_at = in_.now;
    return order;
  }

  const RelayoutInputs& in_;
  SliceLedger& ledger_;
  std::vector<Unmet> unmet_;
  absl::flat_hash_set<std::string> busy_nodes_;     // Under way before this call.
  absl::flat_hash_set<std::string> ordered_nodes_;  // Given an order in this call.
  // By pool: the unmet workspaces that may use it, ascending.
  absl::flat_hash_map<std::string, std::vector<size_t>> unmet_by_pool_;
  absl::flat_hash_map<std::string, std::vector<IdleGpu>> idle_;  // By pool.
};

std::string ProfileName(absl::string_view name) {
  return std::string(absl::StripPrefix(name, "MIG "));
}

// The GPU has exactly `layout`, every slice usable.
bool HasLayout(const core::GpuMig& mig, const std::vector<PlannedSlice>& layout) {
  if (mig.instances.size() != layout.size()) return false;
  for (const PlannedSlice& slice : layout) {
    const bool found = std::any_of(
        mig.instances.begin(), mig.instances.end(), [&](const core::MigInstance& instance) {
          return Usable(instance) && instance.start == slice.start &&
                 ProfileName(instance.profile) == ProfileName(slice.profile);
        });
    if (!found) return false;
  }
  return true;
}

// Who holds something on the GPU at `pos`; empty when nobody.
std::string HolderOn(const SnapshotNode& node, int pos) {
  if (!node.gpus[pos].holder.empty()) return node.gpus[pos].holder;
  for (const std::string& holder : node.gpus[pos].slice_holders) {
    if (!holder.empty()) return holder;
  }
  return "";
}

RelayoutStatus Dropped(std::string why) { return {RelayoutProgress::kDropped, std::move(why)}; }

}  // namespace

std::vector<RelayoutOrder> PlanRelayouts(const RelayoutInputs& in) {
  SliceLedger ledger(*in.snapshot, in.under_way);
  std::vector<Unmet> unmet;
  for (const core::WorkspaceClass* cls : in.pending) {
    if (cls == nullptr || !cls->is_slice()) continue;
    PoolPlan plan = PlanPools(*cls, *in.pools);
    if (ledger.TakeFree(*cls, plan) || ledger.TakeComing(*cls, plan)) continue;
    if (PlanHasByDemand(plan)) unmet.push_back({cls, std::move(plan)});
  }
  // The common case costs a pass over the queue and nothing more.
  if (unmet.empty() || in.limits.max_orders <= 0) return {};
  return Planner(in, ledger, std::move(unmet)).Plan();
}

RelayoutStatus ProgressOf(const RelayoutOrder& order, const Snapshot& snapshot,
                          const std::vector<core::NodePool>& pools, absl::Time now,
                          absl::Duration give_up_after) {
  const std::string gpu_text = absl::StrCat("GPU ", order.gpu_index, " on node ", order.node);
  const SnapshotNode* node = snapshot.FindNode(order.node);
  if (node == nullptr) return Dropped(absl::StrCat("node ", order.node, " is gone"));
  if (node->state != core::NodeState::kReady) {
    return Dropped(absl::StrCat("node ", order.node, " is ", core::NodeStateName(node->state)));
  }
  auto pool = std::find_if(pools.begin(), pools.end(),
                           [&](const core::NodePool& p) { return p.id == node->info.pool; });
  if (pool == pools.end() || !ByDemand(*pool)) {
    return Dropped(absl::StrCat("pool ", node->info.pool, " no longer lays out by demand"));
  }
  const int pos = node->PositionOf(order.gpu_index);
  if (pos < 0) return Dropped(absl::StrCat("node ", order.node, " has no GPU ", order.gpu_index));
  const core::Gpu& gpu = node->info.gpus[pos];
  if (!gpu.healthy) {
    return Dropped(absl::StrCat(gpu_text, " is unhealthy", gpu.health_reason.empty() ? "" : ": ",
                                gpu.health_reason));
  }
  if (!gpu.mig || !gpu.mig->enabled) return Dropped(absl::StrCat(gpu_text, " is not in MIG mode"));
  if (std::string holder = HolderOn(*node, pos); !holder.empty()) {
    return Dropped(absl::StrCat(gpu_text, " holds work of ", holder));
  }
  if (HasLayout(*gpu.mig, order.layout)) return {RelayoutProgress::kDone, ""};
  if (now - order.ordered_at >= give_up_after) {
    return Dropped(
        absl::StrCat(gpu_text, " was not laid out within ", absl::FormatDuration(give_up_after)));
  }
  return {};
}

absl::flat_hash_map<std::string, int> RelayoutMarks(const std::vector<RelayoutOrder>& orders) {
  absl::flat_hash_map<std::string, int> marks;
  for (const RelayoutOrder& order : orders) marks[order.node] = order.gpu_index;
  return marks;
}

std::string DescribeOrder(const RelayoutOrder& order) {
  return absl::StrCat(
      "GPU ", order.gpu_index, " on node ", order.node, ": ",
      absl::StrJoin(order.layout, ", ", [](std::string* out, const PlannedSlice& s) {
        absl::StrAppend(out, s.profile, "@", s.start);
      }));
}

}  // namespace wsched::placement
