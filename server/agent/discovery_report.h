// Discovery results in the wire form of wsched.v1 (inventory.proto).
#ifndef WSCHED_SERVER_AGENT_DISCOVERY_REPORT_H_
#define WSCHED_SERVER_AGENT_DISCOVERY_REPORT_H_

#include <map>
#include <string>
#include <vector>

#include "server/agent/gpu_health_rules.h"
#include "server/agent/nvidia_smi.h"
#include "server/core/node.h"
#include "wsched/v1/inventory.pb.h"

namespace wsched::agent {

// Everything the agent knows; output-only fields (passthrough safety, holder)
// are left for the server to fill in.
wsched::v1::NodeInfo NodeInfoToProto(const core::NodeInfo& node);

// Sets the health (and reason) of the GPUs `verdicts` (by UUID) judge.
void ApplyVerdicts(const std::map<std::string, GpuVerdict>& verdicts, wsched::v1::NodeInfo& node);

// The periodic heartbeat: running kernel and driver (a kernel change resets
// driver readiness), GPU health, and the usage nvidia-smi could give. Health
// is that of `verdicts` (GPUs it leaves out are not listed and keep their
// health on the server); without verdicts, each GPU's own `healthy`.
wsched::v1::HeartbeatRequest MakeHeartbeat(const core::NodeInfo& node,
                                           const std::vector<GpuUsage>& usage,
                                           const std::map<std::string, GpuVerdict>* verdicts = nullptr);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_DISCOVERY_REPORT_H_
