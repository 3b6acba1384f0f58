#include "server/agent/nvidia_smi.h"

#include <cstring>
#include <limits>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/core/validation.h"
#include "server/process/process_runner.h"

namespace wsched::agent {
namespace {

constexpr int kBasicColumns = 7;
constexpr int kHealthColumns = 11;
constexpr int64_t kMiB = int64_t{1} << 20;
constexpr char kUnreachablePrefix[] = "Unable to determine the device handle for GPU";
// nvidia-smi output for a full node is a few KiB; anything near this is junk.
constexpr size_t kMaxOutputBytes = 4 << 20;
// A wedged driver can make nvidia-smi hang; the heartbeat must go on.
constexpr absl::Duration kKillGrace = absl::Milliseconds(500);

// "[N/A]", "[Not Supported]", "[Unknown Error]": nvidia-smi's "no value".
bool IsUnavailable(absl::string_view value) {
  return absl::StartsWith(value, "[") && absl::EndsWith(value, "]");
}

// Bracketed values that are the GPU's fault rather than "not supported".
bool IsGpuError(absl::string_view value) {
  for (absl::string_view error : {"[GPU requires reset]", "[Unknown Error]", "[GPU is lost]"}) {
    if (absl::EqualsIgnoreCase(value, error)) return true;
  }
  return false;
}

// "Yes"/"No" (or 1/0) columns; unavailable is "no".
bool ParseFlag(absl::string_view value, bool& out) {
  if (IsUnavailable(value)) {
    out = false;
    return true;
  }
  if (absl::EqualsIgnoreCase(value, "yes") || value == "1") {
    out = true;
    return true;
  }
  if (absl::EqualsIgnoreCase(value, "no") || value == "0") {
    out = false;
    return true;
  }
  return false;
}

// "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.
// Reboot the system to recover this GPU" (also without the space after
// "GPU", and on stderr: the sampler merges it in).
std::optional<GpuUsage> ParseUnreachable(absl::string_view line) {
  if (!absl::StartsWith(line, kUnreachablePrefix)) return std::nullopt;
  absl::string_view rest = absl::StripLeadingAsciiWhitespace(line.substr(strlen(kUnreachablePrefix)));
  size_t colon = rest.find(": ");
  if (colon == absl::string_view::npos) return std::nullopt;
  absl::StatusOr<std::string> address = NormalizePciBusId(rest.substr(0, colon));
  if (!address.ok()) return std::nullopt;
  GpuUsage gpu;
  gpu.pci_address = *std::move(address);
  gpu.error_state = std::string(absl::StripAsciiWhitespace(rest.substr(colon + 2)));
  if (gpu.error_state.empty()) gpu.error_state = "unreachable";
  return gpu;
}

absl::Status LineError(int line_number, absl::string_view line, absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("nvidia-smi output line ", line_number, ": ", problem, " in \"", line, "\""));
}

// Parses an optional non-negative integer column; -1 when unavailable.
bool ParseCount(absl::string_view value, int64_t& out) {
  if (IsUnavailable(value)) {
    out = -1;
    return true;
  }
  return absl::SimpleAtoi(value, &out) && out >= 0;
}

// Columns 8..11 of kNvidiaSmiQuery.
absl::Status ParseHealthColumns(const std::vector<absl::string_view>& fields, GpuUsage& usage) {
  if (!ParseCount(fields[7], usage.ecc_uncorrected_volatile)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ecc.errors.uncorrected.volatile.total \"", fields[7], "\" is not a count"));
  }
  const struct {
    const char* name;
    bool* out;
  } flags[] = {{"retired_pages.pending", &usage.retired_pages_pending},
               {"remapped_rows.pending", &usage.remapped_rows_pending},
               {"remapped_rows.failure", &usage.remapped_rows_failure}};
  for (size_t i = 0; i < 3; ++i) {
    if (!ParseFlag(fields[8 + i], *flags[i].out)) {
      return absl::InvalidArgumentError(
          absl::StrCat(flags[i].name, " \"", fields[8 + i], "\" is not Yes or No"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<GpuUsage> ParseLine(int line_number, absl::string_view line) {
  if (std::optional<GpuUsage> unreachable = ParseUnreachable(line)) return *unreachable;
  std::vector<absl::string_view> fields = absl::StrSplit(line, ',');
  if (fields.size() != kBasicColumns && fields.size() != kHealthColumns) {
    return LineError(line_number, line,
                     absl::StrCat("expected ", kBasicColumns, " comma-separated fields (",
                                  kNvidiaSmiBasicQuery, ") or ", kHealthColumns,
                                  " (with the health columns), got ", fields.size()));
  }
  for (absl::string_view& field : fields) field = absl::StripAsciiWhitespace(field);
  GpuUsage usage;
  // A GPU in a bad state shows it in any column, the name included.
  for (absl::string_view field : fields) {
    if (IsGpuError(field) && usage.error_state.empty()) usage.error_state = std::string(field);
  }

  // A GPU in a bad state may not even give its index, UUID or name; its
  // PCI address is what ties the line to the GPU.
  int index = 0;
  if (!IsGpuError(fields[0]) && (!absl::SimpleAtoi(fields[0], &index) || index < 0)) {
    return LineError(line_number, line, absl::StrCat("index \"", fields[0], "\" is not a number"));
  }
  if (!IsGpuError(fields[1])) {
    if (!absl::StartsWith(fields[1], "GPU-") || absl::StrContains(fields[1], ' ')) {
      return LineError(line_number, line, absl::StrCat("uuid \"", fields[1], "\" is not GPU-..."));
    }
    usage.uuid = std::string(fields[1]);
  }
  absl::StatusOr<std::string> address = NormalizePciBusId(fields[2]);
  if (!address.ok()) return LineError(line_number, line, address.status().message());
  usage.pci_address = *std::move(address);
  if (fields[3].empty()) return LineError(line_number, line, "empty name");
  if (!IsGpuError(fields[3])) usage.name = std::string(fields[3]);

  int64_t utilization = 0;
  if (!ParseCount(fields[4], utilization) || utilization > 100) {
    return LineError(line_number, line,
                     absl::StrCat("utilization.gpu \"", fields[4], "\" is not 0..100"));
  }
  usage.utilization_percent = static_cast<int>(utilization);
  int64_t used_mib = 0, total_mib = 0;
  // A count that would overflow as bytes is as malformed as a word here
  // (signed overflow is undefined; found by tests/fuzz/agent_parsers_fuzz.cc).
  constexpr int64_t kMaxMiB = std::numeric_limits<int64_t>::max() / kMiB;
  if (!ParseCount(fields[5], used_mib) || used_mib > kMaxMiB) {
    return LineError(line_number, line,
                     absl::StrCat("memory.used \"", fields[5], "\" is not a MiB count"));
  }
  if (!ParseCount(fields[6], total_mib) || total_mib > kMaxMiB) {
    return LineError(line_number, line,
                     absl::StrCat("memory.total \"", fields[6], "\" is not a MiB count"));
  }
  usage.memory_used_bytes = used_mib < 0 ? -1 : used_mib * kMiB;
  usage.memory_total_bytes = total_mib < 0 ? -1 : total_mib * kMiB;
  if (fields.size() == kHealthColumns) {
    if (absl::Status health = ParseHealthColumns(fields, usage); !health.ok()) {
      return LineError(line_number, line, health.message());
    }
  }
  return usage;
}

}  // namespace

absl::StatusOr<std::string> NormalizePciBusId(absl::string_view bus_id) {
  std::vector<absl::string_view> domain_rest = absl::StrSplit(bus_id, absl::MaxSplits(':', 1));
  uint32_t domain = 0;
  if (domain_rest.size() == 2 && domain_rest[0].size() >= 4 && domain_rest[0].size() <= 8 &&
      absl::SimpleHexAtoi(domain_rest[0], &domain) && domain <= 0xffff) {
    std::string address =
        absl::StrFormat("%04x:%s", domain, absl::AsciiStrToLower(domain_rest[1]));
    if (core::IsPciAddress(address)) return address;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("pci.bus_id \"", bus_id, "\" is not a PCI address like 00000000:3B:00.0"));
}

absl::StatusOr<std::vector<GpuUsage>> ParseNvidiaSmiCsv(absl::string_view text) {
  std::vector<GpuUsage> gpus;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    absl::StatusOr<GpuUsage> usage = ParseLine(line_number, line);
    if (!usage.ok()) return usage.status();
    gpus.push_back(*std::move(usage));
  }
  return gpus;
}

// Runs nvidia-smi with stdout and stderr together when asked: it exits
// non-zero when one GPU is lost, still prints the others, and says which GPU
// on stderr. A run past the timeout or the output limit is an error, not a
// result.
absl::StatusOr<process::Result> RunNvidiaSmi(const std::vector<std::string>& argv,
                                             absl::Duration timeout, bool merge_stderr) {
  absl::StatusOr<process::Result> result = process::RunCommand({.argv = argv,
                                                                .timeout = timeout,
                                                                .kill_grace = kKillGrace,
                                                                .output_limit = kMaxOutputBytes,
                                                                .merge_stderr = merge_stderr});
  if (!result.ok()) return result.status();
  if (result->timed_out) {
    return absl::DeadlineExceededError(
        absl::StrCat(argv[0], " did not finish within ", absl::FormatDuration(timeout)));
  }
  if (result->out.truncated()) {
    return absl::ResourceExhaustedError(
        absl::StrCat(argv[0], " printed more than ", kMaxOutputBytes, " bytes"));
  }
  return result;
}

std::string FoldedOutput(absl::string_view output) {
  // NVML's "Failed to initialize NVML: Driver/library version mismatch"
  // comes over several lines: folded into one, so the error is one log line.
  return absl::StrJoin(
      absl::StrSplit(output.substr(0, 200), absl::ByAnyChar("\r\n"), absl::SkipWhitespace()), " | ",
      [](std::string* out, absl::string_view part) {
        absl::StrAppend(out, absl::StripAsciiWhitespace(part));
      });
}

absl::StatusOr<std::vector<GpuUsage>> NvidiaSmiSampler::Run(const char* query,
                                                             absl::Duration timeout) {
  absl::StatusOr<process::Result> result = RunNvidiaSmi(
      {path_, absl::StrCat("--query-gpu=", query), "--format=csv,noheader,nounits"}, timeout);
  if (!result.ok()) return result.status();
  absl::StatusOr<std::vector<GpuUsage>> gpus = ParseNvidiaSmiCsv(result->out.text);
  if (result->exit_code == 0) return gpus;
  // Failed, but with GPUs to show: one GPU is lost and the others are fine.
  if (gpus.ok() && !gpus->empty()) return gpus;
  std::string hint = FoldedOutput(result->out.text);
  return absl::UnavailableError(absl::StrCat(
      path_, " failed with ",
      result->signal != 0 ? absl::StrCat("signal ", result->signal)
                          : absl::StrCat("exit status ", result->exit_code),
      hint.empty() ? "" : ": ", hint));
}

absl::StatusOr<std::vector<GpuUsage>> NvidiaSmiSampler::Sample(absl::Duration timeout) {
  if (health_columns_) {
    absl::StatusOr<std::vector<GpuUsage>> gpus = Run(kNvidiaSmiQuery, timeout);
    if (gpus.ok() || !absl::StrContains(gpus.status().message(), "is not a valid field")) {
      return gpus;
    }
    // An older driver: usage and the nvidia-smi states still tell something.
    health_columns_ = false;
  }
  return Run(kNvidiaSmiBasicQuery, timeout);
}

std::vector<GpuUsage> KeepKnownIdentity(const std::vector<GpuUsage>& known,
                                        const std::vector<GpuUsage>& fresh) {
  std::vector<GpuUsage> out;
  for (const GpuUsage& gpu : fresh) {
    GpuUsage merged = gpu;
    for (const GpuUsage& old : known) {
      if (old.pci_address != gpu.pci_address) continue;
      if (merged.uuid.empty()) merged.uuid = old.uuid;
      if (merged.name.empty()) merged.name = old.name;
      if (merged.memory_total_bytes < 0) merged.memory_total_bytes = old.memory_total_bytes;
    }
    out.push_back(std::move(merged));
  }
  return out;
}

absl::StatusOr<std::vector<GpuUsage>> SampleNvidiaSmi(const std::string& path,
                                                      absl::Duration timeout) {
  return NvidiaSmiSampler(path).Sample(timeout);
}

}  // namespace wsched::agent
