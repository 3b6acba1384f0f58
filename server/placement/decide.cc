#include "server/placement/decide.h"

#include <optional>
#include <utility>

#include "server/placement/filters.h"
#include "server/placement/gpu_allocator.h"
#include "server/placement/slice_choice.h"

namespace wsched::placement {
namespace {

struct Candidate {
  PackingScore score;
  size_t pool_rank = 0;  // Position in the tier: catalog order breaks ties.
  const core::NodePool* pool = nullptr;
  NodeId node = 0;
  std::vector<int> gpus;
};

// The best node of one pool for the class, if any fits now; with
// `linked_only`, only a node with a free NVLink-connected set.
std::optional<Candidate> BestInPool(const core::WorkspaceClass& cls, const core::NodePool& pool,
                                    const Resources& request, const Snapshot& snapshot,
                                    const AvoidNode* avoid, bool linked_only) {
  const CapacityIndex* index = snapshot.ReadyIndex(pool.id);
  if (index == nullptr) return std::nullopt;
  const GpuView view = ViewFor(cls, pool);
  const int count = cls.is_gpu() ? cls.gpu.count : 0;

  std::optional<Candidate> found;
  index->FindFirst(view, count, request.cpu_millis, [&](NodeId id, const PackingScore& score) {
    const SnapshotNode& node = snapshot.node(id);
    if (!Covers(node.free, request)) return false;
    if (avoid != nullptr && (*avoid)(node.info.name)) return false;
    const LinkRule links{&node.nvlinks, linked_only,
                         cls.gpu.links == core::GpuLinks::kNvlinkPreferred};
    std::optional<std::vector<int>> gpus = ChooseGpus(node.FreeUnits(view), count, links);
    if (!gpus) return false;  // Enough GPUs, but not in whole IOMMU groups or not linked.
    found = Candidate{score, 0, &pool, id, std::move(*gpus)};
    return true;
  });
  return found;
}

// The best of the pools' candidates (`in_pool` returns an optional of a
// candidate with `score` and `pool_rank`): best score, then catalog order.
template <typename InPool>
auto BestOverTier(const std::vector<const core::NodePool*>& tier, InPool in_pool)
    -> decltype(in_pool(*tier.front())) {
  decltype(in_pool(*tier.front())) best;
  for (size_t rank = 0; rank < tier.size(); ++rank) {
    auto candidate = in_pool(*tier[rank]);
    if (!candidate) continue;
    candidate->pool_rank = rank;
    if (!best || std::pair(candidate->score, candidate->pool_rank) <
                     std::pair(best->score, best->pool_rank)) {
      best = std::move(candidate);
    }
  }
  return best;
}

// The best candidate of one tier. A class that prefers NVLink looks for a
// linked set on every node of the tier before it settles for any set: a
// link preference weighs more than packing, less than the model order the
// tiers stand for.
std::optional<Candidate> BestInTier(const core::WorkspaceClass& cls,
                                    const std::vector<const core::NodePool*>& tier,
                                    const Resources& request, const Snapshot& snapshot,
                                    const AvoidNode* avoid) {
  const bool required = cls.gpu.links == core::GpuLinks::kNvlinkRequired;
  const bool preferred = cls.gpu.links == core::GpuLinks::kNvlinkPreferred;
  for (bool linked_only : {required || preferred, required}) {
    std::optional<Candidate> best = BestOverTier(tier, [&](const core::NodePool& pool) {
      return BestInPool(cls, pool, request, snapshot, avoid, linked_only);
    });
    if (best || linked_only == required) return best;
  }
  return std::nullopt;
}

struct SliceCandidate {
  SliceScore score;
  size_t pool_rank = 0;
  const core::NodePool* pool = nullptr;
  NodeId node = 0;
  HeldSlice slice;
};

// The best node of one pool with a free slice of `profile`, if any fits now.
std::optional<SliceCandidate> BestSliceInPool(const std::string& profile,
                                              const core::NodePool& pool, const Resources& request,
                                              const Snapshot& snapshot, const AvoidNode* avoid) {
  const SliceIndex* index = snapshot.ReadySlices(pool.id);
  if (index == nullptr) return std::nullopt;
  std::optional<SliceCandidate> found;
  index->FindFirst(profile, request.cpu_millis, [&](NodeId id, const SliceScore& score) {
    const SnapshotNode& node = snapshot.node(id);
    if (!Covers(node.free, request)) return false;
    if (avoid != nullptr && (*avoid)(node.info.name)) return false;
    std::optional<HeldSlice> slice = ChooseHeldSlice(node, profile);
    if (!slice) return false;
    found = SliceCandidate{score, 0, &pool, id, *slice};
    return true;
  });
  return found;
}

// The best slice of one tier: the class's profiles in its order, each over
// every pool of the tier (best packing, then catalog order).
std::optional<SliceCandidate> BestSliceInTier(const core::WorkspaceClass& cls,
                                              const std::vector<const core::NodePool*>& tier,
                                              const Resources& request, const Snapshot& snapshot,
                                              const AvoidNode* avoid) {
  for (const std::string& profile : cls.gpu.mig_profiles) {
    std::optional<SliceCandidate> best = BestOverTier(tier, [&](const core::NodePool& pool) {
      return BestSliceInPool(profile, pool, request, snapshot, avoid);
    });
    if (best) return best;
  }
  return std::nullopt;
}

// Where the class goes in this tier, if anywhere now.
std::optional<Placed> PlaceInTier(const core::WorkspaceClass& cls,
                                  const std::vector<const core::NodePool*>& tier,
                                  const Resources& request, const Snapshot& snapshot,
                                  const AvoidNode* avoid) {
  if (cls.is_slice()) {
    std::optional<SliceCandidate> best = BestSliceInTier(cls, tier, request, snapshot, avoid);
    if (!best) return std::nullopt;
    return Placed{snapshot.node(best->node).info.name, best->pool->id, {}, request, best->slice};
  }
  std::optional<Candidate> best = BestInTier(cls, tier, request, snapshot, avoid);
  if (!best) return std::nullopt;
  return Placed{snapshot.node(best->node).info.name, best->pool->id, std::move(best->gpus),
                request};
}

Decision DecideWith(const core::WorkspaceClass& cls, const std::vector<core::NodePool>& pools,
                    const Snapshot& snapshot, const AvoidNode* avoid) {
  PoolPlan plan = PlanPools(cls, pools);
  if (plan.empty()) return Never{WhyNoPool(cls, pools)};

  const Resources request = RequestOf(cls);
  for (const auto& tier : plan.tiers) {
    if (std::optional<Placed> placed = PlaceInTier(cls, tier, request, snapshot, avoid)) {
      return *std::move(placed);
    }
  }

  // Why not: placement/pending_reason.h, the one place a reason is made
  // (it walks every node of these pools, which this hot path must not).
  NotNow not_now;
  for (const auto& tier : plan.tiers) {
    for (const core::NodePool* pool : tier) not_now.pools.push_back(pool->id);
  }
  return not_now;
}

}  // namespace

Decision Decide(const core::WorkspaceClass& cls, const std::vector<core::NodePool>& pools,
                const Snapshot& snapshot) {
  return DecideWith(cls, pools, snapshot, nullptr);
}

Decision DecideAvoiding(const core::WorkspaceClass& cls, const std::vector<core::NodePool>& pools,
                        const Snapshot& snapshot, const AvoidNode& avoid) {
  Decision decision = DecideWith(cls, pools, snapshot, &avoid);
  if (std::holds_alternative<Placed>(decision)) return decision;
  return DecideWith(cls, pools, snapshot, nullptr);
}

const char* DecisionKind(const Decision& decision) {
  switch (decision.index()) {
    case 0: return "placed";
    case 1: return "not_now";
    default: return "never";
  }
}

}  // namespace wsched::placement
