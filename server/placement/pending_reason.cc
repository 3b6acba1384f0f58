#include "server/placement/pending_reason.h"

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "server/core/error_reason.h"
#include "server/core/mig_profiles.h"
#include "server/core/vfio_binding.h"
#include "server/placement/filters.h"
#include "server/placement/gpu_allocator.h"
#include "server/placement/resources.h"

namespace wsched::placement {
namespace {

std::string Gpus(int n) { return absl::StrCat(n, n == 1 ? " GPU" : " GPUs"); }

std::string Ago(absl::Time since, absl::Time now) {
  return absl::StrCat(absl::FormatDuration(absl::Trunc(now - since, absl::Seconds(1))), " ago");
}

std::string StartTimeText(const PoolScalingView& scaling) {
  if (!scaling.median_start) return "no measured start time yet";
  return absl::StrCat("nodes of the pool start in ",
                      absl::FormatDuration(absl::Trunc(*scaling.median_start, absl::Seconds(1))),
                      " (median of ", scaling.start_samples, ")");
}

// Across pools: the one that will let the workspace go first. Capacity on
// its way (an install, a boot, a requested scale-up) beats a dead end (a
// full pool, broken or unsafe GPUs, a failed install) that needs a person.
int Nearness(PendingCode code) {
  switch (code) {
    case PendingCode::kQueued: return 0;
    case PendingCode::kMigRelayout: return 1;
    case PendingCode::kDriverInstalling: return 2;
    case PendingCode::kNodeProvisioning: return 3;
    case PendingCode::kScaleUpRequested: return 4;
    case PendingCode::kScaleUpNotYetRequested: return 5;
    case PendingCode::kPoolBackingOff: return 6;
    case PendingCode::kGpusNotLinked: return 7;
    case PendingCode::kIommuUnsafe: return 7;
    case PendingCode::kGpusNotBound: return 8;
    case PendingCode::kGpusUnhealthy: return 9;
    case PendingCode::kDriverInstallFailed: return 10;
    case PendingCode::kPoolAtMaxSize: return 11;
    default: return 12;  // Not per pool.
  }
}

// What one node (or a node the scaler asked for, or may ask for) has free,
// as the simulation hands it out: a copy, never the snapshot itself.
struct Supply {
  const SnapshotNode* node = nullptr;  // Null: a node not registered yet.
  Resources free;
  GpuCounts gpus{};         // Free healthy GPUs, per view.
  GpuCounts gpus_any_binding{};  // Same, counting GPUs not bound as the view needs.
  int gpus_any_health = 0;  // Free GPUs, healthy or not.
  int unhealthy_free = 0;   // Of those, unhealthy (as the node reports them).
  FreeSlices slices;        // Free usable MIG slices, per profile.
  // A re-layout under way (kRelayout): the GPU, since when, and in `slices`
  // the slices it makes.
  int relayout_gpu = -1;
  absl::Time relayout_since = absl::InfinitePast();
};

int FreeGpusIgnoringHealth(const SnapshotNode& node) {
  int count = 0;
  for (const SnapshotGpu& gpu : node.gpus) count += gpu.holder.empty() ? 1 : 0;
  return count;
}

int FreeUnhealthyGpus(const SnapshotNode& node) {
  int count = 0;
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    count += node.gpus[i].holder.empty() && !node.info.gpus[i].healthy ? 1 : 0;
  }
  return count;
}

// Why the first free unhealthy GPU is out ("GPU 5: CDI: libcuda.so is ..."),
// so the reason names the cause an operator fixes; empty when none says.
std::string FirstUnhealthyCause(const SnapshotNode& node) {
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    const core::Gpu& gpu = node.info.gpus[i];
    if (node.gpus[i].holder.empty() && !gpu.healthy && !gpu.health_reason.empty()) {
      return absl::StrCat("GPU ", gpu.index, ": ", gpu.health_reason);
    }
  }
  return "";
}

