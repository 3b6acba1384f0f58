#include "server/agent/host_facts.h"

#include <unistd.h>

#include <climits>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace wsched::agent {
namespace {

// os-release values follow shell quoting rules: '...' is literal, "..." may
// hold backslash escapes of " \ ` $.
std::string UnquoteShellValue(absl::string_view value) {
  if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') {
    return std::string(value.substr(1, value.size() - 2));
  }
  if (value.size() < 2 || value.front() != '"' || value.back() != '"') {
    return std::string(value);
  }
  value = value.substr(1, value.size() - 2);
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '\\' && i + 1 < value.size() &&
        absl::string_view("\"\\`$").find(value[i + 1]) != absl::string_view::npos) {
      ++i;
    }
    out.push_back(value[i]);
  }
  return out;
}

}  // namespace

OsRelease ParseOsRelease(absl::string_view text) {
  OsRelease release;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    std::vector<absl::string_view> key_value = absl::StrSplit(line, absl::MaxSplits('=', 1));
    if (key_value.size() != 2) continue;
    if (key_value[0] == "ID") release.id = UnquoteShellValue(key_value[1]);
    if (key_value[0] == "VERSION_ID") release.version_id = UnquoteShellValue(key_value[1]);
  }
  return release;
}

absl::StatusOr<OsRelease> ReadOsRelease(const RootedFs& fs) {
  for (const char* path : {"/etc/os-release", "/usr/lib/os-release"}) {
    absl::StatusOr<std::string> text = fs.ReadFile(path);
    if (text.ok()) return ParseOsRelease(*text);
    if (!absl::IsNotFound(text.status())) return text.status();
  }
  return OsRelease{};
}

absl::StatusOr<std::string> ReadKernelRelease(const RootedFs& fs) {
  absl::StatusOr<std::string> release = fs.ReadTrimmed("/proc/sys/kernel/osrelease");
  if (!release.ok()) return release.status();
  if (release->empty()) {
    return absl::DataLossError(absl::StrCat(fs.root(), "/proc/sys/kernel/osrelease is empty"));
  }
  return release;
}

int CountProcessors(absl::string_view cpuinfo) {
  int count = 0;
  for (absl::string_view line : absl::StrSplit(cpuinfo, '\n')) {
    // "processor\t: 3"; the key must be exactly "processor" (arm64 also
    // prints "model name\t: ARMv8 Processor rev 1").
    std::vector<absl::string_view> key_value = absl::StrSplit(line, absl::MaxSplits(':', 1));
    if (key_value.size() == 2 && absl::StripAsciiWhitespace(key_value[0]) == "processor") {
      ++count;
    }
  }
  return count;
}

absl::StatusOr<int64_t> ReadCpuMillis(const RootedFs& fs) {
  absl::StatusOr<std::string> cpuinfo = fs.ReadFile("/proc/cpuinfo");
  if (!cpuinfo.ok()) return cpuinfo.status();
  int processors = CountProcessors(*cpuinfo);
  if (processors == 0) {
    return absl::DataLossError(absl::StrCat(fs.root(), "/proc/cpuinfo lists no processor"));
  }
  return int64_t{processors} * 1000;
}

absl::StatusOr<int64_t> ParseMemTotalBytes(absl::string_view meminfo) {
  for (absl::string_view line : absl::StrSplit(meminfo, '\n')) {
    if (!absl::ConsumePrefix(&line, "MemTotal:")) continue;
    // "MemTotal:       16318024 kB" - the kernel always reports kibibytes.
    line = absl::StripAsciiWhitespace(line);
    if (!absl::ConsumeSuffix(&line, "kB")) break;
    int64_t kib = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &kib) || kib <= 0) break;
    // A corrupt file must not wrap around into a plausible size.
    if (kib > std::numeric_limits<int64_t>::max() / 1024) break;
    return kib * 1024;
  }
  return absl::DataLossError("meminfo has no valid \"MemTotal: <n> kB\" line");
}

absl::StatusOr<int64_t> ReadMemoryBytes(const RootedFs& fs) {
  absl::StatusOr<std::string> meminfo = fs.ReadFile("/proc/meminfo");
  if (!meminfo.ok()) return meminfo.status();
  absl::StatusOr<int64_t> bytes = ParseMemTotalBytes(*meminfo);
  if (!bytes.ok()) {
    return absl::DataLossError(
        absl::StrCat(fs.root(), "/proc/meminfo: ", bytes.status().message()));
  }
  return bytes;
}

std::string ReadHostname(const RootedFs& fs) {
  absl::StatusOr<std::string> name = fs.ReadTrimmed("/proc/sys/kernel/hostname");
  if (name.ok() && !name->empty()) return absl::AsciiStrToLower(*name);
  char buffer[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buffer, sizeof buffer - 1) != 0) return "";
  return absl::AsciiStrToLower(buffer);
}

}  // namespace wsched::agent
