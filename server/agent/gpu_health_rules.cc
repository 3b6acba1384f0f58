#include "server/agent/gpu_health_rules.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace wsched::agent {

const std::vector<XidRule>& XidRules() {
  // From NVIDIA's XID catalogue: the GPU's own failures, and the common
  // application errors that must not take a healthy GPU away from its users.
  static const auto* rules = new std::vector<XidRule>{
      {13, false, "graphics engine exception (application error)"},
      {31, false, "GPU memory page fault (application error)"},
      {43, false, "GPU stopped processing (application error)"},
      {45, false, "preemptive cleanup after an earlier error (application ended)"},
      {48, true, "double-bit ECC error"},
      {62, true, "internal micro-controller halt"},
      {63, true, "row remapping or page retirement recorded; reset the GPU"},
      {64, true, "row remapping or page retirement failed"},
      {74, true, "NVLink error"},
      {79, true, "GPU has fallen off the bus"},
      {92, true, "high single-bit ECC error rate"},
      {94, true, "contained ECC error"},
      {95, true, "uncontained ECC error"},
      {119, true, "GSP RPC timeout"},
      {120, true, "GSP error"},
  };
  return *rules;
}

const XidRule* FindXidRule(int xid) {
  for (const XidRule& rule : XidRules()) {
    if (rule.xid == xid) return &rule;
  }
  return nullptr;
}

std::optional<std::string> UnhealthyFromNvidiaSmi(const GpuUsage& gpu) {
  std::vector<std::string> problems;
  if (!gpu.error_state.empty()) problems.push_back(absl::StrCat("nvidia-smi: ", gpu.error_state));
  if (gpu.ecc_uncorrected_volatile > 0) {
    problems.push_back(absl::StrCat(gpu.ecc_uncorrected_volatile,
                                    " uncorrected ECC error(s) since the driver loaded"));
  }
  if (gpu.retired_pages_pending) problems.push_back("retired pages pending (reset the GPU)");
  if (gpu.remapped_rows_pending) problems.push_back("remapped rows pending (reset the GPU)");
  if (gpu.remapped_rows_failure) problems.push_back("row remapping failed (replace the GPU)");
  if (problems.empty()) return std::nullopt;
  return absl::StrJoin(problems, "; ");
}

std::map<std::string, GpuVerdict> JudgeGpus(const core::NodeInfo& node,
                                            const std::vector<GpuUsage>* sample,
                                            const std::map<std::string, std::string>& xids) {
  std::map<std::string, GpuVerdict> verdicts;
  for (const core::Gpu& gpu : node.gpus) {
    std::vector<std::string> problems;
    bool judged = sample != nullptr;
    if (sample != nullptr) {
      for (const GpuUsage& line : *sample) {
        if (line.pci_address != gpu.pci_address) continue;
        if (auto problem = UnhealthyFromNvidiaSmi(line)) problems.push_back(*std::move(problem));
      }
    }
    if (auto xid = xids.find(gpu.pci_address); xid != xids.end()) {
      problems.push_back(xid->second);
      judged = true;
    }
    if (!judged) continue;
    verdicts[gpu.uuid] = {problems.empty(), absl::StrJoin(problems, "; ")};
  }
  return verdicts;
}

}  // namespace wsched::agent
