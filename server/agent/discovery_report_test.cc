#include "server/agent/discovery_report.h"

#include "gtest/gtest.h"

namespace wsched::agent {
namespace {

core::NodeInfo SampleNode() {
  core::NodeInfo node;
  node.name = "n1";
  node.pool = "gpu-h100";
  node.provider_id = "aws:///us-east-1a/i-0abc";
  node.cpu_millis = 32000;
  node.memory_bytes = int64_t{1} << 40;
  node.kernel_version = "5.15.0-91-generic";
  node.os_id = "ubuntu";
  node.os_version = "22.04";
  node.driver_version = "550.54.15";
  core::Gpu gpu;
  gpu.index = 3;
  gpu.uuid = "GPU-3";
  gpu.pci_address = "0000:5d:00.0";
  gpu.model = "NVIDIA H100 80GB HBM3";
  gpu.memory_bytes = int64_t{80} << 30;
  gpu.numa_node = 0;
  gpu.healthy = false;
  gpu.iommu_group = 70;
  gpu.iommu_group_members = {{"0000:5c:00.0", "0x060400", "0x1000"}};
  node.gpus.push_back(gpu);
  node.control_devices.push_back({.path = "/dev/nvidia-uvm", .type = 'c', .major = 508,
                                  .minor = 0});
  return node;
}

TEST(ReportTest, NodeInfoToProtoCopiesEveryField) {
  wsched::v1::NodeInfo proto = NodeInfoToProto(SampleNode());
  EXPECT_EQ(proto.name(), "n1");
  EXPECT_EQ(proto.pool(), "gpu-h100");
  EXPECT_EQ(proto.provider_id(), "aws:///us-east-1a/i-0abc");
  EXPECT_EQ(proto.allocatable().cpu_millis(), 32000);
  EXPECT_EQ(proto.allocatable().memory_bytes(), int64_t{1} << 40);
  EXPECT_EQ(proto.kernel_version(), "5.15.0-91-generic");
  EXPECT_EQ(proto.os_id(), "ubuntu");
  EXPECT_EQ(proto.os_version(), "22.04");
  EXPECT_EQ(proto.driver_version(), "550.54.15");
  ASSERT_EQ(proto.gpus_size(), 1);
  const wsched::v1::Gpu& gpu = proto.gpus(0);
  EXPECT_EQ(gpu.index(), 3);
  EXPECT_EQ(gpu.uuid(), "GPU-3");
  EXPECT_EQ(gpu.pci_address(), "0000:5d:00.0");
  EXPECT_EQ(gpu.model(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpu.memory_bytes(), int64_t{80} << 30);
  EXPECT_EQ(gpu.numa_node(), 0);
  EXPECT_EQ(gpu.health(), wsched::v1::GPU_HEALTH_UNHEALTHY);
  EXPECT_EQ(gpu.iommu_group(), 70);
  ASSERT_EQ(gpu.iommu_group_members_size(), 1);
  EXPECT_EQ(gpu.iommu_group_members(0).pci_address(), "0000:5c:00.0");
  EXPECT_EQ(gpu.iommu_group_members(0).pci_class(), "0x060400");
  EXPECT_EQ(gpu.iommu_group_members(0).vendor(), "0x1000");
  // Output-only: the server decides.
  EXPECT_FALSE(gpu.passthrough_safe());
  ASSERT_EQ(proto.control_devices_size(), 1);
  EXPECT_EQ(proto.control_devices(0).path(), "/dev/nvidia-uvm");
  EXPECT_EQ(proto.control_devices(0).type(), "c");
  EXPECT_EQ(proto.control_devices(0).major(), 508);
  EXPECT_EQ(proto.control_devices(0).permissions(), "rwm");
}

TEST(ReportTest, HeartbeatCarriesKernelDriverHealthAndKnownUsage) {
  std::vector<GpuUsage> usage = {
      {.uuid = "GPU-3", .pci_address = "0000:5d:00.0", .name = "H100",
       .utilization_percent = 42, .memory_used_bytes = 1 << 20, .memory_total_bytes = 2 << 20},
      {.uuid = "GPU-4", .pci_address = "0000:9a:00.0", .name = "H100",
       .utilization_percent = -1, .memory_used_bytes = -1, .memory_total_bytes = -1}};
  wsched::v1::HeartbeatRequest heartbeat = MakeHeartbeat(SampleNode(), usage);
  EXPECT_EQ(heartbeat.node_name(), "n1");
  EXPECT_EQ(heartbeat.kernel_version(), "5.15.0-91-generic");
  EXPECT_EQ(heartbeat.driver_version(), "550.54.15");
  EXPECT_EQ(heartbeat.gpu_health_by_uuid().at("GPU-3"), wsched::v1::GPU_HEALTH_UNHEALTHY);
  ASSERT_EQ(heartbeat.gpu_usage_size(), 1);  // GPU-4 reported nothing usable.
  EXPECT_EQ(heartbeat.gpu_usage(0).uuid(), "GPU-3");
  EXPECT_EQ(heartbeat.gpu_usage(0).utilization_percent(), 42);
  EXPECT_EQ(heartbeat.gpu_usage(0).memory_used_bytes(), 1 << 20);
}

}  // namespace
}  // namespace wsched::agent
