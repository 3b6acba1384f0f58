// Fake nodes for the load generator: what an agent on a CPU box or an 8-GPU
// box would report, shaped like the pools of classes/saas.yaml and with a
// driver the saas driver policy accepts (so GPU nodes are driver-ready).
#ifndef WSCHED_LOADTEST_FAKE_CLUSTER_H_
#define WSCHED_LOADTEST_FAKE_CLUSTER_H_

#include <cstdint>
#include <string>

#include "wsched/v1/inventory.pb.h"

namespace wsched::loadtest {

struct CpuNodeShape {
  int64_t cpu_cores = 30;
  int64_t memory_gib = 120;
};

struct GpuNodeShape {
  std::string model = "H100";
  int gpus = 8;
  int64_t cpu_cores = 200;
  int64_t memory_gib = 1700;
  std::string kernel = "5.15.0-91-generic";
  std::string driver = "550.54.15";
};

// A CPU node: kernel 5.15.0-91-generic, ubuntu 22.04, no GPUs.
v1::NodeInfo CpuNode(const std::string& name, const std::string& pool,
                     const CpuNodeShape& shape = {});

// A GPU node whose GPUs have UUIDs "GPU-<name>-<i>" (unique per node name),
// PCI 0000:<10+i>:00.0, two NUMA nodes, one IOMMU group per GPU holding the
// GPU and its bridge (safe for passthrough), and the NVIDIA control devices.
v1::NodeInfo GpuNode(const std::string& name, const std::string& pool,
                     const GpuNodeShape& shape = {});

// The name wsched-loadgen gives the i-th of its --setup_nodes, of which the
// first `gpu_nodes` are GPU nodes: <run_id>-gpu-<i>, then <run_id>-cpu-<j>.
std::string FakeNodeName(const std::string& run_id, int i, int gpu_nodes);

}  // namespace wsched::loadtest

#endif  // WSCHED_LOADTEST_FAKE_CLUSTER_H_
