#include "server/simulate/sim_node.h"

#include "absl/strings/str_cat.h"
#include "server/core/mig_profiles.h"

namespace wsched::simulate {
namespace {

// The capability device nodes' major on the simulated nodes (nvidia-caps).
constexpr int kCapsMajor = 235;

}  // namespace

void CutGpu(core::Gpu& gpu, const std::vector<core::MigLayoutSlice>& layout, int cut) {
  core::GpuMig& mig = *gpu.mig;
  mig.instances.clear();
  // Two minors per slice, distinct per GPU and cut (the values do not matter
  // to placement, only that every slice has its own).
  int minor = gpu.index * 1000 + (cut % 50) * 16;
  for (size_t k = 0; k < layout.size(); ++k) {
    const core::MigProfile* profile = core::FindProfile(mig.profiles, layout[k].profile);
    if (profile == nullptr) continue;  // The planner cuts only from the GPU's own table.
    core::MigInstance slice;
    slice.profile = profile->name;
    slice.gpu_instance = static_cast<int>(k) + 1;
    slice.compute_instance = 0;
    slice.start = layout[k].start;
    slice.size = profile->size;
    slice.uuid = absl::StrCat("MIG-", gpu.uuid, "-", cut, "-", k);
    slice.gi_access = core::DeviceNode{absl::StrCat("/dev/nvidia-caps/nvidia-cap", minor),
                                       'c', kCapsMajor, minor, "r"};
    slice.ci_access = core::DeviceNode{absl::StrCat("/dev/nvidia-caps/nvidia-cap", minor + 1),
                                       'c', kCapsMajor, minor + 1, "r"};
    minor += 2;
    mig.instances.push_back(std::move(slice));
  }
}

core::NodeInfo NodeOfShape(const std::string& name, const core::NodePool& pool) {
  core::NodeInfo node;
  node.name = name;
  node.pool = pool.id;
  node.provider_id = absl::StrCat("sim://", name);
  node.cpu_millis = pool.shape.cpu_millis;
  node.memory_bytes = pool.shape.memory_bytes;
  node.ephemeral_storage_bytes = pool.shape.ephemeral_storage_bytes;
  node.disk_bytes = pool.shape.disk_bytes;
  const std::vector<core::MigProfile>* table =
      pool.mig.kind == core::MigLayoutKind::kWhole
          ? nullptr
          : core::KnownMigProfiles(pool.shape.gpu_model);
  const core::MigLayoutPlan plan =
      table == nullptr ? core::MigLayoutPlan{}
                       : core::LayOutMig(*table, core::StartingMigProfiles(pool.mig, *table));
  for (int i = 0; i < pool.shape.gpus_per_node; ++i) {
    core::Gpu gpu;
    gpu.index = i;
    gpu.uuid = absl::StrCat("GPU-", name, "-", i);
    gpu.pci_address = absl::StrCat("0000:", 0x10 + i, ":00.0");
    gpu.model = pool.shape.gpu_model;
    gpu.numa_node = i < pool.shape.gpus_per_node / 2 ? 0 : 1;
    gpu.iommu_group = i;
    if (table != nullptr && plan.legal()) {
      gpu.mig = core::GpuMig{.enabled = true, .pending_enabled = true, .profiles = *table};
      CutGpu(gpu, plan.slices, 0);
    }
    node.gpus.push_back(gpu);
  }
  return node;
}

}  // namespace wsched::simulate