Supply SupplyOf(const SnapshotNode& node) {
  GpuCounts any_binding{};
  for (int v = 0; v < kGpuViews; ++v) {
    any_binding[v] = node.CountFreeGpus(static_cast<GpuView>(v), /*ignore_binding=*/true);
  }
  return {&node,
          node.free,
          node.free_gpus,
          any_binding,
          FreeGpusIgnoringHealth(node),
          FreeUnhealthyGpus(node),
          node.free_slices};
}

// Where in s.slices the first of `profiles` that has a free slice is; -1
// when none.
int FreeSliceAt(const Supply& s, const std::vector<std::string>& profiles) {
  for (const std::string& profile : profiles) {
    for (size_t i = 0; i < s.slices.size(); ++i) {
      if (s.slices[i].first == profile && s.slices[i].second > 0) return static_cast<int>(i);
    }
  }
  return -1;
}

// A node not registered yet (no layout known) is taken to have a slice, as
// it is taken to have its shape's GPUs.
bool HasFreeSlice(const Supply& s, const std::vector<std::string>& profiles) {
  return s.node == nullptr || FreeSliceAt(s, profiles) >= 0;
}

// What the class needs, for the texts: "2 GPUs", "a free slice of [1g.18gb]".
std::string Need(const core::WorkspaceClass& cls) {
  if (!cls.is_slice()) return Gpus(cls.gpu.count);
  return absl::StrCat("a free slice of [", absl::StrJoin(cls.gpu.mig_profiles, ", "), "]");
}

// A node of the pool's shape; a zero in the shape is "not stated" and
// limits nothing (core/feasibility.h).
Supply NewNodeOf(const core::NodeShape& shape) {
  Supply supply;
  supply.free = RoomOfShape(shape);
  supply.gpus.fill(shape.gpus_per_node);
  supply.gpus_any_binding.fill(shape.gpus_per_node);
  supply.gpus_any_health = shape.gpus_per_node;
  return supply;
}

// Where a pool's capacity sits, nearest first. A class looks for the first
// node on each shelf that would hold it.
enum Shelf : int {
  kFree,          // Ready nodes: holds it now.
  kRelayout,      // Ready nodes cutting a MIG GPU anew (slice classes).
  kUnlinked,      // Ready nodes, counting GPUs no NVLink-connected set is made of.
  kUnsafe,        // Ready nodes, counting IOMMU-unsafe groups (VM classes).
  kUnbound,       // Ready nodes, counting GPUs not bound as the class needs.
  kUnhealthy,     // Ready nodes, counting unhealthy GPUs.
  kInstalling,    // Ready nodes waiting for their driver.
  kFailed,        // Ready nodes whose driver install failed.
  kProvisioning,  // Registered, not ready yet.
  kRequested,     // Asked for by the scaler, not registered yet.
  kHeadroom,      // Below max_size, not asked for yet.
  kShelves,
};

// What one pool offers the queue: its nodes by shelf, in snapshot order
// (kUnsafe and kUnhealthy look at the ready nodes), and the nodes the
// scaler asked for or may still ask for, made as the queue needs them.
// (kUnbound looks at the ready nodes too.)
struct PoolSupply {
  const core::NodePool* pool = nullptr;
  PoolScalingView scaling;
  int nodes = 0;  // Registered, in any state.
  int size = 0;   // What counts against max_size.
  std::array<std::deque<Supply>, kShelves> shelves;
  int requested_left = 0, headroom_left = 0;  // Nodes not made yet.

  std::deque<Supply>& On(int shelf) {
    return shelves[shelf == kUnlinked || shelf == kUnsafe || shelf == kUnbound ||
                           shelf == kUnhealthy
                       ? kFree
                       : shelf];
  }
};

