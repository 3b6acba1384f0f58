#include "server/agent/discovery.h"

#include <stdlib.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/agent/nvidia_layout.h"
#include "server/agent/nvidia_mig.h"
#include "server/agent/nvidia_smi.h"
#include "server/agent/test_paths.h"
#include "server/core/iommu.h"

namespace wsched::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
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

// ---- MIG slices and links (h200-mig: GPU 0 in MIG mode as 3g + 2g + 1g +
// 1g, GPU 1 MIG pending, GPU 2 MIG off, GPU 3 with slices it cannot hand out).

// What the agent reads with nvidia-smi on the node: the fake answers from
// tests/sysfs/nvidia-smi/<smi_dir>, topo -m from `topo` when given.
NvidiaLayout FixtureLayout(const std::string& smi_dir, const std::string& topo = "") {
  setenv("FAKE_NVIDIA_SMI_DIR", Tree("nvidia-smi/" + smi_dir).c_str(), 1);
  if (!topo.empty()) setenv("FAKE_NVIDIA_SMI_TOPO", Tree("nvidia-smi/topo/" + topo).c_str(), 1);
  NvidiaLayout layout = NvidiaLayoutReader(testing::FakeNvidiaSmi()).Read();
  unsetenv("FAKE_NVIDIA_SMI_DIR");
  unsetenv("FAKE_NVIDIA_SMI_TOPO");
  EXPECT_THAT(layout.problems, IsEmpty());
  return layout;
}

absl::StatusOr<core::NodeInfo> DiscoverWithLayout(const std::string& root, NvidiaLayout layout) {
  DiscoveryOptions options;
  options.root = root;
  options.nvidia_layout = std::move(layout);
  return DiscoverNode(options);
}

core::NodeInfo DiscoverH200(NvidiaLayout layout) {
  absl::StatusOr<core::NodeInfo> node = DiscoverWithLayout(Tree("h200-mig"), std::move(layout));
  EXPECT_TRUE(node.ok()) << node.status();
  return node.value_or(core::NodeInfo{});
}

// /dev/nvidia-caps/nvidia-cap<minor> of the fixture's nvidia-caps major.
std::optional<core::DeviceNode> Cap(int64_t minor) {
  return core::DeviceNode{.path = absl::StrCat("/dev/nvidia-caps/nvidia-cap", minor),
                          .type = 'c',
                          .major = 509,
                          .minor = minor};
}

// The minors /proc/driver/nvidia-caps/mig-minors gives a GPU instance and
// its compute instance: config 1, monitor 2, then 135 per GPU (15 GPU
// instances of an access file and 8 compute instances).
int64_t GiMinor(int gpu, int gi) { return 3 + gpu * 135 + gi * 9; }
int64_t CiMinor(int gpu, int gi, int ci) { return GiMinor(gpu, gi) + 1 + ci; }

