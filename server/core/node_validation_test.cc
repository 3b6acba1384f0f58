#include "server/core/node_validation.h"

#include "server/core/test_mig.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::core {
namespace {

using ::testing::HasSubstr;

NodeInfo GoodNode() {
  NodeInfo node;
  node.name = "gpu-node-1";
  node.pool = "gpu-h100";
  node.cpu_millis = 96000;
  node.memory_bytes = int64_t{1} << 40;
  node.kernel_version = "5.15.0-91-generic";
  for (int i = 0; i < 2; ++i) {
    Gpu gpu;
    gpu.index = i;
    gpu.uuid = "GPU-" + std::to_string(i);
    gpu.pci_address = "0000:1" + std::to_string(i) + ":00.0";
    gpu.model = "H100";
    node.gpus.push_back(gpu);
  }
  return node;
}

TEST(ValidateNodeInfo, AcceptsAGoodNode) { EXPECT_TRUE(ValidateNodeInfo(GoodNode()).ok()); }

TEST(ValidateNodeInfo, AcceptsMigSlicesAndLinks) {
  NodeInfo node = GoodNode();
  node.gpus[0].mig = testing::H200MixedLayout();
  node.gpus[0].links = {testing::NvlinkTo(1)};
  node.gpus[1].links = {testing::NvlinkTo(0)};
  EXPECT_TRUE(ValidateNodeInfo(node).ok()) << ValidateNodeInfo(node);
}

TEST(ValidateNodeInfo, NamesEveryBadSliceAndLink) {
  NodeInfo node = GoodNode();
  GpuMig mig = testing::H200MixedLayout();
  mig.profiles[3].starts = {0, 5};                // 5 + 4 leaves the 8 slots.
  mig.instances[1].start = 3;                     // 2g.35gb starts at 0, 2 or 4.
  mig.instances[2] = {"1g.18gb", 9, 0, 2, 1};     // Inside the 3g at 0:4.
  mig.instances.push_back({"9g.1tb", 10, 0, 7, 1});
  node.gpus[0].mig = mig;
  node.gpus[0].links = {testing::NvlinkTo(0), testing::NvlinkTo(1, 0)};
  node.gpus[1].links = {{0, GpuLinkKind::kPix, 2}, {7, GpuLinkKind::kSys, 0}};
  std::string errors(ValidateNodeInfo(node).message());
  EXPECT_THAT(errors, HasSubstr("node.gpus[0].mig.profiles[3].starts[1]: start 5 with size 4"));
  EXPECT_THAT(errors, HasSubstr("node.gpus[0].mig.instances[1]: placement 3:2 is not a legal"));
  EXPECT_THAT(errors, HasSubstr("node.gpus[0].mig.instances[2]: placement 2:1 overlaps"));
  EXPECT_THAT(errors, HasSubstr("node.gpus[0].mig.instances[3].profile: \"9g.1tb\" is not one"));
  EXPECT_THAT(errors, HasSubstr("node.gpus[0].links[0].peer: must be the index of another GPU"));
  EXPECT_THAT(errors, HasSubstr("node.gpus[0].links[1].nvlinks: must be 1..64"));
  EXPECT_THAT(errors, HasSubstr("node.gpus[1].links[0].nvlinks: must be 0 unless"));
  EXPECT_THAT(errors, HasSubstr("node.gpus[1].links[1].peer: must be the index of another GPU"));

  // The agent could not read the profiles (`mig -lgip` failed): the slices
  // still count, held to the 8 slots and to not overlapping.
  node = GoodNode();
  node.gpus[0].mig = testing::H200MixedLayout();
  node.gpus[0].mig->profiles.clear();
  EXPECT_TRUE(ValidateNodeInfo(node).ok()) << ValidateNodeInfo(node);
  node.gpus[0].mig->instances[2].start = 7;
  node.gpus[0].mig->instances[2].size = 2;
  EXPECT_THAT(ValidateNodeInfo(node).message(),
              HasSubstr("node.gpus[0].mig.instances[2]: placement 7:2 is not within the 8 memory"));

  node = GoodNode();
  node.gpus[1].mig = GpuMig{.enabled = false, .instances = {{"1g.18gb", 1, 0, 0, 1}}};
  EXPECT_THAT(ValidateNodeInfo(node).message(), HasSubstr("a GPU with MIG mode off has no slices"));
}

TEST(ValidateNodeInfo, ReportsEveryBadFieldWithItsPath) {
  NodeInfo node = GoodNode();
  node.cpu_millis = -1;
  node.gpus[1].index = 0;
  node.gpus[1].uuid = "GPU-0";
  node.gpus[0].pci_address = "3b:00.0";
  absl::Status status = ValidateNodeInfo(node);
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  std::string message(status.message());
  EXPECT_THAT(message, HasSubstr("node.allocatable.cpu_millis: must be >= 0, got -1"));
  EXPECT_THAT(message, HasSubstr("node.gpus[1].index: duplicate GPU index 0"));
  EXPECT_THAT(message, HasSubstr("node.gpus[1].uuid: duplicate GPU UUID GPU-0"));
  EXPECT_THAT(message, HasSubstr("node.gpus[0].pci_address: \"3b:00.0\" is not a PCI address"));
}

// Regression: the IOMMU group members' class and vendor, and a control
// device's permissions, were stored as reported, unbounded.
TEST(ValidateNodeInfo, BoundsGroupMembersAndControlDevicePermissions) {
  NodeInfo node = GoodNode();
  node.gpus[0].iommu_group_members.push_back(
      {.address = "0000:0f:00.0", .pci_class = std::string(100000, 'c'), .vendor = "0x10de"});
  node.control_devices.push_back({"/dev/nvidiactl", 'c', 195, 255, "rwmrwmrwm"});
  absl::Status status = ValidateNodeInfo(node);
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("node.gpus[0].iommu_group_members[0].pci_class: must be at most 16"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("node.control_devices[0].permissions: must combine r, w and m"));
  node.gpus[0].iommu_group_members[0].pci_class = "0x060400";
  node.control_devices[0].permissions = "rw";
  EXPECT_TRUE(ValidateNodeInfo(node).ok()) << ValidateNodeInfo(node);
}

TEST(ValidateNodeInfo, AcceptsAWschedCdiNode) {
  NodeInfo node = GoodNode();
  node.cdi.mode = CdiMode::kWsched;
  node.cdi.spec_dir = "/var/run/cdi";
  node.cdi.extra_devices.push_back({"/dev/fuse", "wsched.io/device=fuse"});
  node.gpus[0].cdi_device = "wsched.io/gpu=GPU-0";
  node.gpus[1].cdi_device = "wsched.io/gpu=GPU-1";
  EXPECT_TRUE(ValidateNodeInfo(node).ok()) << ValidateNodeInfo(node);
}

TEST(ValidateNodeInfo, NamesEveryBadCdiField) {
  NodeInfo node = GoodNode();
  node.gpus[0].cdi_device = "wsched.io/gpu=GPU-0";  // Names without a mode.
  node.cdi.extra_devices.push_back({"/tmp/fuse", "fuse"});
  absl::Status status = ValidateNodeInfo(node);
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  std::string message(status.message());
  EXPECT_THAT(message, HasSubstr("node.gpus[0].cdi_device: must be empty unless cdi.mode is set"));
  EXPECT_THAT(message, HasSubstr("node.cdi.mode: is required when spec_dir or extra_devices are set"));
  EXPECT_THAT(message, HasSubstr("node.cdi.extra_devices[0].path: must be a path under /dev/"));
  EXPECT_THAT(message, HasSubstr("node.cdi.extra_devices[0].name: \"fuse\" is not a qualified CDI"));

  node.cdi.mode = CdiMode::kNvidia;
  node.cdi.spec_dir = "relative";
  node.cdi.extra_devices.clear();
  node.gpus[0].cdi_device = "nvidia.com/gpu=GPU 0";
  node.cdi.problems.push_back("");
  message = std::string(ValidateNodeInfo(node).message());
  EXPECT_THAT(message, HasSubstr("node.cdi.spec_dir: must be an absolute path"));
  EXPECT_THAT(message, HasSubstr("node.gpus[0].cdi_device: \"nvidia.com/gpu=GPU 0\" is not"));
  EXPECT_THAT(message, HasSubstr("node.cdi.problems[0]: is required"));
}

}  // namespace
}  // namespace wsched::core
