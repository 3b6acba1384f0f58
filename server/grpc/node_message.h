// A node as the API shows it: one mapping for GetNode, ListNodes, the
// inventory's answers and WatchNodes.
#ifndef WSCHED_SERVER_GRPC_NODE_MESSAGE_H_
#define WSCHED_SERVER_GRPC_NODE_MESSAGE_H_

#include "server/core/node.h"
#include "server/inventory/node_inventory.h"
#include "wsched/v1/inventory.pb.h"

namespace wsched::grpc_api {

v1::NodeState NodeStateToProto(core::NodeState state);
v1::DriverState DriverStateToProto(core::DriverState state);
void NodeToProto(const inventory::NodeView &view, v1::Node *out);

} // namespace wsched::grpc_api

#endif // WSCHED_SERVER_GRPC_NODE_MESSAGE_H_
