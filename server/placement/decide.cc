#include "server/placement/decide.h"

#include <optional>
#include <utility>

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
