#include "server/catalog/feasibility.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/catalog/units.h"
#include "server/core/quantity.h"

namespace wsched::catalog {
namespace {

std::optional<std::string> SelectorMismatch(const core::WorkspaceClass& cls,
                                            const core::NodePool& pool) {
  for (const auto& [key, value] : cls.pool_selector) {
    auto it = pool.labels.find(key);
    if (it == pool.labels.end())
      return absl::StrCat("has no label ", key, " (pool_selector wants ", value, ")");
    if (it->second != value) {
      return absl::StrCat("label ", key, " is ", it->second, ", pool_selector wants ", value);
    }
  }
  return std::nullopt;
}

std::optional<std::string> TooSmall(absl::string_view what, int64_t has, int64_t needs,
                                    std::string (*format)(int64_t)) {
  if (has >= needs) return std::nullopt;
  return absl::StrCat("node ", what, " ", format(has), " < class ", what, " ", format(needs));
}

}  // namespace

std::optional<std::string> WhyPoolCannotHold(const core::WorkspaceClass& cls,
                                             const core::NodePool& pool) {
  if (pool.max_size <= 0) return "max_size is 0";
  if (auto mismatch = SelectorMismatch(cls, pool)) return mismatch;
  const core::NodeShape& node = pool.shape;
  if (cls.is_gpu()) {
    if (!pool.is_gpu()) return "has no GPUs";
    const auto& models = cls.gpu.models;
    if (!models.empty() &&
        std::find(models.begin(), models.end(), node.gpu_model) == models.end()) {
      return absl::StrCat("gpu_model \"", node.gpu_model, "\" is not in models [",
                          absl::StrJoin(models, ", "), "]");
    }
    if (node.gpus_per_node < cls.gpu.count) {
      return absl::StrCat("node has ", node.gpus_per_node, " GPUs, class needs ", cls.gpu.count);
    }
  } else if (pool.is_gpu() && cls.pool_selector.empty()) {
    return "is a GPU pool and the class has no pool_selector asking for it";
  }
  const core::ClassResources& need = cls.resources;
  if (auto small =
          TooSmall("cpu", node.cpu_millis, need.cpu_request_millis, core::FormatCpuMillis)) {
    return small;
  }
  if (auto small = TooSmall("memory", node.memory_bytes, need.memory_bytes, FormatSize)) {
    return small;
  }
  if (node.ephemeral_storage_bytes > 0) {
    if (auto small = TooSmall("ephemeral_storage", node.ephemeral_storage_bytes,
                              need.ephemeral_storage_bytes, FormatSize)) {
      return small;
    }
  }
  if (node.disk_bytes > 0) {
    if (auto small = TooSmall("disk", node.disk_bytes, need.disk_bytes, FormatSize)) return small;
  }
  return std::nullopt;
}

}  // namespace wsched::catalog
