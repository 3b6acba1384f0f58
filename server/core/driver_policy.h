// Driver policy: which NVIDIA driver a kernel + OS needs, and its installer.
#ifndef WSCHED_SERVER_CORE_DRIVER_POLICY_H_
#define WSCHED_SERVER_CORE_DRIVER_POLICY_H_

#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

namespace wsched::core {

struct DriverPolicyEntry {
  // Exact kernel ("5.15.0-91-generic") or a glob ("5.15.0-*-generic").
  std::string kernel;
  std::string os_id;       // /etc/os-release ID, e.g. "ubuntu".
  std::string os_version;  // VERSION_ID, e.g. "22.04"; empty = any.
  std::string driver_version;  // e.g. "550.54.15".
  std::string driver_branch;   // e.g. "550".
  std::string installer_repo;  // e.g. "registry.example.com/nvidia/driver".
  friend bool operator==(const DriverPolicyEntry&, const DriverPolicyEntry&) = default;
};

struct DriverRequirement {
  std::string driver_version;
  // <repo>:<driver_branch>-<kernel>-<os_id><os_version>
  std::string installer_image;
};

// Glob match with '*' and '?'.
bool GlobMatch(absl::string_view pattern, absl::string_view text);

// First entry for the kernel and OS: exact kernel matches win over patterns.
// nullopt when no entry matches (reported to operators, never guessed).
std::optional<DriverRequirement> FindDriverRequirement(
    const std::vector<DriverPolicyEntry>& policy, absl::string_view kernel,
    absl::string_view os_id, absl::string_view os_version);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_DRIVER_POLICY_H_