TEST(DiscoveryMigTest, MixedLayoutWithCapabilityDeviceNodes) {
  core::NodeInfo node = DiscoverH200(FixtureLayout("h200-mig"));
  ASSERT_EQ(node.gpus.size(), 4u);
  EXPECT_EQ(node.gpus[0].model, "NVIDIA H200");
  ASSERT_TRUE(node.gpus[0].mig.has_value());
  const core::GpuMig& mig = *node.gpus[0].mig;
  EXPECT_TRUE(mig.enabled);
  ASSERT_EQ(mig.profiles.size(), 7u);
  EXPECT_EQ(mig.profiles[4].name, "3g.71gb");
  EXPECT_EQ(mig.profiles[4].starts, (std::vector<int>{0, 4}));
  const core::MigInstance expected[] = {{.profile = "3g.71gb",
                                         .gpu_instance = 2,
                                         .compute_instance = 0,
                                         .start = 4,
                                         .size = 4,
                                         .uuid = "MIG-5b1e0c7a-93d2-5f4e-8a61-c2d7e9f04b13",
                                         .gi_access = Cap(GiMinor(0, 2)),
                                         .ci_access = Cap(CiMinor(0, 2, 0))},
                                        {.profile = "2g.35gb",
                                         .gpu_instance = 4,
                                         .compute_instance = 0,
                                         .start = 2,
                                         .size = 2,
                                         .uuid = "MIG-a07c3e58-1d94-5b2f-9e6a-74f0b8c2d915",
                                         .gi_access = Cap(GiMinor(0, 4)),
                                         .ci_access = Cap(CiMinor(0, 4, 0))},
                                        {.profile = "1g.18gb",
                                         .gpu_instance = 7,
                                         .compute_instance = 0,
                                         .start = 0,
                                         .size = 1,
                                         .uuid = "MIG-c4e8a209-5f1b-5d73-a6c0-9b2e17d4f386",
                                         .gi_access = Cap(66),
                                         .ci_access = Cap(67)},
                                        {.profile = "1g.18gb",
                                         .gpu_instance = 8,
                                         .compute_instance = 0,
                                         .start = 1,
                                         .size = 1,
                                         .uuid = "MIG-3f92d1b6-7ae0-5c48-b1d3-08e6a5f7c240",
                                         .gi_access = Cap(GiMinor(0, 8)),
                                         .ci_access = Cap(CiMinor(0, 8, 0))}};
  ASSERT_EQ(mig.instances.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(mig.instances[i], expected[i]) << i;
    EXPECT_TRUE(IsUsableSlice(mig.instances[i])) << i;
  }
}

TEST(DiscoveryMigTest, PendingAndOffAreReportedWithoutSlices) {
  core::NodeInfo node = DiscoverH200(FixtureLayout("h200-mig"));
  ASSERT_EQ(node.gpus.size(), 4u);
  EXPECT_EQ(node.gpus[1].mig, (core::GpuMig{.enabled = false, .pending_enabled = true}));
  EXPECT_EQ(node.gpus[2].mig, (core::GpuMig{.enabled = false, .pending_enabled = false}));
}

TEST(DiscoveryMigTest, GpuInstancesWithoutOneSpanningComputeInstanceAreNotUsable) {
  core::NodeInfo node = DiscoverH200(FixtureLayout("h200-mig"));
  ASSERT_EQ(node.gpus.size(), 4u);
  const std::vector<core::MigInstance>& instances = node.gpus[3].mig->instances;
  ASSERT_EQ(instances.size(), 3u);
  // GI 1 holds two 1c.3g.71gb compute instances, GI 5 none: listed, with
  // the GPU instance's node (their slots are taken), and not usable.
  EXPECT_EQ(instances[0].gpu_instance, 1);
  EXPECT_EQ(instances[0].compute_instance, -1);
  EXPECT_EQ(instances[0].gi_access, Cap(GiMinor(3, 1)));
  EXPECT_EQ(instances[0].ci_access, std::nullopt);
  EXPECT_EQ(instances[1].gpu_instance, 5);
  EXPECT_EQ(instances[1].compute_instance, -1);
  EXPECT_FALSE(IsUsableSlice(instances[0]));
  EXPECT_FALSE(IsUsableSlice(instances[1]));
  EXPECT_EQ(instances[2].ci_access, Cap(CiMinor(3, 13, 0)));
  EXPECT_TRUE(IsUsableSlice(instances[2]));
}

TEST(DiscoveryMigTest, LinksByIndex) {
  core::NodeInfo node = DiscoverH200(FixtureLayout("h200-mig"));
  ASSERT_EQ(node.gpus.size(), 4u);
  for (const core::Gpu& gpu : node.gpus) {
    SCOPED_TRACE(gpu.index);
    ASSERT_EQ(gpu.links.size(), 3u);
    for (const core::GpuLink& link : gpu.links) {
      EXPECT_NE(link.peer, gpu.index);
      EXPECT_EQ(link.kind, core::GpuLinkKind::kNvlink);
      EXPECT_EQ(link.nvlinks, 18);
    }
  }
}

TEST(DiscoveryMigTest, WithoutNvidiaSmiThereIsNoMigAndNoLinks) {
  core::NodeInfo node = DiscoverH200(NvidiaLayout{});
  ASSERT_EQ(node.gpus.size(), 4u);
  for (const core::Gpu& gpu : node.gpus) {
    EXPECT_EQ(gpu.mig, std::nullopt);
    EXPECT_TRUE(gpu.links.empty());
  }
}

