// GPU usage from nvidia-smi: the one source for utilisation and memory use,
// and a fallback for UUIDs and models when /proc/driver/nvidia is hidden.
#ifndef WSCHED_SERVER_AGENT_NVIDIA_SMI_H_
#define WSCHED_SERVER_AGENT_NVIDIA_SMI_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace wsched::agent {

// The columns ParseNvidiaSmiCsv expects, in this order.
inline constexpr char kNvidiaSmiQuery[] =
    "index,uuid,pci.bus_id,name,utilization.gpu,memory.used,memory.total";

// One GPU's line of nvidia-smi output. -1 marks a value nvidia-smi could not
// give ("[N/A]", "[Not Supported]"), which happens on some boards and while a
// GPU is in a bad state.
struct GpuUsage {
  std::string uuid;         // "GPU-6f1e..."
  std::string pci_address;  // Normalised to sysfs form, "0000:3b:00.0".
  std::string name;         // "NVIDIA H100 80GB HBM3"
  int utilization_percent = -1;
  int64_t memory_used_bytes = -1;
  int64_t memory_total_bytes = -1;
  friend bool operator==(const GpuUsage&, const GpuUsage&) = default;
};

// nvidia-smi prints "00000000:3B:00.0" (8-digit domain, upper case); sysfs
// names the same function "0000:3b:00.0".
absl::StatusOr<std::string> NormalizePciBusId(absl::string_view bus_id);

// Output of `nvidia-smi --query-gpu=<kNvidiaSmiQuery>
// --format=csv,noheader,nounits`. Any malformed line fails the whole parse,
// naming the line: half-understood output must not become inventory.
absl::StatusOr<std::vector<GpuUsage>> ParseNvidiaSmiCsv(absl::string_view text);

// Runs nvidia-smi at `path` (a name is searched in PATH) and parses it.
// NotFound when the binary is absent, so callers can treat "no nvidia-smi"
// as "no usage data" and everything else as an error worth logging.
absl::StatusOr<std::vector<GpuUsage>> SampleNvidiaSmi(const std::string& path,
                                                      absl::Duration timeout = absl::Seconds(5));

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_NVIDIA_SMI_H_
