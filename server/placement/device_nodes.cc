#include "server/placement/device_nodes.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace wsched::placement {
namespace {

// /dev/nvidia0, /dev/nvidia17: one GPU each.
bool IsPerGpuNode(absl::string_view path) {
  if (!absl::ConsumePrefix(&path, "/dev/nvidia") || path.empty()) return false;
  for (char c : path) {
    if (!absl::ascii_isdigit(c)) return false;
  }
  return true;
}

}  // namespace

int MergeDeviceNodes(std::vector<core::DeviceNode>& base,
                     const std::vector<core::DeviceNode>& extra) {
  absl::flat_hash_set<std::string> paths;
  for (const core::DeviceNode& node : base) paths.insert(node.path);
  int appended = 0;
  for (const core::DeviceNode& node : extra) {
    if (paths.insert(node.path).second) {
      base.push_back(node);
      ++appended;
    }
  }
  return appended;
}

absl::Status CheckClassDevices(const std::vector<core::DeviceNode>& devices) {
  for (const core::DeviceNode& device : devices) {
    const std::string& path = device.path;
    if (!absl::StartsWith(path, "/dev/") || absl::StrContains(path, "..")) {
      return absl::InvalidArgumentError(
          absl::StrCat("class device ", path, ": must be a path under /dev/"));
    }
    if (device.type != 'c' && device.type != 'b') {
      return absl::InvalidArgumentError(
          absl::StrCat("class device ", path, ": type must be 'c' or 'b'"));
    }
    if (IsPerGpuNode(path) || absl::StartsWith(path, "/dev/vfio/")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "class device ", path, ": GPU and VFIO device nodes come from placement, not the class"));
    }
  }
  return absl::OkStatus();
}

}  // namespace wsched::placement
