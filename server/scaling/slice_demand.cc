#include "server/scaling/slice_demand.h"

#include <string>
#include <vector>

#include "server/core/mig_layout.h"
#include "server/core/mig_profiles.h"

namespace wsched::scaling {
namespace {

int FixedSlicesOf(const core::MigLayout& layout, const core::WorkspaceClass& cls) {
  int slices = 0;
  for (const std::string& profile : layout.profiles) {
    for (const std::string& wanted : cls.gpu.mig_profiles) {
      if (profile == wanted) {
        ++slices;
        break;
      }
    }
  }
  return slices;
}

// The most instances of `profile` one GPU with `table` holds.
int MostOnOneGpu(const std::vector<core::MigProfile>& table, const std::string& profile) {
  for (int n = core::kMigComputeSlices; n > 0; --n) {
    if (core::LayOutMig(table, std::vector<std::string>(n, profile)).legal()) return n;
  }
  return 0;
}

}  // namespace

int SlicesPerGpu(const core::NodePool& pool, const core::WorkspaceClass& cls) {
  switch (pool.mig.kind) {
    case core::MigLayoutKind::kWhole:
      return 0;
    case core::MigLayoutKind::kFixed:
      return FixedSlicesOf(pool.mig, cls);
    case core::MigLayoutKind::kByDemand:
      break;
  }
  const std::vector<core::MigProfile>* table = core::KnownMigProfiles(pool.shape.gpu_model);
  if (table == nullptr) return 0;
  for (const std::string& profile : cls.gpu.mig_profiles) {
    if (int most = MostOnOneGpu(*table, profile); most > 0) return most;
  }
  return 0;
}

PendingGroup PendingGroupOf(const core::NodePool& pool, const core::WorkspaceClass& cls,
                            int64_t count) {
  const Capacity one = Capacity::OfClass(cls);
  if (!cls.is_slice()) return {cls.id, one, count};
  const int per_gpu = SlicesPerGpu(pool, cls);
  if (per_gpu <= 0) {
    Capacity never = one;
    never.gpus = Capacity::kUnlimited;
    return {cls.id, never, count};
  }
  Capacity gpu_of_slices{.gpus = 1,
                         .cpu_millis = one.cpu_millis * per_gpu,
                         .memory_bytes = one.memory_bytes * per_gpu,
                         .ephemeral_storage_bytes = one.ephemeral_storage_bytes * per_gpu,
                         .disk_bytes = one.disk_bytes * per_gpu};
  return {cls.id, gpu_of_slices, (count + per_gpu - 1) / per_gpu};
}

}  // namespace wsched::scaling