void Shelve(PoolSupply& pool, const SnapshotNode& node) {
  ++pool.nodes;
  const bool gpus = !node.info.gpus.empty();
  if (node.state == core::NodeState::kProvisioning) {
    pool.shelves[kProvisioning].push_back(SupplyOf(node));
  } else if (node.state != core::NodeState::kReady) {
    return;  // Cordoned, draining, lost: offers nothing.
  } else if (gpus && (node.driver_state == core::DriverState::kNeedsDriver ||
                      node.driver_state == core::DriverState::kInstalling)) {
    pool.shelves[kInstalling].push_back(SupplyOf(node));
  } else if (gpus && node.driver_state == core::DriverState::kInstallFailed) {
    pool.shelves[kFailed].push_back(SupplyOf(node));
  } else if (node.schedulable) {
    pool.shelves[kFree].push_back(SupplyOf(node));
  }
}

// Whether the node's free GPUs hold a set whose every two share NVLink. It
// looks at the node as the snapshot has it, not at what the simulation has
// handed out of it: a node asked for (no node yet) is taken to have one.
bool HasLinkedSet(const Supply& s, GpuView view, int need) {
  if (s.node == nullptr) return true;
  const LinkRule required{&s.node->nvlinks, /*require_linked=*/true};
  return ChooseGpus(s.node->FreeUnits(view), need, required).has_value();
}

// Whether `s` on `shelf` would hold one workspace of the class. Each test
// only turns false as capacity is handed out, so a class's walk over a
// shelf never has to look back. `linked`: the class requires NVLink.
bool Holds(int shelf, const Supply& s, const Resources& request, GpuView view, int need,
           bool linked, const std::vector<std::string>& slices) {
  if (!Covers(s.free, request)) return false;
  if (!slices.empty()) {
    // A slice class: a free slice now or soon, or a node that is not ready
    // yet.
    if (shelf == kFree) return HasFreeSlice(s, slices);
    if (shelf == kRelayout) return FreeSliceAt(s, slices) >= 0;
    return shelf >= kInstalling;
  }
  switch (shelf) {
    case kFree:
      return s.gpus[static_cast<int>(view)] >= need && (!linked || HasLinkedSet(s, view, need));
    case kUnlinked:
      return linked && s.gpus[static_cast<int>(view)] >= need && !HasLinkedSet(s, view, need);
    case kUnsafe:
      return view == GpuView::kVmSafe && s.gpus[static_cast<int>(GpuView::kVmAny)] >= need;
    case kUnbound: return s.gpus_any_binding[static_cast<int>(view)] >= need;
    case kUnhealthy: return s.unhealthy_free > 0 && s.gpus_any_health >= need;
    case kProvisioning: return true;  // What it will have free is not known yet.
    default: return s.gpus[static_cast<int>(view)] >= need;
  }
}

void Take(Supply& s, const Resources& request, int need, const std::vector<std::string>& slices) {
  s.free -= request;
  if (!slices.empty()) {
    if (int at = FreeSliceAt(s, slices); at >= 0) --s.slices[at].second;
    return;
  }
  for (int& free : s.gpus) free = std::max(0, free - need);
  for (int& free : s.gpus_any_binding) free = std::max(0, free - need);
  s.gpus_any_health = std::max(0, s.gpus_any_health - need);
}

// A pool's reason for one workspace and the capacity it names, which the
// workspace takes if this pool's reason is the one it is told.
struct Candidate {
  PendingReason reason;
  Supply* claim = nullptr;
};

// Each class's PlanPools tiers, once each, in the order met.
std::vector<const core::NodePool*> PoolsOfQueue(
    const core::WorkspaceClass* first, const std::vector<const core::WorkspaceClass*>& rest,
    const std::vector<core::NodePool>& catalog) {
  std::vector<const core::NodePool*> pools;
  auto add = [&](const core::WorkspaceClass& cls) {
    for (const auto& tier : PlanPools(cls, catalog).tiers) {
      for (const core::NodePool* pool : tier) {
        if (std::find(pools.begin(), pools.end(), pool) == pools.end()) pools.push_back(pool);
      }
    }
  };
  if (first != nullptr) add(*first);
  std::vector<const core::WorkspaceClass*> seen;  // A queue has few distinct classes.
  for (const core::WorkspaceClass* cls : rest) {
    if (cls == nullptr || std::find(seen.begin(), seen.end(), cls) != seen.end()) continue;
    seen.push_back(cls);
    add(*cls);
  }
  return pools;
}

