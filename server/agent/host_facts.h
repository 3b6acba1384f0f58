// Facts about the host itself: kernel, OS, CPUs, memory, hostname.
// Parsers take text so they are testable without files.
#ifndef WSCHED_SERVER_AGENT_HOST_FACTS_H_
#define WSCHED_SERVER_AGENT_HOST_FACTS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/agent/rooted_fs.h"

namespace wsched::agent {

struct OsRelease {
  std::string id;          // "ubuntu"
  std::string version_id;  // "22.04"
};

// ID and VERSION_ID of an os-release(5) file; values may be quoted.
OsRelease ParseOsRelease(absl::string_view text);
// /etc/os-release, else /usr/lib/os-release; empty fields when neither exists.
absl::StatusOr<OsRelease> ReadOsRelease(const RootedFs& fs);

// The running kernel release, as `uname -r` prints it. Read from procfs
// rather than uname(2) so that a containerised agent and tests see the root's
// kernel, not their own.
absl::StatusOr<std::string> ReadKernelRelease(const RootedFs& fs);

// Number of "processor" entries in /proc/cpuinfo.
int CountProcessors(absl::string_view cpuinfo);
absl::StatusOr<int64_t> ReadCpuMillis(const RootedFs& fs);

// MemTotal of /proc/meminfo, in bytes.
absl::StatusOr<int64_t> ParseMemTotalBytes(absl::string_view meminfo);
absl::StatusOr<int64_t> ReadMemoryBytes(const RootedFs& fs);

// The root's hostname (lower-cased, as node names are DNS names); falls back
// to gethostname(2) when procfs does not say.
std::string ReadHostname(const RootedFs& fs);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_HOST_FACTS_H_
