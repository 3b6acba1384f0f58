// The agent's text parsers (nvidia-smi CSV, MIG tables and topology matrix,
// /proc/driver/nvidia files, /proc/devices, os-release, cpuinfo, meminfo):
// any bytes a compromised or broken node could produce, without crashing,
// and with results that keep the rules the server will apply to them.
//
// The first byte picks the parser (mod 16); the MIG parsers that read two
// commands' output take them split at the first NUL byte.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/agent/host_facts.h"
#include "server/agent/nvidia_mig.h"
#include "server/agent/nvidia_proc.h"
#include "server/agent/nvidia_smi.h"
#include "server/agent/nvidia_topology.h"
#include "server/core/validation.h"
#include "tests/fuzz/fuzz_check.h"

namespace agent = wsched::agent;
namespace core = wsched::core;

namespace {

// The text before and after the first NUL (all of it and nothing without one).
std::pair<absl::string_view, absl::string_view> SplitAtNul(absl::string_view text) {
  size_t nul = text.find('\0');
  if (nul == absl::string_view::npos) return {text, absl::string_view()};
  return {text.substr(0, nul), text.substr(nul + 1)};
}

void CheckPlacements(int size, const std::vector<int>& starts) {
  FUZZ_CHECK(size >= 1 && size <= core::kMigMemorySlots, "size %d", size);
  for (size_t i = 0; i < starts.size(); ++i) {
    FUZZ_CHECK(starts[i] >= 0 && starts[i] + size <= core::kMigMemorySlots, "start %d size %d",
               starts[i], size);
    FUZZ_CHECK(i == 0 || starts[i] > starts[i - 1], "starts not ascending");
  }
}

void CheckProfiles(absl::string_view lgip, absl::string_view lgipp) {
  auto profiles = agent::ParseMigProfiles(lgip, lgipp);
  if (!profiles.ok()) return;
  for (const auto& [gpu, on_gpu] : *profiles) {
    FUZZ_CHECK(gpu >= 0, "gpu %d", gpu);
    for (const core::MigProfile& profile : on_gpu) {
      FUZZ_CHECK(profile.compute_slices >= 1 && profile.compute_slices <= core::kMigComputeSlices,
                 "slices %d", profile.compute_slices);
      FUZZ_CHECK(profile.id >= 0 && profile.memory_bytes >= 0, "id %d", profile.id);
      FUZZ_CHECK(!profile.name.empty(), "empty profile name");
      CheckPlacements(profile.size, profile.starts);
    }
  }
}

void CheckInstances(absl::string_view lgi, absl::string_view lci) {
  auto gpu_instances = agent::ParseMigGpuInstances(lgi);
  auto compute_instances = agent::ParseMigComputeInstances(lci);
  if (!gpu_instances.ok() || !compute_instances.ok()) return;
  auto instances = agent::PairMigInstances(*gpu_instances, *compute_instances);
  if (!instances.ok()) return;
  for (const auto& [gpu, on_gpu] : *instances) {
    unsigned taken = 0;
    for (size_t i = 0; i < on_gpu.size(); ++i) {
      const core::MigInstance& instance = on_gpu[i];
      FUZZ_CHECK(instance.start >= 0 && instance.size >= 1 &&
                     instance.start + instance.size <= core::kMigMemorySlots,
                 "placement %d:%d", instance.start, instance.size);
      const unsigned slots = ((1u << instance.size) - 1) << instance.start;
      FUZZ_CHECK((taken & slots) == 0, "overlapping GPU instances on GPU %d", gpu);
      taken |= slots;
      FUZZ_CHECK(i == 0 || instance.gpu_instance > on_gpu[i - 1].gpu_instance,
                 "GPU instances not ordered");
      FUZZ_CHECK(instance.compute_instance >= -1, "compute instance %d", instance.compute_instance);
    }
  }
}

void CheckTopology(absl::string_view text) {
  auto links = agent::ParseNvidiaSmiTopology(text);
  if (!links.ok()) return;
  const int gpus = static_cast<int>(links->size());
  for (const auto& [gpu, peers] : *links) {
    FUZZ_CHECK(gpu >= 0 && gpu < gpus, "gpu %d of %d", gpu, gpus);
    FUZZ_CHECK(static_cast<int>(peers.size()) == gpus - 1, "%zu peers of %d", peers.size(), gpus);
    for (const core::GpuLink& link : peers) {
      FUZZ_CHECK(link.peer != gpu && link.peer >= 0 && link.peer < gpus, "peer %d", link.peer);
      FUZZ_CHECK((link.kind == core::GpuLinkKind::kNvlink) == (link.nvlinks > 0), "nvlinks %d",
                 link.nvlinks);
      // Symmetric: the peer says the same about this GPU.
      const std::vector<core::GpuLink>& back = links->at(link.peer);
      bool found = false;
      for (const core::GpuLink& other : back) {
        if (other.peer == gpu) found = other.kind == link.kind && other.nvlinks == link.nvlinks;
      }
      FUZZ_CHECK(found, "GPU %d and %d disagree", gpu, link.peer);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > (1 << 16)) return 0;
  const uint8_t which = data[0];
  absl::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (which % 16) {
    case 0: {
      auto usage = agent::ParseNvidiaSmiCsv(text);
      if (!usage.ok()) break;
      for (const agent::GpuUsage& gpu : *usage) {
        FUZZ_CHECK(wsched::core::IsPciAddress(gpu.pci_address), "bus id %s",
                   gpu.pci_address.c_str());
        FUZZ_CHECK(gpu.utilization_percent >= -1 && gpu.utilization_percent <= 100, "util %d",
                   gpu.utilization_percent);
        FUZZ_CHECK(gpu.memory_used_bytes >= -1 && gpu.memory_total_bytes >= -1, "memory");
      }
      break;
    }
    case 1: {
      auto address = agent::NormalizePciBusId(text);
      if (address.ok()) {
        FUZZ_CHECK(wsched::core::IsPciAddress(*address), "normalised %s", address->c_str());
      }
      break;
    }
    case 2:
      (void)agent::ParseProcDriverVersion(text);
      break;
    case 3: {
      agent::GpuInformation info = agent::ParseGpuInformation(text);
      if (info.device_minor) FUZZ_CHECK(*info.device_minor >= 0, "minor %d", *info.device_minor);
      break;
    }
    case 4: {
      absl::string_view driver = text.substr(0, text.find('\n'));
      absl::string_view devices = text.substr(std::min(text.size(), driver.size() + 1));
      auto major = agent::ParseCharDeviceMajor(devices, driver);
      if (major) FUZZ_CHECK(*major >= 0, "major %lld", static_cast<long long>(*major));
      break;
    }
    case 5:
      (void)agent::ParseOsRelease(text);
      break;
    case 6:
      FUZZ_CHECK(agent::CountProcessors(text) >= 0, "negative processor count");
      break;
    case 7: {
      auto bytes = agent::ParseMemTotalBytes(text);
      if (bytes.ok()) FUZZ_CHECK(*bytes >= 0, "negative MemTotal");
      break;
    }
    case 8: {
      auto modes = agent::ParseMigModeCsv(text);
      if (!modes.ok()) break;
      for (const agent::MigModeLine& mode : *modes) {
        FUZZ_CHECK(wsched::core::IsPciAddress(mode.pci_address), "bus id %s",
                   mode.pci_address.c_str());
        FUZZ_CHECK(mode.reported || (!mode.enabled && !mode.pending_enabled),
                   "a mode without a report");
      }
      break;
    }
    case 9: {
      auto [lgip, lgipp] = SplitAtNul(text);
      CheckProfiles(lgip, lgipp);
      break;
    }
    case 10: {
      auto [lgi, lci] = SplitAtNul(text);
      CheckInstances(lgi, lci);
      break;
    }
    case 11: {
      auto devices = agent::ParseMigDeviceList(text);
      if (!devices.ok()) break;
      for (const agent::MigDeviceUuid& device : *devices) {
        FUZZ_CHECK(device.uuid.rfind("MIG-", 0) == 0 && device.uuid.size() > 4, "uuid %s",
                   device.uuid.c_str());
        FUZZ_CHECK(device.gpu >= 0 && device.device >= 0, "device %d", device.device);
      }
      break;
    }
    case 12: {
      auto devices = agent::ParseMigDeviceQuery(text);
      if (!devices.ok()) break;
      for (const agent::MigDeviceIds& device : *devices) {
        FUZZ_CHECK(wsched::core::IsPciAddress(device.pci_address), "bus id %s",
                   device.pci_address.c_str());
        FUZZ_CHECK(device.gpu_instance >= 0 && device.compute_instance >= 0, "ids");
      }
      break;
    }
    case 13:
      CheckTopology(text);
      break;
    case 14: {
      auto minor = agent::ParseCapabilityMinor(text);
      if (minor.ok())
        FUZZ_CHECK(*minor >= 0 && *minor < (1 << 20), "minor %lld", static_cast<long long>(*minor));
      break;
    }
    case 15: {
      auto placements = agent::ParseMigPlacements(text);
      if (!placements.ok()) break;
      for (const auto& [gpu, by_id] : *placements) {
        for (const auto& [id, placed] : by_id) CheckPlacements(placed.size, placed.starts);
      }
      break;
    }
  }
  return 0;
}