// The queue, explained workspace by workspace on a copy of the free counts.
class QueueSimulation {
 public:
  // Only `walked`'s nodes are shelved: the classes explained look at no
  // other pool (PoolsOfQueue).
  QueueSimulation(const PendingContext& ctx, const std::vector<const core::NodePool*>& walked)
      : ctx_(ctx) {
    for (const core::NodePool& pool : *ctx.pools) {
      PoolSupply& supply = pools_[pool.id];
      supply.pool = &pool;
      if (auto it = ctx.scaling.find(pool.id); it != ctx.scaling.end()) supply.scaling = it->second;
    }
    for (const core::NodePool* pool : walked) {
      PoolSupply& supply = pools_.at(pool->id);
      ctx.snapshot->ForEachNodeOf(pool->id, [&](const SnapshotNode& node) { Shelve(supply, node); });
    }
    for (const RelayoutOrder& order : ctx.relayouts) ShelveRelayout(order);
    for (auto& [id, supply] : pools_) {
      const PoolScalingView& scaling = supply.scaling;
      supply.size = std::max(scaling.current_size, supply.nodes);
      if (scaling.has_signal) supply.requested_left = std::max(0, scaling.target_size - supply.size);
      supply.headroom_left =
          std::max(0, supply.pool->max_size - supply.size - supply.requested_left);
    }
  }

  // Explains one workspace at `position` (1-based; 0: not queued) and hands
  // it the capacity its reason names.
  PendingReason Next(const core::WorkspaceClass& cls, int position) {
    std::optional<Candidate> best;
    for (const auto& tier : PlanPools(cls, *ctx_.pools).tiers) {
      for (const core::NodePool* pool : tier) {
        Candidate candidate = ForPool(cls, pools_.at(pool->id), position);
        if (!best || Nearness(candidate.reason.code) < Nearness(best->reason.code)) {
          best = std::move(candidate);
        }
      }
    }
    if (!best) {
      // No pool can ever hold it: placement refuses such a class, so this
      // is seen only when the catalog changed under a queued workspace.
      PendingReason reason = Base(cls, position);
      reason.code = PendingCode::kNoPool;
      reason.detail = WhyNoPool(cls, *ctx_.pools);
      return reason;
    }
    if (best->claim != nullptr) {
      Take(*best->claim, RequestOf(cls), cls.gpu.count, cls.gpu.mig_profiles);
    }
    return std::move(best->reason);
  }

 private:
  using CursorKey = std::tuple<const core::WorkspaceClass*, const core::NodePool*, int>;

  PendingReason Base(const core::WorkspaceClass& cls, int position) const {
    PendingReason reason;
    reason.gpus_needed = cls.gpu.count;
    reason.queue_position = position;
    return reason;
  }

  // The first supply on the shelf that holds the class, from where the
  // class's last look stopped; nodes the scaler asked for (or may) are made
  // when the ones made so far are used up.
  Supply* First(const core::WorkspaceClass& cls, PoolSupply& pool, int shelf) {
    const Resources request = RequestOf(cls);
    const GpuView view = ViewFor(cls, *pool.pool);
    const int need = cls.gpu.count;
    const bool linked = cls.gpu.links == core::GpuLinks::kNvlinkRequired;
    std::deque<Supply>& list = pool.On(shelf);
    size_t& at = cursors_[CursorKey{&cls, pool.pool, shelf}];
    while (true) {
      for (; at < list.size(); ++at) {
        if (Holds(shelf, list[at], request, view, need, linked, cls.gpu.mig_profiles)) {
          return &list[at];
        }
      }
      int* left = shelf == kRequested ? &pool.requested_left
                  : shelf == kHeadroom ? &pool.headroom_left
                                       : nullptr;
      if (left == nullptr || *left == 0) return nullptr;
      --*left;
      list.push_back(NewNodeOf(pool.pool->shape));
      if (!Holds(shelf, list.back(), request, view, need, linked, cls.gpu.mig_profiles)) {
        return nullptr;  // Not on a new node either.
      }
    }
  }

