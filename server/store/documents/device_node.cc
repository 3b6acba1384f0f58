#include "server/store/documents/device_node.h"

#include <string>

namespace wsched::store::documents {

nlohmann::json DeviceNodeJson(const core::DeviceNode& device) {
  return {{"path", device.path},
          {"type", std::string(1, device.type)},
          {"major", device.major},
          {"minor", device.minor},
          {"permissions", device.permissions}};
}

nlohmann::json DeviceNodesJson(const std::vector<core::DeviceNode>& devices) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& device : devices) out.push_back(DeviceNodeJson(device));
  return out;
}

core::DeviceNode ReadDeviceNode(Fields& d) {
  std::string type = d.String("type");
  std::string permissions = d.String("permissions");
  return {d.String("path"), type.empty() ? 'c' : type[0], d.Int64("major"), d.Int64("minor"),
          permissions.empty() ? "rwm" : permissions};
}

std::vector<core::DeviceNode> ReadDeviceNodes(Fields& fields, const char* key) {
  std::vector<core::DeviceNode> out;
  for (Fields& d : fields.Objects(key)) out.push_back(ReadDeviceNode(d));
  return out;
}

}  // namespace wsched::store::documents
