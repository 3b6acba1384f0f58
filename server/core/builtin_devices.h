// Device nodes a class can ask for by name instead of spelling out numbers
// (the catalog), and that a node agent names in its wsched.io/device CDI
// spec when the node has them.
#ifndef WSCHED_SERVER_CORE_BUILTIN_DEVICES_H_
#define WSCHED_SERVER_CORE_BUILTIN_DEVICES_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/core/workspace_class.h"

namespace wsched::core {

struct BuiltinDevice {
  absl::string_view name;
  DeviceNode node;
};

// fuse (/dev/fuse c 10:229), tun (/dev/net/tun c 10:200), kvm (/dev/kvm c 10:232).
const std::vector<BuiltinDevice>& BuiltinDevices();

std::optional<DeviceNode> FindBuiltinDevice(absl::string_view name);
// The name of a device identical to a built-in one, so rendering writes
// "fuse" rather than its numbers.
std::optional<std::string> BuiltinDeviceName(const DeviceNode& node);
std::vector<absl::string_view> BuiltinDeviceNames();

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_BUILTIN_DEVICES_H_