  // What a re-layout under way will offer, on the node it cuts.
  void ShelveRelayout(const RelayoutOrder& order) {
    auto pool = pools_.find(order.pool);
    const SnapshotNode* node = ctx_.snapshot->FindNode(order.node);
    if (pool == pools_.end() || node == nullptr || !node->schedulable) return;
    Supply supply;
    supply.node = node;
    supply.free = node->free;
    for (const PlannedSlice& slice : order.layout) {
      auto it = std::find_if(supply.slices.begin(), supply.slices.end(),
                             [&](const auto& entry) { return entry.first == slice.profile; });
      if (it == supply.slices.end()) {
        supply.slices.emplace_back(slice.profile, 1);
      } else {
        ++it->second;
      }
    }
    supply.relayout_gpu = order.gpu_index;
    supply.relayout_since = order.ordered_at;
    pool->second.shelves[kRelayout].push_back(std::move(supply));
  }

  Candidate ForPool(const core::WorkspaceClass& cls, PoolSupply& pool, int position);
  // The layers of one pool, nearest first; each returns false when it does
  // not hold the workspace back.
  bool Room(const core::WorkspaceClass& cls, PoolSupply& pool, Candidate& c);
  bool NodeOnItsWay(const core::WorkspaceClass& cls, PoolSupply& pool, Candidate& c);
  void NewNode(const core::WorkspaceClass& cls, PoolSupply& pool, Candidate& c);

  void AtNode(PendingCode code, Supply& s, Candidate& c) const {
    c.claim = &s;
    c.reason.code = code;
    c.reason.node = s.node->info.name;
    c.reason.kernel = s.node->info.kernel_version;
    // When the node entered its current state (provisioning, needs-driver),
    // if the snapshot knows.
    if (s.node->state_since != absl::InfinitePast()) c.reason.since = s.node->state_since;
  }
  std::string SinceText(const PendingReason& reason, absl::string_view prefix,
                        absl::string_view suffix = "") const {
    if (!reason.since) return "";
    return absl::StrCat(prefix, Ago(*reason.since, ctx_.now), suffix);
  }

  const PendingContext& ctx_;
  std::map<std::string, PoolSupply> pools_;
  std::map<CursorKey, size_t> cursors_;
};

