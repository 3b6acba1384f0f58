// The agent's text parsers (nvidia-smi CSV, /proc/driver/nvidia files,
// /proc/devices, os-release, cpuinfo, meminfo): any bytes a compromised or
// broken node could produce, without crashing, and with results that keep
// the rules the server will apply to them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "server/agent/host_facts.h"
#include "server/agent/nvidia_proc.h"
#include "server/agent/nvidia_smi.h"
#include "server/core/validation.h"
#include "tests/fuzz/fuzz_check.h"

namespace agent = wsched::agent;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > (1 << 16)) return 0;
  const uint8_t which = data[0];
  absl::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (which % 8) {
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
  }
  return 0;
}
