#include "server/placement/filters.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/core/feasibility.h"

namespace wsched::placement {
namespace {

// Bounds the Never reason, which ends up in an RPC answer.
constexpr int kMaxPoolsInReason = 8;

// A pool may serve the class at all: one rule for placement and catalog
// validation alike.
bool Feasible(const core::WorkspaceClass& cls, const core::NodePool& pool,
              const std::vector<core::NodePool>& pools) {
  return !core::FirstInfeasibility(cls, pool, pools).has_value();
}

}  // namespace

bool NodeAcceptsWork(core::NodeState state, core::DriverState driver_state, bool has_gpus) {
  if (state != core::NodeState::kReady) return false;
  // An outdated driver still works: the node serves until its rollout
  // releases it (core/driver_rollout.h).
  if (driver_state == core::DriverState::kReady || driver_state == core::DriverState::kOutdated) {
    return true;
  }
  // Not needed: no GPUs, or GPUs that pass through to VMs (gpu_binding vfio).
  return driver_state == core::DriverState::kNotNeeded;
}

PoolPlan PlanPools(const core::WorkspaceClass& cls, const std::vector<core::NodePool>& pools) {
  PoolPlan plan;
  auto add_tier = [&](auto&& accept) {
    std::vector<const core::NodePool*> tier;
    for (const core::NodePool& pool : pools) {
      if (accept(pool) && Feasible(cls, pool, pools)) tier.push_back(&pool);
    }
    if (!tier.empty()) plan.tiers.push_back(std::move(tier));
  };

  if (cls.is_gpu() || cls.is_slice()) {
    if (cls.gpu.models.empty()) {
      add_tier([](const core::NodePool& pool) { return pool.is_gpu(); });
      return plan;
    }
    for (size_t m = 0; m < cls.gpu.models.size(); ++m) {
      const std::string& model = cls.gpu.models[m];
      // A model listed twice keeps its first (preferred) place.
      if (std::find(cls.gpu.models.begin(), cls.gpu.models.begin() + m, model) !=
          cls.gpu.models.begin() + m) {
        continue;
      }
      add_tier([&](const core::NodePool& pool) {
        return pool.is_gpu() && pool.shape.gpu_model == model;
      });
    }
    return plan;
  }

  // GPU pools pass the rule only when no CPU pool matches the selector, so
  // the tier never mixes kinds.
  add_tier([](const core::NodePool&) { return true; });
  return plan;
}

GpuView ViewFor(const core::WorkspaceClass& cls, const core::NodePool& pool) {
  if (cls.gpu.isolation != core::Isolation::kVm) return GpuView::kContainer;
  return pool.allow_unsafe_iommu ? GpuView::kVmAny : GpuView::kVmSafe;
}

Feasibility CanEverFit(const core::WorkspaceClass& cls, const std::vector<core::NodePool>& pools) {
  Feasibility result;
  for (const auto& tier : PlanPools(cls, pools).tiers) {
    for (const core::NodePool* pool : tier) result.pools.push_back(pool->id);
  }
  if (result.pools.empty()) result.reason = WhyNoPool(cls, pools);
  return result;
}

std::string WhyNoPool(const core::WorkspaceClass& cls, const std::vector<core::NodePool>& pools) {
  std::string prefix = absl::StrCat("no pool can ever hold class ", cls.id);
  if (pools.empty()) return absl::StrCat(prefix, ": no node pools are configured");

  std::vector<std::string> parts;
  for (const core::NodePool& pool : pools) {
    if (static_cast<int>(parts.size()) == kMaxPoolsInReason) {
      parts.push_back(absl::StrCat("and ", pools.size() - kMaxPoolsInReason, " more"));
      break;
    }
    core::PoolVerdict verdict = core::CanEverHold(cls, pool, pools);
    parts.push_back(absl::StrCat("pool ", pool.id, ": ",
                                 verdict.feasible() ? "could hold it" : verdict.message));
  }
  return absl::StrCat(prefix, ": ", absl::StrJoin(parts, "; "));
}

}  // namespace wsched::placement