// Room exists now, or would with unsafe IOMMU groups or healthy GPUs.
bool QueueSimulation::Room(const core::WorkspaceClass& cls, PoolSupply& pool, Candidate& c) {
  PendingReason& r = c.reason;
  if (Supply* s = First(cls, pool, kFree)) {
    c.claim = s;
    r.code = PendingCode::kQueued;
    r.node = s->node->info.name;
    r.detail = r.queue_position > 1
                   ? absl::StrCat("queued at position ", r.queue_position, ": room exists in pool ",
                                  pool.pool->id, ", the workspaces ahead are served first")
                   : absl::StrCat("room exists on node ", r.node,
                                  "; placing it at the next pass of the queue");
    return true;
  }
  if (Supply* s = cls.is_slice() ? First(cls, pool, kRelayout) : nullptr) {
    AtNode(PendingCode::kMigRelayout, *s, c);
    r.since =
        s->relayout_since == absl::InfinitePast() ? std::nullopt : std::optional(s->relayout_since);
    r.detail = absl::StrCat("re-laying out GPU ", s->relayout_gpu, " on ", r.node, " for ",
                            s->slices[FreeSliceAt(*s, cls.gpu.mig_profiles)].first);
    return true;
  }
  if (Supply* s = First(cls, pool, kUnlinked)) {
    AtNode(PendingCode::kGpusNotLinked, *s, c);
    r.detail = absl::StrCat(Gpus(s->gpus[static_cast<int>(ViewFor(cls, *pool.pool))]),
                            " free on node ", r.node, " but no NVLink-connected set of ",
                            cls.gpu.count, " (the class has gpu.links: nvlink_required)");
    return true;
  }
  if (Supply* s = First(cls, pool, kUnsafe)) {
    AtNode(PendingCode::kIommuUnsafe, *s, c);
    r.detail = absl::StrCat("node ", r.node, " has ", Gpus(cls.gpu.count),
                            " free, but only in IOMMU groups shared with other devices, "
                            "which a VM class must not take (pool ", pool.pool->id,
                            " does not set allow_unsafe_iommu)");
    return true;
  }
  if (Supply* s = First(cls, pool, kUnbound)) {
    AtNode(PendingCode::kGpusNotBound, *s, c);
    const GpuView view = ViewFor(cls, *pool.pool);
    r.detail = absl::StrCat("node ", r.node, " has ", Gpus(cls.gpu.count), " free, but not bound as ",
                            view == GpuView::kContainer ? "a container" : "a VM", " needs (pool ",
                            pool.pool->id, " has gpu_binding ",
                            core::GpuBindingName(pool.pool->gpu_binding), "): ",
                            s->node->FirstBindingProblem(view));
    return true;
  }
  if (Supply* s = First(cls, pool, kUnhealthy)) {
    AtNode(PendingCode::kGpusUnhealthy, *s, c);
    const int unhealthy = s->unhealthy_free;
    r.detail = absl::StrCat("node ", r.node, " would hold it, but ", Gpus(unhealthy),
                            " of its free GPUs ", unhealthy == 1 ? "is" : "are",
                            " unhealthy and not handed out");
    if (std::string cause = FirstUnhealthyCause(*s->node); !cause.empty()) {
      absl::StrAppend(&r.detail, " (", cause, ")");
    }
    return true;
  }
  return false;
}

// A node exists or is coming, but is not ready for work yet.
bool QueueSimulation::NodeOnItsWay(const core::WorkspaceClass& cls, PoolSupply& pool,
                                   Candidate& c) {
  PendingReason& r = c.reason;
  Supply* installing = First(cls, pool, kInstalling);
  Supply* failed = installing ? nullptr : First(cls, pool, kFailed);
  if (installing || failed) {
    const SnapshotNode& node = *(installing ? installing : failed)->node;
    AtNode(failed ? PendingCode::kDriverInstallFailed : PendingCode::kDriverInstalling,
           installing ? *installing : *failed, c);
    if (auto requirement = core::FindDriverRequirement(*ctx_.driver_policy,
                                                       node.info.kernel_version, node.info.os_id,
                                                       node.info.os_version)) {
      r.image = requirement->installer_image;
    }
    r.detail = absl::StrCat(
        failed ? "the driver install failed on node " : "waiting for the driver install on node ",
        r.node, " (kernel ", r.kernel, r.image.empty() ? "" : absl::StrCat(", image ", r.image),
        ")", SinceText(r, ", since "), failed ? "; see ListDriverWork" : "");
    if (failed && !node.install_failure.empty()) {
      absl::StrAppend(&r.detail, ": ", node.install_failure);
    }
    return true;
  }
  if (Supply* s = First(cls, pool, kProvisioning)) {
    AtNode(PendingCode::kNodeProvisioning, *s, c);
    r.detail = absl::StrCat("waiting for node ", r.node, " to become ready",
                            SinceText(r, " (registered ", ")"), "; ", StartTimeText(pool.scaling));
    return true;
  }
  return false;
}

