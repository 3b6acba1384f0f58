#include "server/agent/nvidia_smi.h"

#include <limits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "server/agent/subprocess.h"
#include "server/core/validation.h"

namespace wsched::agent {
namespace {

constexpr int kColumns = 7;
constexpr int64_t kMiB = int64_t{1} << 20;

// "[N/A]", "[Not Supported]", "[Unknown Error]": nvidia-smi's "no value".
bool IsUnavailable(absl::string_view value) {
  return absl::StartsWith(value, "[") && absl::EndsWith(value, "]");
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

absl::StatusOr<GpuUsage> ParseLine(int line_number, absl::string_view line) {
  std::vector<absl::string_view> fields = absl::StrSplit(line, ',');
  if (fields.size() != kColumns) {
    return LineError(line_number, line,
                     absl::StrCat("expected ", kColumns, " comma-separated fields (",
                                  kNvidiaSmiQuery, "), got ", fields.size()));
  }
  for (absl::string_view& field : fields) field = absl::StripAsciiWhitespace(field);

  int index = 0;
  if (!absl::SimpleAtoi(fields[0], &index) || index < 0) {
    return LineError(line_number, line, absl::StrCat("index \"", fields[0], "\" is not a number"));
  }
  GpuUsage usage;
  if (!absl::StartsWith(fields[1], "GPU-") || absl::StrContains(fields[1], ' ')) {
    return LineError(line_number, line, absl::StrCat("uuid \"", fields[1], "\" is not GPU-..."));
  }
  usage.uuid = std::string(fields[1]);
  absl::StatusOr<std::string> address = NormalizePciBusId(fields[2]);
  if (!address.ok()) return LineError(line_number, line, address.status().message());
  usage.pci_address = *std::move(address);
  if (fields[3].empty()) return LineError(line_number, line, "empty name");
  usage.name = std::string(fields[3]);

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

absl::StatusOr<std::vector<GpuUsage>> SampleNvidiaSmi(const std::string& path,
                                                      absl::Duration timeout) {
  absl::StatusOr<std::string> output = RunAndCapture(
      {path, absl::StrCat("--query-gpu=", kNvidiaSmiQuery), "--format=csv,noheader,nounits"},
      timeout);
  if (!output.ok()) return output.status();
  return ParseNvidiaSmiCsv(*output);
}

}  // namespace wsched::agent
