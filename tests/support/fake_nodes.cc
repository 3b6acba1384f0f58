#include "tests/support/fake_nodes.h"

#include "loadtest/fake_cluster.h"
#include "gtest/gtest.h"
#include "tests/support/server_process.h"

namespace wsched::testing {

// The node builders are the load generator's (loadtest/fake_cluster.h);
// tests add what only they need (an unsafe IOMMU group).
v1::NodeInfo FakeGpuNode(const std::string& name, const std::string& pool,
                         const FakeNodeOptions& options) {
  loadtest::GpuNodeShape shape;
  shape.model = options.model;
  shape.gpus = options.gpus;
  shape.cpu_cores = options.cpu_cores;
  shape.memory_gib = options.memory_gib;
  shape.kernel = options.kernel;
  shape.driver = options.driver;
  v1::NodeInfo node = loadtest::GpuNode(name, pool, shape);
  if (options.unsafe_iommu) {
    for (auto& gpu : *node.mutable_gpus()) {
      auto* usb = gpu.add_iommu_group_members();
      usb->set_pci_address("0000:00:14.0");
      usb->set_pci_class("0x0c0330");
      usb->set_vendor("0x8086");
    }
  }
  return node;
}

v1::NodeInfo FakeCpuNode(const std::string& name, const std::string& pool, int64_t cpu_cores,
                         int64_t memory_gib) {
  return loadtest::CpuNode(name, pool, {cpu_cores, memory_gib});
}

void RegisterNode(const std::shared_ptr<grpc::Channel>& channel, const v1::NodeInfo& node) {
  auto stub = v1::InventoryService::NewStub(channel);
  grpc::ClientContext context;
  Authorize(context, kAgentToken);
  v1::RegisterNodeRequest request;
  *request.mutable_node() = node;
  v1::RegisterNodeResponse response;
  grpc::Status status = stub->RegisterNode(&context, request, &response);
  ASSERT_TRUE(status.ok()) << "register " << node.name() << ": " << status.error_message();
}

}  // namespace wsched::testing