// No node will hold it: a new one must be asked for.
void QueueSimulation::NewNode(const core::WorkspaceClass& cls, PoolSupply& pool, Candidate& c) {
  PendingReason& r = c.reason;
  const PoolScalingView& scaling = pool.scaling;
  if (scaling.backoff_until && *scaling.backoff_until > ctx_.now) {
    r.code = PendingCode::kPoolBackingOff;
    r.until = scaling.backoff_until;
    r.detail = absl::StrCat(
        "pool ", pool.pool->id, " is backing off after failed scale-ups until ",
        absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", *scaling.backoff_until, absl::UTCTimeZone()),
        scaling.backoff_detail.empty() ? "" : absl::StrCat(" (", scaling.backoff_detail, ")"));
    return;
  }
  if ((c.claim = First(cls, pool, kRequested)) != nullptr) {
    r.code = PendingCode::kScaleUpRequested;
    r.since = scaling.scale_up_since;
    r.detail = absl::StrCat("scale-up of pool ", pool.pool->id, " from ", scaling.current_size,
                            " to ", scaling.target_size, " nodes requested",
                            SinceText(r, " "), "; ", StartTimeText(scaling));
    return;
  }
  if ((c.claim = First(cls, pool, kHeadroom)) != nullptr) {
    r.code = PendingCode::kScaleUpNotYetRequested;
    r.detail = absl::StrCat("no node of pool ", pool.pool->id, " has room; the scaler has not "
                            "asked for one yet (pending work is batched for a moment first)");
    return;
  }
  // Every node the pool may have is there, asked for, or taken by the
  // workspaces ahead.
  r.code = PendingCode::kPoolAtMaxSize;
  r.detail = absl::StrCat("pool ", pool.pool->id, " is at max_size ", pool.pool->max_size, " (",
                          pool.size, pool.size == 1 ? " node" : " nodes", ") and no node has ",
                          Need(cls), cls.is_slice() ? "" : " free",
                          r.queue_position > 1 ? " for it after the workspaces ahead" : "",
                          "; no scale-up can be requested");
}

Candidate QueueSimulation::ForPool(const core::WorkspaceClass& cls, PoolSupply& pool,
                                   int position) {
  Candidate c{Base(cls, position), nullptr};
  c.reason.pool = pool.pool->id;
  if (!Room(cls, pool, c) && !NodeOnItsWay(cls, pool, c)) NewNode(cls, pool, c);
  return c;
}

std::string UtcText(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

// "the spending limit of org o-1 is reached: 7.000000 of 5.000000
// GPU-seconds spent ...": what the commit would refuse it with.
std::string BudgetText(const core::BudgetStanding& budget, const core::WorkspaceClass& cls) {
  return absl::StrCat("the spending limit of ", budget.scope, " ", budget.id,
                      " is reached: ", core::GpuSecondsFigure(budget.spent), " of ",
                      core::GpuSecondsFigure(budget.limit),
                      " GPU-seconds spent this period; class ", cls.id, " commits to ",
                      core::GpuSecondsFigure(core::CommittedGpuMicros(core::LeastGpuSevenths(cls),
                                                                      budget.committed_interval)),
                      " more; the period resets at ", UtcText(budget.period_end));
}

// The workspace's own limits, judged before any capacity: a spending limit
// first (the commit refuses it at any node, whatever the quota), then the
// org's GPU quota, then the policies.
std::optional<PendingReason> OwnLimits(const PendingContext& ctx) {
  const core::WorkspaceClass& cls = *ctx.cls;
  PendingReason reason;
  reason.gpus_needed = cls.gpu.count;
  reason.queue_position = ctx.queue_position;
  if (const core::BudgetStanding* budget = ExhaustedBudget(ctx)) {
    reason.code = PendingCode::kBudgetExhausted;
    reason.until = budget->period_end;
    reason.detail = BudgetText(*budget, cls);
    return reason;
  }
  const int64_t needs = core::LeastGpuSevenths(cls);
  if (ctx.quota && needs > 0 &&
      ctx.quota->held_sevenths + needs > ctx.quota->quota * core::kMigComputeSlices) {
    reason.code = PendingCode::kOrgGpuQuota;
    reason.quota = *ctx.quota;
    reason.detail = absl::StrCat(
        "the org holds ", core::GpuSeventhsFigure(ctx.quota->held_sevenths),
        " of its GPU quota of ", ctx.quota->quota, "; class ", cls.id, " needs ",
        cls.is_slice() ? absl::StrCat(core::GpuSeventhsFigure(needs), " GPU") : Gpus(cls.gpu.count),
        " more");
    return reason;
  }
  if (ctx.policy_denial) {
    reason.code = PendingCode::kClassPolicy;
    reason.detail = *ctx.policy_denial;
    return reason;
  }
  return std::nullopt;
}

}  // namespace

