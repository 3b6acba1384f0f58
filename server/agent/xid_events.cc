#include "server/agent/xid_events.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/agent/nvidia_smi.h"

namespace wsched::agent {
namespace {

constexpr char kXidMarker[] = "NVRM: Xid (PCI:";
constexpr size_t kMaxReadPerCall = 1 << 20;  // A flood is read over several cycles.

// The time since boot a kmsg record ("6,1234,5678901234,-;") or a dmesg
// line ("[ 5678.901234] ") starts with.
std::optional<absl::Duration> SinceBoot(absl::string_view prefix) {
  prefix = absl::StripAsciiWhitespace(prefix);
  if (absl::ConsumePrefix(&prefix, "[")) {
    size_t close = prefix.find(']');
    double seconds = 0;
    if (close == absl::string_view::npos ||
        !absl::SimpleAtod(absl::StripAsciiWhitespace(prefix.substr(0, close)), &seconds) ||
        seconds < 0) {
      return std::nullopt;
    }
    return absl::Seconds(seconds);
  }
  size_t semicolon = prefix.find(';');
  if (semicolon == absl::string_view::npos) return std::nullopt;
  std::vector<absl::string_view> fields = absl::StrSplit(prefix.substr(0, semicolon), ',');
  int64_t micros = 0;
  if (fields.size() < 3 || !absl::SimpleAtoi(fields[2], &micros) || micros < 0) return std::nullopt;
  return absl::Microseconds(micros);
}

}  // namespace

std::optional<XidEvent> ParseXidLine(absl::string_view line) {
  size_t marker = line.find(kXidMarker);
  if (marker == absl::string_view::npos) return std::nullopt;
  absl::string_view rest = line.substr(marker + strlen(kXidMarker));
  size_t close = rest.find("): ");
  if (close == absl::string_view::npos) return std::nullopt;
  // The driver names the device ("0000:3b:00"); the GPU is its function 0.
  absl::StatusOr<std::string> address =
      NormalizePciBusId(absl::StrCat(absl::StripAsciiWhitespace(rest.substr(0, close)), ".0"));
  if (!address.ok()) return std::nullopt;
  rest = rest.substr(close + 3);
  size_t comma = rest.find(',');
  XidEvent event;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(rest.substr(0, comma)), &event.xid) ||
      event.xid <= 0) {
    return std::nullopt;
  }
  event.pci_address = *std::move(address);
  if (comma != absl::string_view::npos) {
    event.text = std::string(absl::StripAsciiWhitespace(rest.substr(comma + 1)));
  }
  event.since_boot = SinceBoot(line.substr(0, marker));
  return event;
}

std::optional<absl::Duration> ParseUptime(absl::string_view text) {
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::StripAsciiWhitespace(text), ' ', absl::SkipEmpty());
  double seconds = 0;
  if (fields.empty() || !absl::SimpleAtod(fields[0], &seconds) || seconds < 0) return std::nullopt;
  return absl::Seconds(seconds);
}

absl::StatusOr<std::unique_ptr<KernelLogReader>> KernelLogReader::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    std::string message = absl::StrCat(path, ": ", std::strerror(errno));
    if (errno == EACCES || errno == EPERM) return absl::PermissionDeniedError(message);
    if (errno == ENOENT) return absl::NotFoundError(message);
    return absl::UnavailableError(message);
  }
  return std::unique_ptr<KernelLogReader>(new KernelLogReader(fd));
}

KernelLogReader::~KernelLogReader() { ::close(fd_); }

absl::StatusOr<std::vector<std::string>> KernelLogReader::ReadNew() {
  std::vector<std::string> lines;
  // /dev/kmsg refuses a read smaller than its record; records are < 8 KiB.
  char buffer[16384];
  size_t total = 0;
  while (total < kMaxReadPerCall) {
    ssize_t n = ::read(fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    // EPIPE: records were overwritten before we read them; the next read
    // goes on with the oldest one left.
    if (n < 0 && errno == EPIPE) continue;
    if (n < 0 && errno == EAGAIN) break;  // Nothing more for now.
    if (n < 0) return absl::UnavailableError(absl::StrCat("kernel log: ", std::strerror(errno)));
    if (n == 0) break;  // End of a plain file.
    total += static_cast<size_t>(n);
    partial_.append(buffer, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t newline; (newline = partial_.find('\n', start)) != std::string::npos;
         start = newline + 1) {
      lines.push_back(partial_.substr(start, newline - start));
    }
    partial_.erase(0, start);
  }
  return lines;
}

const XidRule* XidTracker::Add(const XidEvent& event, absl::Time now,
                               std::optional<absl::Duration> uptime) {
  const XidRule* rule = FindXidRule(event.xid);
  if (rule == nullptr || !rule->unhealthy) return rule;
  absl::Time at = now;
  if (event.since_boot && uptime && *event.since_boot <= *uptime) {
    at = now - (*uptime - *event.since_boot);
  }
  Latest& latest = latest_[event.pci_address];
  if (latest.at <= at || latest.xid == 0) latest = {event.xid, at};
  return rule;
}

std::map<std::string, std::string> XidTracker::Unhealthy(absl::Time now) const {
  std::map<std::string, std::string> unhealthy;
  for (const auto& [address, latest] : latest_) {
    if (now - latest.at >= hold_) continue;
    const XidRule* rule = FindXidRule(latest.xid);
    unhealthy[address] = absl::StrCat("XID ", latest.xid, ": ", rule ? rule->meaning : "GPU error");
  }
  return unhealthy;
}

}  // namespace wsched::agent
