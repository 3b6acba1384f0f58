#include "server/placement/filters.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/core/quantity.h"
#include "server/placement/gpu_allocator.h"

namespace wsched::placement {
namespace {

// Bounds the Never reason, which ends up in an RPC answer.
constexpr int kMaxPoolsInReason = 8;

std::string FormatSelector(const std::map<std::string, std::string>& selector) {
  return absl::StrCat("{", absl::StrJoin(selector, ", ", absl::PairFormatter("=")), "}");
}

bool ModelAccepted(const core::WorkspaceClass& cls, const core::NodePool& pool) {
  const auto& models = cls.gpu.models;
  return models.empty() || std::find(models.begin(), models.end(), pool.shape.gpu_model) != models.end();
}

// Fills *why (when asked) and returns false, to keep the checks one-liners.
bool Reject(std::string* why, std::string reason) {
  if (why != nullptr) *why = std::move(reason);
  return false;
}

// A shape dimension of zero is "not stated": it rules nothing out.
bool ShapeTooSmall(int64_t shape, int64_t request) { return shape > 0 && request > shape; }

// CPU class + GPU pool: allowed only on purpose (see PlanPools).
bool GpuPoolGuardAllows(const core::WorkspaceClass& cls, const std::vector<core::NodePool>& pools) {
  if (cls.pool_selector.empty()) return false;
  return std::none_of(pools.begin(), pools.end(), [&](const core::NodePool& p) {
    return !p.is_gpu() && p.Matches(cls.pool_selector);
  });
}

}  // namespace

bool NodeAcceptsWork(core::NodeState state, core::DriverState driver_state, bool has_gpus) {
  if (state != core::NodeState::kReady) return false;
  if (driver_state == core::DriverState::kReady) return true;
  return !has_gpus && driver_state == core::DriverState::kNotNeeded;
}

bool PoolCanEverHold(const core::WorkspaceClass& cls, const core::NodePool& pool,
                     std::string* why) {
  if (!pool.Matches(cls.pool_selector)) {
    return Reject(why, absl::StrCat("pool_selector ", FormatSelector(cls.pool_selector),
                                    " does not match its labels"));
  }
  if (cls.is_gpu()) {
    if (!pool.is_gpu()) return Reject(why, "it has no GPUs");
    if (!ModelAccepted(cls, pool)) {
      return Reject(why, absl::StrCat("GPU model ", pool.shape.gpu_model,
                                      " is not one of the class's models (",
                                      absl::StrJoin(cls.gpu.models, ", "), ")"));
    }
    if (cls.gpu.count > pool.shape.gpus_per_node || cls.gpu.count > kMaxGpusPerWorkspace) {
      return Reject(why, absl::StrCat("nodes have ", pool.shape.gpus_per_node,
                                      " GPUs, the class needs ", cls.gpu.count));
    }
  }
  const core::NodeShape& shape = pool.shape;
  const core::ClassResources& want = cls.resources;
  if (ShapeTooSmall(shape.cpu_millis, want.cpu_request_millis)) {
    return Reject(why, absl::StrCat("nodes have ", core::FormatCpuMillis(shape.cpu_millis),
                                    " CPU, the class requests ",
                                    core::FormatCpuMillis(want.cpu_request_millis)));
  }
  if (ShapeTooSmall(shape.memory_bytes, want.memory_bytes)) {
    return Reject(why, absl::StrCat("nodes have ", core::FormatBytes(shape.memory_bytes),
                                    " memory, the class requests ",
                                    core::FormatBytes(want.memory_bytes)));
  }
  if (ShapeTooSmall(shape.ephemeral_storage_bytes, want.ephemeral_storage_bytes)) {
    return Reject(why, absl::StrCat("nodes have ", core::FormatBytes(shape.ephemeral_storage_bytes),
                                    " ephemeral storage, the class requests ",
                                    core::FormatBytes(want.ephemeral_storage_bytes)));
  }
  if (ShapeTooSmall(shape.disk_bytes, want.disk_bytes)) {
    return Reject(why, absl::StrCat("nodes have ", core::FormatBytes(shape.disk_bytes),
                                    " disk, the class requests ", core::FormatBytes(want.disk_bytes)));
  }
  return true;
}

PoolPlan PlanPools(const core::WorkspaceClass& cls, const std::vector<core::NodePool>& pools) {
  PoolPlan plan;
  auto add_tier = [&](auto&& accept) {
    std::vector<const core::NodePool*> tier;
    for (const core::NodePool& pool : pools) {
      if (accept(pool) && PoolCanEverHold(cls, pool)) tier.push_back(&pool);
    }
    if (!tier.empty()) plan.tiers.push_back(std::move(tier));
  };

  if (cls.is_gpu()) {
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

  if (GpuPoolGuardAllows(cls, pools)) {
    add_tier([](const core::NodePool& pool) { return pool.is_gpu(); });
  } else {
    add_tier([](const core::NodePool& pool) { return !pool.is_gpu(); });
  }
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

  const bool guard_allows = !cls.is_gpu() && GpuPoolGuardAllows(cls, pools);
  std::vector<std::string> parts;
  for (const core::NodePool& pool : pools) {
    if (static_cast<int>(parts.size()) == kMaxPoolsInReason) {
      parts.push_back(absl::StrCat("and ", pools.size() - kMaxPoolsInReason, " more"));
      break;
    }
    std::string why;
    if (!PoolCanEverHold(cls, pool, &why)) {
      // Shape reasons first: they say more than the guard.
    } else if (!cls.is_gpu() && pool.is_gpu() && !guard_allows) {
      why = "GPU pool, kept for GPU classes (a CPU class uses it only when its pool_selector "
            "matches it and no CPU pool)";
    } else {
      why = "could hold it";
    }
    parts.push_back(absl::StrCat("pool ", pool.id, ": ", why));
  }
  return absl::StrCat(prefix, ": ", absl::StrJoin(parts, "; "));
}

}  // namespace wsched::placement