const char* PendingCodeName(PendingCode code) {
  switch (code) {
    case PendingCode::kOrgGpuQuota: return "org_gpu_quota";
    case PendingCode::kClassPolicy: return "class_policy";
    case PendingCode::kNoPool: return "no_pool";
    case PendingCode::kQueued: return "queued";
    case PendingCode::kIommuUnsafe: return "iommu_unsafe";
    case PendingCode::kGpusUnhealthy: return "gpus_unhealthy";
    case PendingCode::kDriverInstalling: return "driver_installing";
    case PendingCode::kDriverInstallFailed: return "driver_install_failed";
    case PendingCode::kNodeProvisioning: return "node_provisioning";
    case PendingCode::kPoolBackingOff: return "pool_backing_off";
    case PendingCode::kPoolAtMaxSize: return "pool_at_max_size";
    case PendingCode::kScaleUpRequested: return "scale_up_requested";
    case PendingCode::kScaleUpNotYetRequested: return "scale_up_not_yet_requested";
    case PendingCode::kGpusNotBound: return "gpus_not_bound";
    case PendingCode::kGpusNotLinked: return "gpus_not_linked";
    case PendingCode::kMigRelayout: return "mig_relayout";
    case PendingCode::kBudgetExhausted: return "budget_exhausted";
  }
  return "unknown";
}

const core::BudgetStanding* ExhaustedBudget(const PendingContext& ctx) {
  const int64_t sevenths = core::LeastGpuSevenths(*ctx.cls);
  if (sevenths <= 0) return nullptr;  // The commit judges only placements that hold GPUs.
  for (const core::BudgetStanding& budget : ctx.budgets) {
    const core::BudgetFigures figures{
        budget.limit, budget.spent, core::CommittedGpuMicros(sevenths, budget.committed_interval)};
    if (!core::AdmitsWithinBudget(figures)) return &budget;
  }
  return nullptr;
}

std::vector<const core::NodePool*> PoolsThatMatter(const PendingContext& ctx) {
  return PoolsOfQueue(ctx.cls, ctx.ahead, *ctx.pools);
}

PendingReason ExplainPending(const PendingContext& ctx) {
  if (std::optional<PendingReason> limited = OwnLimits(ctx)) return *std::move(limited);
  QueueSimulation queue(ctx, PoolsThatMatter(ctx));
  for (size_t i = 0; i < ctx.ahead.size(); ++i) {
    if (ctx.ahead[i] != nullptr) queue.Next(*ctx.ahead[i], static_cast<int>(i) + 1);
  }
  return queue.Next(*ctx.cls, ctx.queue_position);
}

std::vector<PendingReason> ExplainQueue(const PendingContext& ctx,
                                        const std::vector<const core::WorkspaceClass*>& classes) {
  QueueSimulation queue(ctx, PoolsOfQueue(nullptr, classes, *ctx.pools));
  std::vector<PendingReason> reasons;
  reasons.reserve(classes.size());
  for (size_t i = 0; i < classes.size(); ++i) {
    const int position = static_cast<int>(i) + 1;
    if (classes[i] != nullptr) {
      reasons.push_back(queue.Next(*classes[i], position));
      continue;
    }
    PendingReason gone;
    gone.code = PendingCode::kNoPool;
    gone.queue_position = position;
    gone.detail = "its class is no longer in the catalog";
    reasons.push_back(std::move(gone));
  }
  return reasons;
}

}  // namespace wsched::placement
