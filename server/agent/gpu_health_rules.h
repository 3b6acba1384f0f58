// Which driver signals make a GPU unhealthy: the nvidia-smi health columns
// and states, and the table of kernel XID errors. Pure rules, no I/O, so the
// table is tested (and documented in docs/agent.md) as it stands.
#ifndef WSCHED_SERVER_AGENT_GPU_HEALTH_RULES_H_
#define WSCHED_SERVER_AGENT_GPU_HEALTH_RULES_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "server/agent/nvidia_smi.h"
#include "server/core/node.h"

namespace wsched::agent {

struct XidRule {
  int xid;
  // True: the GPU (its memory, its link, its firmware) is at fault and is
  // taken out of service. False: an application's fault; the GPU is fine.
  bool unhealthy;
  const char* meaning;
};

// Every XID the agent has a rule for. XIDs not listed are logged and do not
// change health: only errors known to be the GPU's take it out of service.
const std::vector<XidRule>& XidRules();

// The rule for `xid`, or null when there is none.
const XidRule* FindXidRule(int xid);

// Why nvidia-smi's line says the GPU is unhealthy ("nvidia-smi: GPU is
// lost", "2 uncorrected ECC errors ..."), or nullopt when it looks fine.
std::optional<std::string> UnhealthyFromNvidiaSmi(const GpuUsage& gpu);

struct GpuVerdict {
  bool healthy = true;
  std::string reason;  // When unhealthy.
  friend bool operator==(const GpuVerdict&, const GpuVerdict&) = default;
};

// Each GPU's health by UUID, from this cycle's nvidia-smi lines (matched by
// PCI address) and the unhealthy XIDs by PCI address. `sample` is null when
// nvidia-smi failed this cycle: then only GPUs an XID condemns are judged,
// and the others are left out (the server keeps their last health) rather
// than called healthy on no evidence. A GPU absent from a good sample (bound
// to vfio-pci for a VM, say) is healthy unless an XID says otherwise.
std::map<std::string, GpuVerdict> JudgeGpus(const core::NodeInfo& node,
                                            const std::vector<GpuUsage>* sample,
                                            const std::map<std::string, std::string>& xids);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_GPU_HEALTH_RULES_H_
