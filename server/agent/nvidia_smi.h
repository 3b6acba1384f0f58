// GPU usage from nvidia-smi: the one source for utilisation and memory use,
// and a fallback for UUIDs and models when /proc/driver/nvidia is hidden.
#ifndef WSCHED_SERVER_AGENT_NVIDIA_SMI_H_
#define WSCHED_SERVER_AGENT_NVIDIA_SMI_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/process/process_runner.h"

namespace wsched::agent {

// The columns the agent queries, in this order: usage, memory, then health.
inline constexpr char kNvidiaSmiQuery[] =
    "index,uuid,pci.bus_id,name,utilization.gpu,memory.used,memory.total,"
    "ecc.errors.uncorrected.volatile.total,retired_pages.pending,remapped_rows.pending,"
    "remapped_rows.failure";
// Without the health columns, for drivers that do not know them (nvidia-smi
// then refuses the whole query: "... is not a valid field to query").
inline constexpr char kNvidiaSmiBasicQuery[] =
    "index,uuid,pci.bus_id,name,utilization.gpu,memory.used,memory.total";

// One GPU's line of nvidia-smi output. -1 marks a value nvidia-smi could not
// give ("[N/A]", "[Not Supported]"), which happens on some boards and while a
// GPU is in a bad state.
struct GpuUsage {
  std::string uuid;         // "GPU-6f1e..."; empty on an unreachable GPU's line.
  std::string pci_address;  // Normalised to sysfs form, "0000:3b:00.0".
  std::string name;         // "NVIDIA H100 80GB HBM3"
  int utilization_percent = -1;
  int64_t memory_used_bytes = -1;
  int64_t memory_total_bytes = -1;
  // Health columns; -1 / false when not queried or not supported.
  int64_t ecc_uncorrected_volatile = -1;  // Uncorrected ECC errors since the driver loaded.
  bool retired_pages_pending = false;     // Pages wait for a reset to be retired.
  bool remapped_rows_pending = false;     // Rows wait for a reset to be remapped.
  bool remapped_rows_failure = false;     // Row remapping failed: the memory is bad.
  // The GPU's own error, when nvidia-smi showed one: a value such as
  // "[GPU requires reset]", "[Unknown Error]" or "[GPU is lost]", or the
  // reason of an "Unable to determine the device handle for GPU ..." line
  // ("GPU is lost.  Reboot the system to recover this GPU"). Empty when none.
  std::string error_state;
  friend bool operator==(const GpuUsage&, const GpuUsage&) = default;
};

// nvidia-smi prints "00000000:3B:00.0" (8-digit domain, upper case); sysfs
// names the same function "0000:3b:00.0".
absl::StatusOr<std::string> NormalizePciBusId(absl::string_view bus_id);

// Output of `nvidia-smi --query-gpu=<kNvidiaSmiQuery or kNvidiaSmiBasicQuery>
// --format=csv,noheader,nounits`. A GPU nvidia-smi cannot reach appears as
// "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost..."
// and becomes an entry with only pci_address and error_state. Any other
// malformed line fails the whole parse, naming the line: half-understood
// output must not become inventory.
absl::StatusOr<std::vector<GpuUsage>> ParseNvidiaSmiCsv(absl::string_view text);

// Runs nvidia-smi at `path` (a name is searched in PATH) and parses it, with
// the health columns while the driver knows them.
class NvidiaSmiSampler {
 public:
  explicit NvidiaSmiSampler(std::string path) : path_(std::move(path)) {}
  // NotFound when the binary is absent, so callers can treat "no
  // nvidia-smi" as "no usage data" and everything else as an error worth
  // logging. A non-zero exit still counts when the output parses: nvidia-smi
  // fails that way when one GPU is lost and prints the others.
  absl::StatusOr<std::vector<GpuUsage>> Sample(absl::Duration timeout = absl::Seconds(5));
  bool health_columns() const { return health_columns_; }

 private:
  absl::StatusOr<std::vector<GpuUsage>> Run(const char* query, absl::Duration timeout);

  const std::string path_;
  bool health_columns_ = true;  // Until nvidia-smi refuses them.
};

// The sample discovery should name GPUs with: `fresh`, except that a GPU
// whose line lost its UUID or memory (a GPU in a bad state) keeps what
// `known` said about it, so that a failing GPU does not look like a
// different GPU and make the agent register the node again.
std::vector<GpuUsage> KeepKnownIdentity(const std::vector<GpuUsage>& known,
                                        const std::vector<GpuUsage>& fresh);

// Runs nvidia-smi (`argv[0]`; a name is searched in PATH) without a shell.
// A command that ran, whatever its exit status, is a Result; NotFound when
// the binary is absent, DeadlineExceeded past `timeout`, ResourceExhausted
// past 4 MiB of output. With `merge_stderr` stderr is read into the output
// (the usage query: lost GPUs are named there); without, it is kept apart,
// so a warning cannot break a table that is parsed.
absl::StatusOr<process::Result> RunNvidiaSmi(const std::vector<std::string>& argv,
                                             absl::Duration timeout, bool merge_stderr = true);

// The first 200 bytes of a failed command's output as one line (NVML's
// messages come over several), for an error message.
std::string FoldedOutput(absl::string_view output);

// One sample with a fresh sampler.
absl::StatusOr<std::vector<GpuUsage>> SampleNvidiaSmi(const std::string& path,
                                                      absl::Duration timeout = absl::Seconds(5));

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_NVIDIA_SMI_H_
