// Device nodes a class can ask for by name instead of spelling out numbers.
#ifndef WSCHED_SERVER_CATALOG_BUILTIN_DEVICES_H_
#define WSCHED_SERVER_CATALOG_BUILTIN_DEVICES_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/core/workspace_class.h"

namespace wsched::catalog {

struct BuiltinDevice {
  absl::string_view name;
  core::DeviceNode node;
};

// fuse (/dev/fuse c 10:229), tun (/dev/net/tun c 10:200), kvm (/dev/kvm c 10:232).
const std::vector<BuiltinDevice>& BuiltinDevices();

std::optional<core::DeviceNode> FindBuiltinDevice(absl::string_view name);
// The name of a device identical to a built-in one, so rendering writes
// "fuse" rather than its numbers.
std::optional<std::string> BuiltinDeviceName(const core::DeviceNode& node);
std::vector<absl::string_view> BuiltinDeviceNames();

}  // namespace wsched::catalog

#endif  // WSCHED_SERVER_CATALOG_BUILTIN_DEVICES_H_
