// Fake nodes and classes for the placement tests and the benchmark.
#ifndef WSCHED_SERVER_PLACEMENT_TEST_NODES_H_
#define WSCHED_SERVER_PLACEMENT_TEST_NODES_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/core/mig_profiles.h"
#include "server/core/node.h"
#include "server/core/pool.h"
#include "server/core/workspace_class.h"

namespace wsched::placement::testing {

inline constexpr int64_t kGi = int64_t{1} << 30;

// An 8-GPU node: GPUs 0-3 on NUMA node 0, 4-7 on NUMA node 1; GPU i at
// 0000:<0x18+i>:00.0 in its own IOMMU group 40+i together with its audio
// function .1 and a bridge; 128 CPU, 1Ti memory; the four control devices.
inline core::NodeInfo FakeGpuNode(const std::string& name, const std::string& pool,
                                  const std::string& model = "h100", int gpus = 8) {
  core::NodeInfo node;
  node.name = name;
  node.pool = pool;
  node.provider_id = absl::StrCat("fake://", name);
  node.cpu_millis = 128000;
  node.memory_bytes = 1024 * kGi;
  node.ephemeral_storage_bytes = 2048 * kGi;
  node.disk_bytes = 4096 * kGi;
  node.kernel_version = "6.1.0-18-amd64";
  node.os_id = "debian";
  node.os_version = "12";
  node.driver_version = "550.54.15";
  for (int i = 0; i < gpus; ++i) {
    core::Gpu gpu;
    gpu.index = i;
    gpu.uuid = absl::StrCat("GPU-", name, "-", i);
    gpu.pci_address = absl::StrFormat("0000:%02x:00.0", 0x18 + i);
    gpu.model = model;
    gpu.memory_bytes = 80 * kGi;
    gpu.numa_node = i < gpus / 2 ? 0 : 1;
    gpu.iommu_group = 40 + i;
    gpu.iommu_group_members = {
        {absl::StrFormat("0000:%02x:00.1", 0x18 + i), "0x040300", "0x10de"},
        {absl::StrFormat("0000:%02x:01.0", 0x10 + i), "0x060400", "0x8086"},
    };
    node.gpus.push_back(gpu);
  }
  node.control_devices = {
      {"/dev/nvidiactl", 'c', 195, 255, "rwm"},
      {"/dev/nvidia-uvm", 'c', 508, 0, "rwm"},
      {"/dev/nvidia-uvm-tools", 'c', 508, 1, "rwm"},
      {"/dev/nvidia-modeset", 'c', 195, 254, "rwm"},
  };
  return node;
}

// Joins GPUs `a` and `b` of `node` by NVLink (both report it) and every
// other pair through the host (SYS), as `nvidia-smi topo -m` would show a
// PCIe node with NVLink bridges.
inline void LinkPair(core::NodeInfo& node, int a, int b, int nvlinks = 4) {
  for (core::Gpu& gpu : node.gpus) {
    for (core::Gpu& peer : node.gpus) {
      if (peer.index == gpu.index) continue;
      auto it = std::find_if(gpu.links.begin(), gpu.links.end(),
                             [&](const core::GpuLink& l) { return l.peer == peer.index; });
      if (it == gpu.links.end()) {
        gpu.links.push_back({peer.index, core::GpuLinkKind::kSys, 0});
        it = gpu.links.end() - 1;
      }
      bool pair = (gpu.index == a && peer.index == b) || (gpu.index == b && peer.index == a);
      if (pair) *it = {peer.index, core::GpuLinkKind::kNvlink, nvlinks};
    }
  }
}

// Reports the drivers of every GPU and group member of `node` as its agent
// would: the GPUs and their functions on `driver`, bridges on pcieport.
inline void ReportDrivers(core::NodeInfo& node, const std::string& driver) {
  for (core::Gpu& gpu : node.gpus) {
    gpu.driver = driver;
    for (core::PciDevice& member : gpu.iommu_group_members) {
      member.driver = member.pci_class.rfind("0x0604", 0) == 0 ? "pcieport" : driver;
    }
  }
}

// A CPU node: 64 CPU, 256Gi memory, no GPUs.
inline core::NodeInfo FakeCpuNode(const std::string& name, const std::string& pool) {
  core::NodeInfo node;
  node.name = name;
  node.pool = pool;
  node.cpu_millis = 64000;
  node.memory_bytes = 256 * kGi;
  node.ephemeral_storage_bytes = 1024 * kGi;
  node.disk_bytes = 2048 * kGi;
  return node;
}

// Lays every GPU of `node` out as `profiles` (slot order), MIG on: slice k
// of GPU i is GPU instance k + 1 with compute instance 0, named
// "MIG-<node>-<i>-<k>", with the model's profile table when wsched knows it.
inline void LayOutSlices(core::NodeInfo& node, const std::vector<std::string>& profiles) {
  for (core::Gpu& gpu : node.gpus) {
    core::GpuMig mig;
    mig.enabled = mig.pending_enabled = true;
    if (const auto* known = core::KnownMigProfiles(gpu.model)) mig.profiles = *known;
    int start = 0;
    for (size_t k = 0; k < profiles.size(); ++k) {
      // The slots from the model's table; one slot for a profile it lacks.
      const core::MigProfile* profile = core::FindProfile(mig.profiles, profiles[k]);
      const int size = profile != nullptr ? profile->size : 1;
      core::MigInstance slice;
      slice.profile = profiles[k];
      slice.gpu_instance = static_cast<int>(k) + 1;
      slice.compute_instance = 0;
      slice.start = start;
      slice.size = size;
      slice.uuid = absl::StrCat("MIG-", node.name, "-", gpu.index, "-", k);
      start += size;
      mig.instances.push_back(std::move(slice));
    }
    gpu.mig = std::move(mig);
  }
}

inline core::NodePool GpuPool(const std::string& id, const std::string& model, int gpus = 8) {
  core::NodePool pool;
  pool.id = id;
  pool.labels = {{"gpu", model}, {"kind", "gpu"}};
  pool.shape = {128000, 1024 * kGi, 2048 * kGi, 4096 * kGi, gpus, model};
  pool.max_size = 100;
  return pool;
}

inline core::NodePool CpuPool(const std::string& id) {
  core::NodePool pool;
  pool.id = id;
  pool.labels = {{"kind", "cpu"}};
  pool.shape = {64000, 256 * kGi, 1024 * kGi, 2048 * kGi, 0, ""};
  pool.max_size = 100;
  return pool;
}

// A GPU class: `gpus` GPUs of `models`, 8 CPU and 64Gi per workspace.
inline core::WorkspaceClass GpuClass(const std::string& id, int gpus,
                                     std::vector<std::string> models = {"h100"},
                                     core::Isolation isolation = core::Isolation::kContainer) {
  core::WorkspaceClass cls;
  cls.id = id;
  cls.resources = {8000, 8000, 64 * kGi, 50 * kGi, 100 * kGi};
  cls.gpu = {gpus, std::move(models), isolation};
  return cls;
}

// A slice class: one slice of the first of `profiles` with one free, 2 CPU
// and 16Gi per workspace.
inline core::WorkspaceClass SliceClass(const std::string& id, std::vector<std::string> profiles,
                                       std::vector<std::string> models = {"h200"}) {
  core::WorkspaceClass cls;
  cls.id = id;
  cls.resources = {2000, 2000, 16 * kGi, 10 * kGi, 20 * kGi};
  cls.gpu.models = std::move(models);
  cls.gpu.mig_profiles = std::move(profiles);
  return cls;
}

// A CPU class: 4 CPU, 16Gi per workspace.
inline core::WorkspaceClass CpuClass(const std::string& id) {
  core::WorkspaceClass cls;
  cls.id = id;
  cls.resources = {4000, 8000, 16 * kGi, 20 * kGi, 50 * kGi};
  return cls;
}

}  // namespace wsched::placement::testing

#endif  // WSCHED_SERVER_PLACEMENT_TEST_NODES_H_
