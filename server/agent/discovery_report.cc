#include "server/agent/discovery_report.h"

#include <algorithm>
#include <string>

#include "server/convert/convert.h"

namespace wsched::agent {
namespace {

wsched::v1::GpuHealth HealthOf(const core::Gpu& gpu) {
  return gpu.healthy ? wsched::v1::GPU_HEALTH_HEALTHY : wsched::v1::GPU_HEALTH_UNHEALTHY;
}

}  // namespace

wsched::v1::NodeInfo NodeInfoToProto(const core::NodeInfo& node) {
  // The server's own mapping, so the agent reports every field it knows
  // (a second copy here once dropped the CDI fields).
  return convert::ToProto(node);
}

void ApplyVerdicts(const std::map<std::string, GpuVerdict>& verdicts, wsched::v1::NodeInfo& node) {
  for (wsched::v1::Gpu& gpu : *node.mutable_gpus()) {
    auto it = verdicts.find(gpu.uuid());
    if (it == verdicts.end()) continue;
    gpu.set_health(it->second.healthy ? wsched::v1::GPU_HEALTH_HEALTHY
                                      : wsched::v1::GPU_HEALTH_UNHEALTHY);
    gpu.set_health_reason(it->second.healthy ? "" : it->second.reason);
  }
}

wsched::v1::HeartbeatRequest MakeHeartbeat(const core::NodeInfo& node,
                                           const std::vector<GpuUsage>& usage,
                                           const std::map<std::string, GpuVerdict>* verdicts) {
  wsched::v1::HeartbeatRequest out;
  out.set_node_name(node.name);
  out.set_kernel_version(node.kernel_version);
  out.set_driver_version(node.driver_version);
  if (verdicts == nullptr) {
    for (const core::Gpu& gpu : node.gpus) {
      (*out.mutable_gpu_health_by_uuid())[gpu.uuid] = HealthOf(gpu);
    }
  } else {
    for (const auto& [uuid, verdict] : *verdicts) {
      (*out.mutable_gpu_health_by_uuid())[uuid] =
          verdict.healthy ? wsched::v1::GPU_HEALTH_HEALTHY : wsched::v1::GPU_HEALTH_UNHEALTHY;
      if (!verdict.healthy) (*out.mutable_gpu_health_reason_by_uuid())[uuid] = verdict.reason;
    }
  }
  for (const GpuUsage& sample : usage) {
    // Without a utilisation figure there is nothing to report; a made-up 0
    // would read as "idle" to the scaler.
    if (sample.utilization_percent < 0) continue;
    wsched::v1::GpuUsage* proto = out.add_gpu_usage();
    proto->set_uuid(sample.uuid);
    proto->set_utilization_percent(sample.utilization_percent);
    proto->set_memory_used_bytes(std::max<int64_t>(sample.memory_used_bytes, 0));
  }
  return out;
}

}  // namespace wsched::agent
