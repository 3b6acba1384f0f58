#include "server/agent/discovery.h"

#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/agent/nvidia_smi.h"
#include "server/agent/test_paths.h"
#include "server/core/iommu.h"

namespace wsched::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ScratchDir;
using testing::Tree;

core::NodeInfo Discover(const std::string& tree, std::vector<GpuUsage> nvidia_smi = {}) {
  DiscoveryOptions options;
  options.root = Tree(tree);
  options.pool = "gpu-pool";
  options.provider_id = "test:///" + tree;
  options.nvidia_smi = std::move(nvidia_smi);
  absl::StatusOr<core::NodeInfo> node = DiscoverNode(options);
  EXPECT_TRUE(node.ok()) << node.status();
  return node.value_or(core::NodeInfo{});
}

std::vector<std::string> Addresses(const std::vector<core::Gpu>& gpus) {
  std::vector<std::string> addresses;
  for (const core::Gpu& gpu : gpus) addresses.push_back(gpu.pci_address);
  return addresses;
}

TEST(DiscoveryH100Test, HostFacts) {
  core::NodeInfo node = Discover("h100-8gpu");
  EXPECT_EQ(node.name, "h100-node-1");
  EXPECT_EQ(node.pool, "gpu-pool");
  EXPECT_EQ(node.provider_id, "test:///h100-8gpu");
  EXPECT_EQ(node.kernel_version, "5.15.0-91-generic");
  EXPECT_EQ(node.os_id, "ubuntu");
  EXPECT_EQ(node.os_version, "22.04");
  EXPECT_EQ(node.driver_version, "550.54.15");
  EXPECT_EQ(node.cpu_millis, 32000);
  EXPECT_EQ(node.memory_bytes, int64_t{2113609832} * 1024);
}

