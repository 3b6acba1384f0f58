// A device node (core::DeviceNode) in a stored document: classes list them,
// nodes report their control devices, placements hand them out.
#ifndef WSCHED_SERVER_STORE_DOCUMENTS_DEVICE_NODE_H_
#define WSCHED_SERVER_STORE_DOCUMENTS_DEVICE_NODE_H_

#include <vector>

#include <nlohmann/json.hpp>

#include "server/core/workspace_class.h"
#include "server/store/documents/fields.h"

namespace wsched::store::documents {

nlohmann::json DeviceNodeJson(const core::DeviceNode& device);
nlohmann::json DeviceNodesJson(const std::vector<core::DeviceNode>& devices);
// A missing type reads as 'c' and missing permissions as "rwm".
core::DeviceNode ReadDeviceNode(Fields& device);
std::vector<core::DeviceNode> ReadDeviceNodes(Fields& fields, const char* key);

}  // namespace wsched::store::documents

#endif  // WSCHED_SERVER_STORE_DOCUMENTS_DEVICE_NODE_H_
