#include "server/core/builtin_devices.h"

namespace wsched::core {

const std::vector<BuiltinDevice>& BuiltinDevices() {
  // Numbers from the kernel's devices.txt; they are fixed, not dynamic.
  static const auto* const kDevices = new std::vector<BuiltinDevice>{
      {"fuse", DeviceNode{"/dev/fuse", 'c', 10, 229, "rwm"}},
      {"tun", DeviceNode{"/dev/net/tun", 'c', 10, 200, "rwm"}},
      {"kvm", DeviceNode{"/dev/kvm", 'c', 10, 232, "rwm"}},
  };
  return *kDevices;
}

std::optional<DeviceNode> FindBuiltinDevice(absl::string_view name) {
  for (const BuiltinDevice& device : BuiltinDevices()) {
    if (device.name == name) return device.node;
  }
  return std::nullopt;
}

std::optional<std::string> BuiltinDeviceName(const DeviceNode& node) {
  for (const BuiltinDevice& device : BuiltinDevices()) {
    if (device.node == node) return std::string(device.name);
  }
  return std::nullopt;
}

std::vector<absl::string_view> BuiltinDeviceNames() {
  std::vector<absl::string_view> names;
  for (const BuiltinDevice& device : BuiltinDevices()) names.push_back(device.name);
  return names;
}

}  // namespace wsched::core