TEST(DiscoveryH100Test, FindsEight3dControllersAndIgnoresNicAndNvSwitch) {
  core::NodeInfo node = Discover("h100-8gpu");
  EXPECT_THAT(Addresses(node.gpus),
              ElementsAre("0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                          "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"));
}

TEST(DiscoveryH100Test, IndexUuidModelNumaAndGroupPerGpu) {
  core::NodeInfo node = Discover("h100-8gpu");
  ASSERT_EQ(node.gpus.size(), 8u);
  const int kGroups[] = {33, 45, 58, 70, 101, 113, 126, 139};
  for (int i = 0; i < 8; ++i) {
    const core::Gpu& gpu = node.gpus[i];
    SCOPED_TRACE(gpu.pci_address);
    EXPECT_EQ(gpu.index, i);
    EXPECT_EQ(gpu.model, "NVIDIA H100 80GB HBM3");
    EXPECT_THAT(gpu.uuid, ::testing::StartsWith("GPU-"));
    EXPECT_EQ(gpu.numa_node, i < 4 ? 0 : 1);
    EXPECT_EQ(gpu.iommu_group, kGroups[i]);
    EXPECT_TRUE(gpu.healthy);
    // The group holds the GPU and its switch port, nothing else.
    ASSERT_EQ(gpu.iommu_group_members.size(), 1u);
    EXPECT_EQ(gpu.iommu_group_members[0].pci_class, "0x060400");
    EXPECT_EQ(gpu.iommu_group_members[0].vendor, "0x1000");
  }
  EXPECT_EQ(node.gpus[0].uuid, "GPU-1f0b7c9e-4a2d-4e35-8b61-0c9a7d3e2f10");
  EXPECT_EQ(node.gpus[0].iommu_group_members[0].address, "0000:17:00.0");
  EXPECT_EQ(node.gpus[7].uuid, "GPU-80a5ce6b-3b7f-4c6d-88db-7e4bc2af9087");
}

TEST(DiscoveryH100Test, AllGpusAreSafeForPassthrough) {
  for (const core::Gpu& gpu : Discover("h100-8gpu").gpus) {
    core::PassthroughSafety safety = core::ClassifyPassthrough(gpu);
    EXPECT_TRUE(safety.safe) << gpu.pci_address << ": " << safety.reason;
  }
}

TEST(DiscoveryH100Test, AllControlDevices) {
  core::NodeInfo node = Discover("h100-8gpu");
  std::vector<std::string> paths;
  for (const core::DeviceNode& device : node.control_devices) paths.push_back(device.path);
  EXPECT_THAT(paths, ElementsAre("/dev/nvidiactl", "/dev/nvidia-modeset", "/dev/nvidia-uvm",
                                 "/dev/nvidia-uvm-tools"));
}

TEST(DiscoveryH100Test, NvidiaSmiSampleAddsMemoryButInformationFileWins) {
  GpuUsage sample{.uuid = "GPU-from-smi",
                  .pci_address = "0000:18:00.0",
                  .name = "other name",
                  .utilization_percent = 3,
                  .memory_used_bytes = 0,
                  .memory_total_bytes = int64_t{81559} << 20};
  core::NodeInfo node = Discover("h100-8gpu", {sample});
  EXPECT_EQ(node.gpus[0].memory_bytes, int64_t{81559} << 20);
  EXPECT_EQ(node.gpus[0].uuid, "GPU-1f0b7c9e-4a2d-4e35-8b61-0c9a7d3e2f10");
  EXPECT_EQ(node.gpus[0].model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(node.gpus[1].memory_bytes, 0);
}

TEST(DiscoveryH100Test, DeviceMinorFromTheDriverBeatsPciOrder) {
  // Copy the tree and swap the minors of the first two GPUs.
  ScratchDir dir;
  std::filesystem::copy(Tree("h100-8gpu"), dir.path(),
                        std::filesystem::copy_options::recursive |
                            std::filesystem::copy_options::copy_symlinks);
  auto set_minor = [&](const std::string& address, int minor) {
    std::ofstream(dir.path() / "proc/driver/nvidia/gpus" / address / "information")
        << "Model: \t\t NVIDIA H100 80GB HBM3\nGPU UUID: \t GPU-" << address
        << "\nDevice Minor: \t " << minor << "\n";
  };
  set_minor("0000:18:00.0", 1);
  set_minor("0000:2a:00.0", 0);
  // And one GPU the driver says nothing about: it takes the lowest free index.
  std::filesystem::remove(dir.path() / "proc/driver/nvidia/gpus/0000:db:00.0/information");
  std::ofstream(dir.path() / "proc/driver/nvidia/gpus/0000:ba:00.0/information")
      << "Device Minor: \t 9\n";

  DiscoveryOptions options;
  options.root = dir.path().string();
  absl::StatusOr<core::NodeInfo> node = DiscoverNode(options);
  ASSERT_TRUE(node.ok()) << node.status();
  std::map<std::string, int> index_by_address;
  for (const core::Gpu& gpu : node->gpus) index_by_address[gpu.pci_address] = gpu.index;
  EXPECT_EQ(index_by_address["0000:18:00.0"], 1);
  EXPECT_EQ(index_by_address["0000:2a:00.0"], 0);
  EXPECT_EQ(index_by_address["0000:ba:00.0"], 9);
  EXPECT_EQ(index_by_address["0000:db:00.0"], 6);
  EXPECT_EQ(node->gpus.front().pci_address, "0000:2a:00.0");  // Sorted by index.
  EXPECT_EQ(node->gpus.front().uuid, "GPU-0000:2a:00.0");
}

TEST(DiscoveryDesktopTest, FindsVgaGpuWithDriverFromProc) {
  core::NodeInfo node = Discover("desktop-usb-group");
  ASSERT_EQ(node.gpus.size(), 1u);
  const core::Gpu& gpu = node.gpus[0];
  EXPECT_EQ(gpu.pci_address, "0000:01:00.0");
  EXPECT_EQ(gpu.index, 0);
  EXPECT_EQ(gpu.numa_node, -1);
  EXPECT_EQ(gpu.iommu_group, 1);
  EXPECT_EQ(node.driver_version, "550.54.15");
  EXPECT_EQ(node.os_id, "fedora");
  EXPECT_EQ(node.os_version, "39");
  EXPECT_EQ(node.name, "desktop-01");
}

TEST(DiscoveryDesktopTest, RecordsAudioFunctionAndUsbControllerInTheGroup) {
  core::NodeInfo node = Discover("desktop-usb-group");
  ASSERT_EQ(node.gpus.size(), 1u);
  EXPECT_THAT(node.gpus[0].iommu_group_members,
              ElementsAre(core::PciDevice{"0000:00:01.0", "0x060400", "0x8086", ""},
                          core::PciDevice{"0000:00:14.0", "0x0c0330", "0x8086", ""},
                          core::PciDevice{"0000:01:00.1", "0x040300", "0x10de", ""}));
  // The tree has no driver links: reported, as bound to none.
  EXPECT_EQ(node.gpus[0].driver, "");
}

TEST(DiscoveryDesktopTest, UsbControllerMakesPassthroughUnsafe) {
  core::NodeInfo node = Discover("desktop-usb-group");
  ASSERT_EQ(node.gpus.size(), 1u);
  core::PassthroughSafety safety = core::ClassifyPassthrough(node.gpus[0]);
  EXPECT_FALSE(safety.safe);
  EXPECT_THAT(safety.reason, HasSubstr("0000:00:14.0"));
  EXPECT_THAT(safety.reason, HasSubstr("USB controller"));
}

TEST(DiscoveryDesktopTest, WithoutInformationFilesNamesComeFromNvidiaSmi) {
  core::NodeInfo bare = Discover("desktop-usb-group");
  ASSERT_EQ(bare.gpus.size(), 1u);
  EXPECT_EQ(bare.gpus[0].uuid, "PCI-0000:01:00.0");
  EXPECT_EQ(bare.gpus[0].model, "pci-10de-2204");

  absl::StatusOr<std::vector<GpuUsage>> sample = SampleNvidiaSmi(testing::FakeNvidiaSmi());
  ASSERT_TRUE(sample.ok()) << sample.status();
  core::NodeInfo node = Discover("desktop-usb-group", *sample);
  ASSERT_EQ(node.gpus.size(), 1u);
  EXPECT_EQ(node.gpus[0].uuid, "GPU-3f9c2a71-8d4e-4b0a-9c51-2e7d6a1b8f04");
  EXPECT_EQ(node.gpus[0].model, "NVIDIA GeForce RTX 3090");
  EXPECT_EQ(node.gpus[0].memory_bytes, int64_t{24576} << 20);
}

TEST(DiscoveryDesktopTest, OnlyPresentControlDevicesAndNoUvmWithoutModule) {
  core::NodeInfo node = Discover("desktop-usb-group");
  std::vector<std::string> paths;
  for (const core::DeviceNode& device : node.control_devices) paths.push_back(device.path);
  EXPECT_THAT(paths, ElementsAre("/dev/nvidiactl", "/dev/nvidia-modeset"));
}

TEST(DiscoveryNoDriverTest, GpusWithoutDriverOrDevices) {
  core::NodeInfo node = Discover("no-driver");
  EXPECT_EQ(node.driver_version, "");
  EXPECT_TRUE(node.control_devices.empty());
  EXPECT_EQ(node.os_id, "debian");
  EXPECT_EQ(node.os_version, "12");
  EXPECT_EQ(node.kernel_version, "6.1.0-17-amd64");
  ASSERT_EQ(node.gpus.size(), 2u);
  EXPECT_EQ(node.gpus[0].pci_address, "0000:41:00.0");
  EXPECT_EQ(node.gpus[0].index, 0);
  EXPECT_EQ(node.gpus[0].uuid, "PCI-0000:41:00.0");
  EXPECT_EQ(node.gpus[0].model, "pci-10de-20b5");
  EXPECT_EQ(node.gpus[0].numa_node, 0);
  EXPECT_EQ(node.gpus[0].iommu_group, 24);
  EXPECT_EQ(node.gpus[1].index, 1);
  EXPECT_EQ(node.gpus[1].numa_node, 1);
  EXPECT_TRUE(node.gpus[1].iommu_group_members.empty());
}

TEST(DiscoveryTest, WrongRootFailsNamingTheFile) {
  ScratchDir dir;
  DiscoveryOptions options;
  options.root = dir.path().string();
  options.node_name = "n1";
  absl::StatusOr<core::NodeInfo> node = DiscoverNode(options);
  ASSERT_FALSE(node.ok());
  EXPECT_THAT(node.status().message(), HasSubstr("osrelease"));
}

TEST(DiscoveryTest, IommuOffLeavesGroupUnset) {
  ScratchDir dir;
  std::filesystem::copy(Tree("no-driver"), dir.path(),
                        std::filesystem::copy_options::recursive |
                            std::filesystem::copy_options::copy_symlinks);
  std::filesystem::remove_all(dir.path() / "sys/kernel/iommu_groups");
  for (const char* gpu : {"pci0000:40/0000:40:01.1/0000:41:00.0",
                          "pci0000:c0/0000:c0:01.1/0000:c1:00.0"}) {
    std::filesystem::remove(dir.path() / "sys/devices" / gpu / "iommu_group");
  }
  DiscoveryOptions options;
  options.root = dir.path().string();
  absl::StatusOr<core::NodeInfo> node = DiscoverNode(options);
  ASSERT_TRUE(node.ok()) << node.status();
  ASSERT_EQ(node->gpus.size(), 2u);
  EXPECT_EQ(node->gpus[0].iommu_group, -1);
  EXPECT_FALSE(core::ClassifyPassthrough(node->gpus[0]).safe);
}

}  // namespace
}  // namespace wsched::agent
