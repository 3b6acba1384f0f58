#include "server/grpc/node_message.h"

#include <google/protobuf/util/time_util.h>

#include "server/convert/convert.h"

namespace wsched::grpc_api {

using google::protobuf::util::TimeUtil;

v1::NodeState NodeStateToProto(core::NodeState state) {
  switch (state) {
  case core::NodeState::kProvisioning:
    return v1::NODE_STATE_PROVISIONING;
  case core::NodeState::kReady:
    return v1::NODE_STATE_READY;
  case core::NodeState::kCordoned:
    return v1::NODE_STATE_CORDONED;
  case core::NodeState::kDraining:
    return v1::NODE_STATE_DRAINING;
  case core::NodeState::kLost:
    return v1::NODE_STATE_LOST;
  }
  return v1::NODE_STATE_UNSPECIFIED;
}

v1::DriverState DriverStateToProto(core::DriverState state) {
  switch (state) {
  case core::DriverState::kNotNeeded:
    return v1::DRIVER_STATE_NOT_NEEDED;
  case core::DriverState::kReady:
    return v1::DRIVER_STATE_READY;
  case core::DriverState::kNeedsDriver:
    return v1::DRIVER_STATE_NEEDS_DRIVER;
  case core::DriverState::kInstallFailed:
    return v1::DRIVER_STATE_INSTALL_FAILED;
  case core::DriverState::kNoPolicy:
    return v1::DRIVER_STATE_NO_POLICY;
  case core::DriverState::kInstalling:
    return v1::DRIVER_STATE_INSTALLING;
  case core::DriverState::kOutdated:
    return v1::DRIVER_STATE_OUTDATED;
  }
  return v1::DRIVER_STATE_UNSPECIFIED;
}

void NodeToProto(const inventory::NodeView &view, v1::Node *out) {
  const store::StoredNode &node = view.node;
  *out->mutable_info() = convert::ToProto(node.info);
  for (size_t i = 0;
       i < view.gpus.size() && static_cast<int>(i) < out->info().gpus_size();
       ++i) {
    auto *gpu = out->mutable_info()->mutable_gpus(i);
    gpu->set_passthrough_safe(view.gpus[i].passthrough_safe);
    gpu->set_passthrough_unsafe_reason(view.gpus[i].passthrough_unsafe_reason);
    gpu->set_binding_problem(view.gpus[i].binding_problem);
    gpu->set_held_by_workspace(view.gpus[i].held_by);
  }
  out->set_state(NodeStateToProto(node.state));
  out->set_driver_state(DriverStateToProto(node.driver_state));
  out->set_driver_detail(node.driver_detail);
  *out->mutable_last_heartbeat() = TimeUtil::MicrosecondsToTimestamp(
      absl::ToUnixMicros(node.last_heartbeat));
  *out->mutable_registered_at() =
      TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(node.registered_at));
  out->mutable_held()->set_cpu_millis(node.held_cpu_millis);
  out->mutable_held()->set_memory_bytes(node.held_memory_bytes);
  out->set_workspace_count(view.workspace_count);
  out->set_version(node.version);
}

} // namespace wsched::grpc_api
