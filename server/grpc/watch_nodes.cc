#include "server/grpc/watch_nodes.h"

#include "server/core/error_reason.h"
#include "server/grpc/node_identity.h"
#include "server/grpc/node_message.h"
#include "server/inventory/node_inventory.h"

namespace wsched::grpc_api {
namespace {

v1::NodeChange::What WhatToProto(watch::NodeWhat what) {
  switch (what) {
  case watch::NodeWhat::kExisting:
    return v1::NodeChange::WHAT_EXISTING;
  case watch::NodeWhat::kRegistered:
    return v1::NodeChange::WHAT_REGISTERED;
  case watch::NodeWhat::kChanged:
    return v1::NodeChange::WHAT_CHANGED;
  case watch::NodeWhat::kRemoved:
    return v1::NodeChange::WHAT_REMOVED;
  }
  return v1::NodeChange::WHAT_UNSPECIFIED;
}

} // namespace

absl::StatusOr<watch::NodeFilter>
NodeStreamFace::FilterFor(const Principal &who, const Request &request,
                          metrics::Metrics *metrics) {
  watch::NodeFilter filter{request.filter().pool(),
                           request.filter().node_name()};
  if (who.Has(Role::kAdmin) || who.Has(Role::kControlPlane))
    return filter;
  // The auth table admits agents besides: each follows the node it speaks
  // for, as WatchWorkspaces' agents do.
  if (filter.node.empty()) {
    return core::InvalidFieldError(
        "filter.node_name",
        "a node's agent watches its own node: set it to that node");
  }
  if (absl::Status s =
          CheckSpeaksForNode(who, filter.node, "WatchNodes", metrics);
      !s.ok()) {
    return s;
  }
  return filter;
}

void NodeStreamFace::ChangeToProto(const watch::NodeChange &change,
                                   int64_t version, v1::NodeChange *out) {
  const watch::NodeHappened &happened = *change.happened;
  out->set_what(WhatToProto(change.what));
  out->set_version(version);
  out->set_node_version(happened.version);
  v1::Node *node = out->mutable_node();
  if (!happened.after) {
    // Removed: what is known of it is its name and pool.
    node->mutable_info()->set_name(happened.name);
    node->mutable_info()->set_pool(happened.pool);
    return;
  }
  NodeToProto(inventory::NodeInventory::CommittedViewOf(*happened.after), node);
  // Not followed (the proto says why): held moves with every placement.
  node->clear_held();
  node->clear_workspace_count();
}

template class WatchStream<NodeStreamFace>;

} // namespace wsched::grpc_api
