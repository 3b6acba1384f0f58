// Kernel XID events: the NVIDIA driver logs every GPU error as a kernel
// message, e.g.
//   NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.
// The agent reads them from /dev/kmsg (or, in tests, a file of journal or
// dmesg lines), keeps the latest health-relevant one per GPU, and reports the
// GPU unhealthy for a while after it (gpu_health_rules.h says which XIDs
// count).
#ifndef WSCHED_SERVER_AGENT_XID_EVENTS_H_
#define WSCHED_SERVER_AGENT_XID_EVENTS_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/agent/gpu_health_rules.h"

namespace wsched::agent {

struct XidEvent {
  std::string pci_address;  // The GPU, in sysfs form: "0000:3b:00.0".
  int xid = 0;
  std::string text;  // The driver's words after the number.
  // Time since boot, when the line carries it (/dev/kmsg records, dmesg).
  std::optional<absl::Duration> since_boot;
  friend bool operator==(const XidEvent&, const XidEvent&) = default;
};

// One kernel log line in any of the usual forms: a /dev/kmsg record
// ("4,1234,5678901234,-;NVRM: Xid ..."), dmesg ("[ 5678.901234] NVRM: Xid
// ...") or the journal ("Jan 12 10:00:00 node kernel: NVRM: Xid ...").
// nullopt for any other line, and for an XID line that does not parse.
std::optional<XidEvent> ParseXidLine(absl::string_view line);

// Seconds since boot from /proc/uptime ("12345.67 45678.90").
std::optional<absl::Duration> ParseUptime(absl::string_view text);

// Reads what was appended to a kernel log since the last call, never
// blocking: /dev/kmsg gives one record per read and the whole ring buffer
// first; a plain file gives its lines.
class KernelLogReader {
 public:
  // PermissionDenied where /dev/kmsg is restricted (kernel.dmesg_restrict).
  static absl::StatusOr<std::unique_ptr<KernelLogReader>> Open(const std::string& path);
  ~KernelLogReader();
  KernelLogReader(const KernelLogReader&) = delete;
  KernelLogReader& operator=(const KernelLogReader&) = delete;

  // Complete lines that arrived since the last call.
  absl::StatusOr<std::vector<std::string>> ReadNew();

 private:
  explicit KernelLogReader(int fd) : fd_(fd) {}
  const int fd_;
  std::string partial_;  // A line still being written (plain files only).
};

// The latest health-relevant XID per GPU, and whether it still counts.
class XidTracker {
 public:
  // An unhealthy XID keeps its GPU unhealthy for `hold` after it happened.
  explicit XidTracker(absl::Duration hold) : hold_(hold) {}

  // Records `event`, read at `now` when the node had been up `uptime`
  // (which dates events that carry their time since boot; others count as
  // happening at `now`). Returns the rule that applied, or null for an XID
  // without one (which changes nothing).
  const XidRule* Add(const XidEvent& event, absl::Time now, std::optional<absl::Duration> uptime);

  // PCI address -> reason ("XID 79: GPU has fallen off the bus"), for GPUs
  // with an unhealthy XID less than `hold` before `now`.
  std::map<std::string, std::string> Unhealthy(absl::Time now) const;

 private:
  struct Latest {
    int xid = 0;
    absl::Time at;
  };
  const absl::Duration hold_;
  std::map<std::string, Latest> latest_;  // By PCI address; one per GPU.
};

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_XID_EVENTS_H_