ScratchDir& CopyTree(ScratchDir& dir, const std::string& tree) {
  std::filesystem::copy(
      Tree(tree), dir.path(),
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  return dir;
}

TEST(DiscoveryMigTest, CapabilityFilesAndPeersFollowTheDeviceMinor) {
  // The driver numbers 0000:19:00.0 as /dev/nvidia1 here, while nvidia-smi
  // (PCI order) still calls it GPU 0: its capability files are gpu1's.
  ScratchDir dir;
  CopyTree(dir, "h200-mig");
  const std::filesystem::path gpus = dir.path() / "proc/driver/nvidia/gpus";
  auto set_minor = [&](const std::string& address, int minor) {
    std::ofstream(gpus / address / "information")
        << "Model: \t\t NVIDIA H200\nDevice Minor: \t " << minor << "\n";
  };
  set_minor("0000:19:00.0", 1);
  set_minor("0000:3b:00.0", 0);
  const std::filesystem::path caps = dir.path() / "proc/driver/nvidia/capabilities";
  std::filesystem::rename(caps / "gpu0", caps / "gpu1");

  absl::StatusOr<core::NodeInfo> node =
      DiscoverWithLayout(dir.path().string(), FixtureLayout("h200-mig"));
  ASSERT_TRUE(node.ok()) << node.status();
  const core::Gpu& sliced = node->gpus[1];
  ASSERT_EQ(sliced.pci_address, "0000:19:00.0");
  ASSERT_EQ(sliced.mig->instances.size(), 4u);
  EXPECT_EQ(sliced.mig->instances[0].gi_access, Cap(GiMinor(0, 2)));  // The files' own minors.
  EXPECT_TRUE(IsUsableSlice(sliced.mig->instances[0]));
  std::vector<int> peers;
  for (const core::GpuLink& link : sliced.links) peers.push_back(link.peer);
  EXPECT_THAT(peers, ElementsAre(0, 2, 3));
  EXPECT_EQ(node->gpus[0].pci_address, "0000:3b:00.0");
  EXPECT_TRUE(node->gpus[0].mig->pending_enabled);
}

TEST(DiscoveryMigTest, MissingCapabilityFileOrNvidiaCapsLeaveSlicesWithoutNodes) {
  ScratchDir dir;
  CopyTree(dir, "h200-mig");
  std::filesystem::remove(dir.path() / "proc/driver/nvidia/capabilities/gpu0/mig/gi7/ci0/access");
  absl::StatusOr<core::NodeInfo> node =
      DiscoverWithLayout(dir.path().string(), FixtureLayout("h200-mig"));
  ASSERT_TRUE(node.ok()) << node.status();
  const core::MigInstance& gi7 = node->gpus[0].mig->instances[2];
  ASSERT_EQ(gi7.gpu_instance, 7);
  EXPECT_EQ(gi7.gi_access, Cap(66));
  EXPECT_EQ(gi7.ci_access, std::nullopt);
  EXPECT_FALSE(IsUsableSlice(gi7));
  EXPECT_TRUE(IsUsableSlice(node->gpus[0].mig->instances[3]));

  // Without the nvidia-caps module's major no slice has a node.
  std::ofstream(dir.path() / "proc/devices", std::ios::trunc)
      << "Character devices:\n195 nvidia-frontend\n508 nvidia-uvm\n";
  node = DiscoverWithLayout(dir.path().string(), FixtureLayout("h200-mig"));
  ASSERT_TRUE(node.ok()) << node.status();
  ASSERT_EQ(node->gpus[0].mig->instances.size(), 4u);
  for (const core::MigInstance& instance : node->gpus[0].mig->instances) {
    EXPECT_EQ(instance.gi_access, std::nullopt);
    EXPECT_FALSE(IsUsableSlice(instance));
  }
}

TEST(DiscoveryMigTest, ACapabilityFileThatCannotBeReadFailsDiscovery) {
  ScratchDir dir;
  CopyTree(dir, "h200-mig");
  const std::filesystem::path access =
      dir.path() / "proc/driver/nvidia/capabilities/gpu0/mig/gi2/access";
  std::filesystem::remove(access);
  std::filesystem::create_directory(access);  // Reading it is EISDIR, not "no such file".
  absl::StatusOr<core::NodeInfo> node =
      DiscoverWithLayout(dir.path().string(), FixtureLayout("h200-mig"));
  ASSERT_FALSE(node.ok());
  EXPECT_THAT(node.status().message(), HasSubstr("gpu0/mig/gi2/access"));
}

std::vector<core::GpuLink> LinksOf(const core::NodeInfo& node, int index) {
  return index < static_cast<int>(node.gpus.size()) ? node.gpus[index].links
                                                    : std::vector<core::GpuLink>{};
}

TEST(DiscoveryTopologyTest, PcieServerWithBridgedPairs) {
  core::NodeInfo node = DiscoverH200(FixtureLayout("h200-mig", "pcie-4gpu-nv4-pairs.txt"));
  EXPECT_THAT(LinksOf(node, 0), ElementsAre(core::GpuLink{1, core::GpuLinkKind::kNvlink, 4},
                                            core::GpuLink{2, core::GpuLinkKind::kPhb, 0},
                                            core::GpuLink{3, core::GpuLinkKind::kSys, 0}));
  EXPECT_THAT(LinksOf(node, 3), ElementsAre(core::GpuLink{0, core::GpuLinkKind::kSys, 0},
                                            core::GpuLink{1, core::GpuLinkKind::kPhb, 0},
                                            core::GpuLink{2, core::GpuLinkKind::kNvlink, 4}));
}

TEST(DiscoveryTopologyTest, NoNvlinkAtAll) {
  core::NodeInfo node = DiscoverH200(FixtureLayout("h200-mig", "pcie-4gpu-no-nvlink.txt"));
  ASSERT_EQ(node.gpus.size(), 4u);
  for (const core::Gpu& gpu : node.gpus) {
    ASSERT_EQ(gpu.links.size(), 3u);
    for (const core::GpuLink& link : gpu.links) {
      EXPECT_NE(link.kind, core::GpuLinkKind::kNvlink);
    }
  }
  EXPECT_EQ(LinksOf(node, 0)[0], (core::GpuLink{1, core::GpuLinkKind::kPxb, 0}));
}

TEST(DiscoveryTopologyTest, SxmBoardWithMigOff) {
  absl::StatusOr<core::NodeInfo> node =
      DiscoverWithLayout(Tree("h100-8gpu"), FixtureLayout("h100-8gpu", "sxm-8gpu-nv18.txt"));
  ASSERT_TRUE(node.ok()) << node.status();
  ASSERT_EQ(node->gpus.size(), 8u);
  for (const core::Gpu& gpu : node->gpus) {
    SCOPED_TRACE(gpu.index);
    EXPECT_EQ(gpu.mig, core::GpuMig{});
    ASSERT_EQ(gpu.links.size(), 7u);
    for (const core::GpuLink& link : gpu.links) {
      EXPECT_EQ(link, (core::GpuLink{link.peer, core::GpuLinkKind::kNvlink, 18}));
    }
  }
}

TEST(DiscoveryTopologyTest, PeersDiscoveryDidNotFindAreLeftOut) {
  NvidiaLayout layout;
  layout.links["0000:18:00.0"] = {
      {.peer_address = "0000:2a:00.0", .kind = core::GpuLinkKind::kNvlink, .nvlinks = 18},
      {.peer_address = "0000:77:00.0", .kind = core::GpuLinkKind::kNvlink, .nvlinks = 18},
      {.peer_address = "0000:18:00.0", .kind = core::GpuLinkKind::kNvlink, .nvlinks = 18}};
  absl::StatusOr<core::NodeInfo> node = DiscoverWithLayout(Tree("h100-8gpu"), layout);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_THAT(node->gpus[0].links, ElementsAre(core::GpuLink{1, core::GpuLinkKind::kNvlink, 18}));
}

}  // namespace
}  // namespace wsched::agent
