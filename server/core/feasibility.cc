#include "server/core/feasibility.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "server/core/mig_profiles.h"
#include "server/core/quantity.h"

namespace wsched::core {
namespace {

bool ModelAccepted(const WorkspaceClass& cls, const NodeShape& node) {
  const std::vector<std::string>& models = cls.gpu.models;
  return models.empty() || std::find(models.begin(), models.end(), node.gpu_model) != models.end();
}

// A model without a built-in table (core/mig_profiles.h) may still have the
// profile: its GPUs' own reports decide, so only a known table says no.
bool ModelHasAProfile(const WorkspaceClass& cls, const NodeShape& node) {
  const std::vector<MigProfile>* known = KnownMigProfiles(node.gpu_model);
  if (known == nullptr) return true;
  return std::any_of(cls.gpu.mig_profiles.begin(), cls.gpu.mig_profiles.end(),
                     [&](const std::string& name) { return FindProfile(*known, name) != nullptr; });
}

bool TooManyGpus(const WorkspaceClass& cls, const NodeShape& node) {
  return cls.gpu.count > node.gpus_per_node || cls.gpu.count > kMaxGpusPerWorkspace;
}

// The first CPU pool the class's selector matches: while there is one, the
// selector was not written to reach GPU pools.
const NodePool* MatchingCpuPool(const WorkspaceClass& cls, const std::vector<NodePool>& pools) {
  auto it = std::find_if(pools.begin(), pools.end(), [&](const NodePool& pool) {
    return !pool.is_gpu() && pool.Matches(cls.pool_selector);
  });
  return it == pools.end() ? nullptr : &*it;
}

bool CpuClassAsksForGpuPools(const WorkspaceClass& cls, const std::vector<NodePool>& pools) {
  return !cls.pool_selector.empty() && MatchingCpuPool(cls, pools) == nullptr;
}

// A zero in the pool's shape is "not stated": it rules nothing out.
bool ShapeTooSmall(int64_t has, int64_t needs) { return has > 0 && needs > has; }

std::optional<InfeasibleReason> ShapeReason(const ClassResources& need, const NodeShape& node) {
  if (ShapeTooSmall(node.cpu_millis, need.cpu_request_millis)) return InfeasibleReason::kCpu;
  if (ShapeTooSmall(node.memory_bytes, need.memory_bytes)) return InfeasibleReason::kMemory;
  if (ShapeTooSmall(node.ephemeral_storage_bytes, need.ephemeral_storage_bytes)) {
    return InfeasibleReason::kEphemeralStorage;
  }
  if (ShapeTooSmall(node.disk_bytes, need.disk_bytes)) return InfeasibleReason::kDisk;
  return std::nullopt;
}

std::string SelectorMismatchMessage(const WorkspaceClass& cls, const NodePool& pool) {
  for (const auto& [key, value] : cls.pool_selector) {
    auto it = pool.labels.find(key);
    if (it == pool.labels.end()) {
      return absl::StrCat("has no label ", key, " (pool_selector wants ", value, ")");
    }
    if (it->second != value) {
      return absl::StrCat("label ", key, " is ", it->second, ", pool_selector wants ", value);
    }
  }
  return "pool_selector does not match";  // Unreachable: the rule found a mismatch.
}

std::string TooManyGpusMessage(const WorkspaceClass& cls, const NodeShape& node) {
  if (cls.gpu.count > node.gpus_per_node) {
    return absl::StrCat("node has ", node.gpus_per_node, " GPUs, class needs ", cls.gpu.count);
  }
  return absl::StrCat("class needs ", cls.gpu.count, " GPUs, more than the ",
                      kMaxGpusPerWorkspace, " one workspace can have");
}

std::string CpuClassOnGpuPoolMessage(const WorkspaceClass& cls,
                                     const std::vector<NodePool>& pools) {
  if (cls.pool_selector.empty()) {
    return "is a GPU pool and the class has no pool_selector asking for it";
  }
  const NodePool* cpu_pool = MatchingCpuPool(cls, pools);
  return absl::StrCat("is a GPU pool and the class's pool_selector also matches CPU pool ",
                      cpu_pool != nullptr ? cpu_pool->id : "",
                      " (a CPU class uses GPU pools only when its pool_selector matches no "
                      "CPU pool)");
}

std::string TooSmallMessage(absl::string_view what, const std::string& has,
                            const std::string& needs) {
  return absl::StrCat("node ", what, " ", has, " < class ", what, " ", needs);
}

std::string Explain(InfeasibleReason reason, const WorkspaceClass& cls, const NodePool& pool,
                    const std::vector<NodePool>& catalog_pools) {
  const NodeShape& node = pool.shape;
  const ClassResources& need = cls.resources;
  switch (reason) {
    case InfeasibleReason::kPoolCannotGrow:
      return absl::StrCat("max_size is ", pool.max_size, ", so it never has a node");
    case InfeasibleReason::kSelectorMismatch: return SelectorMismatchMessage(cls, pool);
    case InfeasibleReason::kNoGpus: return "has no GPUs";
    case InfeasibleReason::kGpuModel:
      return absl::StrCat("gpu_model \"", node.gpu_model, "\" is not in models [",
                          absl::StrJoin(cls.gpu.models, ", "), "]");
    case InfeasibleReason::kTooManyGpus: return TooManyGpusMessage(cls, node);
    case InfeasibleReason::kGpuBinding:
      return "has gpu_binding vfio: its GPUs are bound to vfio-pci and go to vm classes only";
    case InfeasibleReason::kMigProfile:
      return absl::StrCat("gpu_model \"", node.gpu_model, "\" has no MIG profile of [",
                          absl::StrJoin(cls.gpu.mig_profiles, ", "), "]");
    case InfeasibleReason::kMigLayout:
      return absl::StrCat("has mig.layout ", MigLayoutKindName(pool.mig.kind),
                          ": its GPUs are cut into MIG slices and go to slice classes only");
    case InfeasibleReason::kCpuClassOnGpuPool:
      return CpuClassOnGpuPoolMessage(cls, catalog_pools);
    case InfeasibleReason::kCpu:
      return TooSmallMessage("cpu", FormatCpuMillis(node.cpu_millis),
                             FormatCpuMillis(need.cpu_request_millis));
    case InfeasibleReason::kMemory:
      return TooSmallMessage("memory", FormatSize(node.memory_bytes),
                             FormatSize(need.memory_bytes));
    case InfeasibleReason::kEphemeralStorage:
      return TooSmallMessage("ephemeral_storage", FormatSize(node.ephemeral_storage_bytes),
                             FormatSize(need.ephemeral_storage_bytes));
    case InfeasibleReason::kDisk:
      return TooSmallMessage("disk", FormatSize(node.disk_bytes), FormatSize(need.disk_bytes));
  }
  return InfeasibleReasonName(reason);
}

}  // namespace

const char* InfeasibleReasonName(InfeasibleReason reason) {
  switch (reason) {
    case InfeasibleReason::kPoolCannotGrow: return "pool_cannot_grow";
    case InfeasibleReason::kSelectorMismatch: return "selector_mismatch";
    case InfeasibleReason::kNoGpus: return "no_gpus";
    case InfeasibleReason::kGpuModel: return "gpu_model";
    case InfeasibleReason::kTooManyGpus: return "too_many_gpus";
    case InfeasibleReason::kGpuBinding: return "gpu_binding";
    case InfeasibleReason::kMigProfile: return "mig_profile";
    case InfeasibleReason::kMigLayout: return "mig_layout";
    case InfeasibleReason::kCpuClassOnGpuPool: return "cpu_class_on_gpu_pool";
    case InfeasibleReason::kCpu: return "cpu";
    case InfeasibleReason::kMemory: return "memory";
    case InfeasibleReason::kEphemeralStorage: return "ephemeral_storage";
    case InfeasibleReason::kDisk: return "disk";
  }
  return "unknown";
}

std::optional<InfeasibleReason> FirstInfeasibility(const WorkspaceClass& cls, const NodePool& pool,
                                                   const std::vector<NodePool>& catalog_pools) {
  if (pool.max_size <= 0) return InfeasibleReason::kPoolCannotGrow;
  if (!pool.Matches(cls.pool_selector)) return InfeasibleReason::kSelectorMismatch;
  if (cls.is_slice()) {
    if (!pool.is_gpu()) return InfeasibleReason::kNoGpus;
    if (!ModelAccepted(cls, pool.shape)) return InfeasibleReason::kGpuModel;
    if (pool.gpu_binding == GpuBinding::kVfio) return InfeasibleReason::kGpuBinding;
    if (!ModelHasAProfile(cls, pool.shape)) return InfeasibleReason::kMigProfile;
  } else if (cls.is_gpu()) {
    if (!pool.is_gpu()) return InfeasibleReason::kNoGpus;
    if (!ModelAccepted(cls, pool.shape)) return InfeasibleReason::kGpuModel;
    if (TooManyGpus(cls, pool.shape)) return InfeasibleReason::kTooManyGpus;
    if (cls.gpu.isolation == Isolation::kContainer && pool.gpu_binding == GpuBinding::kVfio) {
      return InfeasibleReason::kGpuBinding;
    }
    if (pool.mig.kind != MigLayoutKind::kWhole) return InfeasibleReason::kMigLayout;
  } else if (pool.is_gpu() && !CpuClassAsksForGpuPools(cls, catalog_pools)) {
    return InfeasibleReason::kCpuClassOnGpuPool;
  }
  return ShapeReason(cls.resources, pool.shape);
}

PoolVerdict CanEverHold(const WorkspaceClass& cls, const NodePool& pool,
                        const std::vector<NodePool>& catalog_pools) {
  std::optional<InfeasibleReason> reason = FirstInfeasibility(cls, pool, catalog_pools);
  if (!reason) return {};
  return {reason, Explain(*reason, cls, pool, catalog_pools)};
}

}  // namespace wsched::core
