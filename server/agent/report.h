// Discovery results in the wire form of wsched.v1 (inventory.proto).
#ifndef WSCHED_SERVER_AGENT_REPORT_H_
#define WSCHED_SERVER_AGENT_REPORT_H_

#include <vector>

#include "server/agent/nvidia_smi.h"
#include "server/core/node.h"
#include "wsched/v1/inventory.pb.h"

namespace wsched::agent {

// Everything the agent knows; output-only fields (passthrough safety, holder)
// are left for the server to fill in.
wsched::v1::NodeInfo NodeInfoToProto(const core::NodeInfo& node);

// The periodic heartbeat: running kernel and driver (a kernel change resets
// driver readiness), each GPU's health, and the usage nvidia-smi could give.
wsched::v1::HeartbeatRequest MakeHeartbeat(const core::NodeInfo& node,
                                           const std::vector<GpuUsage>& usage);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_REPORT_H_
