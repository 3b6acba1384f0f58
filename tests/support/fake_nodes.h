// Fake nodes for integration tests: what an agent on an 8-GPU box reports.
#ifndef WSCHED_TESTS_SUPPORT_FAKE_NODES_H_
#define WSCHED_TESTS_SUPPORT_FAKE_NODES_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "server/core/mig_layout.h"
#include "wsched/v1/inventory.grpc.pb.h"

namespace wsched::testing {

struct FakeNodeOptions {
  std::string model = "H100";
  int gpus = 8;
  int64_t cpu_cores = 200;
  int64_t memory_gib = 1700;
  // The GPUs' IOMMU groups also hold a USB controller (unsafe for VMs).
  bool unsafe_iommu = false;
  std::string kernel = "5.15.0-91-generic";
  std::string driver = "550.54.15";
};

// A node whose GPUs have UUIDs "GPU-<name>-<i>", PCI 0000:<10+i>:00.0, two
// NUMA nodes, one IOMMU group per GPU (with its bridge), and the control
// devices.
v1::NodeInfo FakeGpuNode(const std::string& name, const std::string& pool,
                         const FakeNodeOptions& options = {});
v1::NodeInfo FakeCpuNode(const std::string& name, const std::string& pool, int64_t cpu_cores = 30,
                         int64_t memory_gib = 120);

// Cuts every GPU of `node` into `profiles` at the starts core::LayOutMig
// gives them (MIG on, the model's built-in profile table): slice k of GPU i
// is GPU instance k + 1 with compute instance 0, "MIG-<node>-<i>-<k>", with
// its own two capability nodes. The model must have a built-in table
// ("NVIDIA H200").
void LayOutSlices(v1::NodeInfo& node, const std::vector<std::string>& profiles);

// Cuts GPU `gpu_index` of `node` into `layout` (profiles at their starts),
// as an agent reports a GPU it cut: slice k is "MIG-<node>-<i>-<tag><k>".
void CutGpu(v1::NodeInfo& node, int gpu_index, const std::vector<core::MigLayoutSlice>& layout,
            const std::string& tag);

// Registers with the agent token; fails the test on error.
void RegisterNode(const std::shared_ptr<grpc::Channel>& channel, const v1::NodeInfo& node);

}  // namespace wsched::testing

#endif  // WSCHED_TESTS_SUPPORT_FAKE_NODES_H_
