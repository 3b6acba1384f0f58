// Read-only access to a node's files below a root directory, so discovery can
// run against the real "/" , a host filesystem mounted into a container
// ("/host"), or a fake tree in tests - and never escape to the agent's own /.
#ifndef WSCHED_SERVER_AGENT_ROOTED_FS_H_
#define WSCHED_SERVER_AGENT_ROOTED_FS_H_

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace wsched::agent {

// Major/minor of a character device node.
struct DeviceNumbers {
  int64_t major = 0;
  int64_t minor = 0;
};

class RootedFs {
 public:
  explicit RootedFs(std::string root);

  const std::string& root() const { return root_; }

  // Where `node_path` (absolute, as the node sees it) lives on this machine.
  // Symlinks are followed as if `root` were "/": absolute targets restart at
  // the root and ".." stops there. sysfs is a forest of symlinks, and an
  // absolute one followed naively would read the agent's own /sys instead.
  // Fails only on a symlink loop.
  absl::StatusOr<std::filesystem::path> Resolve(absl::string_view node_path) const;

  bool Exists(absl::string_view node_path) const;

  // Whole file; NotFound when it does not exist.
  absl::StatusOr<std::string> ReadFile(absl::string_view node_path) const;
  // The first `bytes` bytes (fewer when the file is shorter): a library's
  // ELF header without reading the library.
  absl::StatusOr<std::string> ReadHead(absl::string_view node_path, size_t bytes) const;
  // Whole file without surrounding whitespace (sysfs values end in "\n").
  absl::StatusOr<std::string> ReadTrimmed(absl::string_view node_path) const;

  // Entry names of a directory, sorted; NotFound when it does not exist.
  absl::StatusOr<std::vector<std::string>> ListDir(absl::string_view node_path) const;

  // Device numbers when the path is a real character device. Fake trees use
  // plain files, for which this is empty.
  std::optional<DeviceNumbers> CharDevice(absl::string_view node_path) const;

 private:
  std::string root_;
};

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_ROOTED_FS_H_
