#include "tests/support/fake_nodes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "tests/support/server_process.h"

namespace wsched::testing {
namespace {

void AddDevice(v1::NodeInfo& node, const std::string& path, int major, int minor) {
  auto* device = node.add_control_devices();
  device->set_path(path);
  device->set_type("c");
  device->set_major(major);
  device->set_minor(minor);
  device->set_permissions("rwm");
}

}  // namespace

v1::NodeInfo FakeGpuNode(const std::string& name, const std::string& pool,
                         const FakeNodeOptions& options) {
  v1::NodeInfo node = FakeCpuNode(name, pool, options.cpu_cores, options.memory_gib);
  node.set_driver_version(options.driver);
  node.set_kernel_version(options.kernel);
  for (int i = 0; i < options.gpus; ++i) {
    auto* gpu = node.add_gpus();
    gpu->set_index(i);
    gpu->set_uuid(absl::StrCat("GPU-", name, "-", i));
    gpu->set_pci_address(absl::StrFormat("0000:%02x:00.0", 0x10 + i));
    gpu->set_model(options.model);
    gpu->set_memory_bytes(int64_t{80} << 30);
    gpu->set_numa_node(i < options.gpus / 2 ? 0 : 1);
    gpu->set_health(v1::GPU_HEALTH_HEALTHY);
    gpu->set_iommu_group(20 + i);
    auto* bridge = gpu->add_iommu_group_members();
    bridge->set_pci_address(absl::StrFormat("0000:%02x:00.0", 0x80 + i));
    bridge->set_pci_class("0x060400");
    bridge->set_vendor("0x8086");
    if (options.unsafe_iommu) {
      auto* usb = gpu->add_iommu_group_members();
      usb->set_pci_address("0000:00:14.0");
      usb->set_pci_class("0x0c0330");
      usb->set_vendor("0x8086");
    }
  }
  AddDevice(node, "/dev/nvidiactl", 195, 255);
  AddDevice(node, "/dev/nvidia-modeset", 195, 254);
  AddDevice(node, "/dev/nvidia-uvm", 510, 0);
  AddDevice(node, "/dev/nvidia-uvm-tools", 510, 1);
  return node;
}

v1::NodeInfo FakeCpuNode(const std::string& name, const std::string& pool, int64_t cpu_cores,
                         int64_t memory_gib) {
  v1::NodeInfo node;
  node.set_name(name);
  node.set_pool(pool);
  node.set_provider_id("fake:///" + name);
  node.mutable_allocatable()->set_cpu_millis(cpu_cores * 1000);
  node.mutable_allocatable()->set_memory_bytes(memory_gib << 30);
  node.set_kernel_version("5.15.0-91-generic");
  node.set_os_id("ubuntu");
  node.set_os_version("22.04");
  return node;
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
