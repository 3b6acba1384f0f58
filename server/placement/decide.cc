#include "server/placement/decide.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/placement/filters.h"
#include "server/placement/gpu_allocator.h"

namespace wsched::placement {
namespace {

struct Candidate {
  PackingScore score;
  size_t pool_rank = 0;  // Position in the tier: catalog order breaks ties.
  const core::NodePool* pool = nullptr;
  NodeId node = 0;
  std::vector<int> gpus;
};

// The best node of one pool for the class, if any fits now.
std::optional<Candidate> BestInPool(const core::WorkspaceClass& cls, const core::NodePool& pool,
                                    const Resources& request, const Snapshot& snapshot,
                                    const AvoidNode* avoid) {
  const CapacityIndex* index = snapshot.ReadyIndex(pool.id);
  if (index == nullptr) return std::nullopt;
  const GpuView view = ViewFor(cls, pool);
  const int count = cls.is_gpu() ? cls.gpu.count : 0;

  std::optional<Candidate> found;
  index->FindFirst(view, count, request.cpu_millis, [&](NodeId id, const PackingScore& score) {
    const SnapshotNode& node = snapshot.node(id);
    if (!Covers(node.free, request)) return false;
    if (avoid != nullptr && (*avoid)(node.info.name)) return false;
    std::optional<std::vector<int>> gpus = ChooseGpus(node.FreeUnits(view), count);
    if (!gpus) return false;  // Enough GPUs, but not in whole IOMMU groups.
    found = Candidate{score, 0, &pool, id, std::move(*gpus)};
    return true;
  });
  return found;
}

std::string FreeGpus(int64_t count, GpuView view) {
  return absl::StrCat(count, " free ", view == GpuView::kVmSafe ? "passthrough-safe " : "",
                      count == 1 ? "GPU" : "GPUs");
}

// Why no node of the pool fits now, from the index's summary numbers only.
std::string WhyNotNowInPool(const core::WorkspaceClass& cls, const core::NodePool& pool,
                            const Resources& request, const Snapshot& snapshot) {
  const int known = snapshot.PoolNodeCount(pool.id);
  const CapacityIndex* index = snapshot.ReadyIndex(pool.id);
  if (known == 0) {
    return cls.is_gpu() ? absl::StrCat("pool ", pool.id, " has 0 free GPUs (no nodes)")
                        : absl::StrCat("pool ", pool.id, " has no nodes");
  }
  if (index == nullptr || index->empty()) {
    return absl::StrCat("pool ", pool.id, " has no ready node (", known,
                        known == 1 ? " node" : " nodes", " not ready or driver not ready)");
  }
  if (cls.is_gpu()) {
    const GpuView view = ViewFor(cls, pool);
    const int64_t total = index->TotalFreeGpus(view);
    if (total == 0) {
      std::string reason = absl::StrCat("pool ", pool.id, " has ", FreeGpus(0, view));
      if (view == GpuView::kVmSafe && index->TotalFreeGpus(GpuView::kVmAny) > 0) {
        absl::StrAppend(&reason,
                        " (the free GPUs share IOMMU groups with other devices; the pool may set "
                        "allow_unsafe_iommu)");
      } else if (view != GpuView::kContainer && index->TotalFreeGpus(GpuView::kContainer) > 0) {
        absl::StrAppend(&reason,
                        " (the free GPUs' IOMMU groups are partly held by other workspaces)");
      }
      return reason;
    }
    if (index->MaxFreeGpus(view) < cls.gpu.count) {
      return absl::StrCat("pool ", pool.id, " has ", FreeGpus(total, view), " but at most ",
                          index->MaxFreeGpus(view), " on one node; the class needs ",
                          cls.gpu.count);
    }
    std::string what = FreeGpus(cls.gpu.count, view);
    if (view != GpuView::kContainer) absl::StrAppend(&what, " in whole IOMMU groups");
    return absl::StrCat("pool ", pool.id, " has no ready node with ", what, " and ",
                        DescribeResources(request), " free");
  }
  return absl::StrCat("pool ", pool.id, " has no ready node with ", DescribeResources(request),
                      " free");
}

}  // namespace

namespace {

Decision DecideWith(const core::WorkspaceClass& cls, const std::vector<core::NodePool>& pools,
                    const Snapshot& snapshot, const AvoidNode* avoid) {
  PoolPlan plan = PlanPools(cls, pools);
  if (plan.empty()) return Never{WhyNoPool(cls, pools)};

  const Resources request = RequestOf(cls);
  for (const auto& tier : plan.tiers) {
    std::optional<Candidate> best;
    for (size_t rank = 0; rank < tier.size(); ++rank) {
      std::optional<Candidate> candidate = BestInPool(cls, *tier[rank], request, snapshot, avoid);
      if (!candidate) continue;
      candidate->pool_rank = rank;
      if (!best || std::pair(candidate->score, candidate->pool_rank) <
                       std::pair(best->score, best->pool_rank)) {
        best = std::move(candidate);
      }
    }
    if (best) {
      return Placed{snapshot.node(best->node).info.name, best->pool->id, std::move(best->gpus),
                    request};
    }
  }

  NotNow not_now;
  std::vector<std::string> reasons;
  for (const auto& tier : plan.tiers) {
    for (const core::NodePool* pool : tier) {
      not_now.pools.push_back(pool->id);
      reasons.push_back(WhyNotNowInPool(cls, *pool, request, snapshot));
    }
  }
  not_now.reason = absl::StrJoin(reasons, "; ");
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
