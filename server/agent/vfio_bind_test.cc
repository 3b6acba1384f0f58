#include "server/agent/vfio_bind.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/agent/discovery.h"
#include "server/agent/fake_kernel_test_util.h"
#include "server/agent/test_paths.h"
#include "server/core/vfio_binding.h"

namespace wsched::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;
using testing::CopyTree;
using testing::FakeKernel;
using testing::ScratchDir;
using testing::Tree;

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The vfio-host tree, copied: binding writes into it.
class VfioBindTest : public ::testing::Test {
 protected:
  void SetUp() override { CopyTree(Tree("vfio-host"), root_); }

  core::NodeInfo Discover() {
    absl::StatusOr<core::NodeInfo> node = DiscoverNode({.root = root_.string()});
    EXPECT_TRUE(node.ok()) << node.status();
    return node.ok() ? *node : core::NodeInfo{};
  }
  const core::Gpu& Gpu(const core::NodeInfo& node, const std::string& address) {
    for (const core::Gpu& gpu : node.gpus) {
      if (gpu.pci_address == address) return gpu;
    }
    ADD_FAILURE() << "no GPU " << address;
    return node.gpus.front();
  }

  ScratchDir scratch_;
  const std::filesystem::path root_ = scratch_.path() / "root";
};

TEST(PlanVfioBind, OverrideThenUnbindThenProbe) {
  PciFunction audio{.address = "0000:3b:00.1", .driver = "snd_hda_intel"};
  EXPECT_THAT(PlanVfioBind(audio),
              ElementsAre(SysfsWrite{"/sys/bus/pci/devices/0000:3b:00.1/driver_override", "vfio-pci"},
                          SysfsWrite{"/sys/bus/pci/devices/0000:3b:00.1/driver/unbind", "0000:3b:00.1"},
                          SysfsWrite{"/sys/bus/pci/drivers_probe", "0000:3b:00.1"}));
}

TEST(PlanVfioBind, UnboundDeviceIsOnlyProbedAndABoundOneLeftAlone) {
  PciFunction unbound{.address = "0000:3b:00.1"};
  EXPECT_THAT(PlanVfioBind(unbound),
              ElementsAre(SysfsWrite{"/sys/bus/pci/devices/0000:3b:00.1/driver_override", "vfio-pci"},
                          SysfsWrite{"/sys/bus/pci/drivers_probe", "0000:3b:00.1"}));
  unbound.driver_override = "vfio-pci";  // A probe that found no vfio-pci earlier.
  EXPECT_THAT(PlanVfioBind(unbound),
              ElementsAre(SysfsWrite{"/sys/bus/pci/drivers_probe", "0000:3b:00.1"}));
  EXPECT_THAT(PlanVfioBind({.address = "0000:86:00.0", .driver = "vfio-pci"}), IsEmpty());
}

TEST_F(VfioBindTest, DiscoveryReportsEachMembersDriver) {
  core::NodeInfo node = Discover();
  ASSERT_EQ(node.gpus.size(), 2u);
  const core::Gpu& gpu = Gpu(node, "0000:3b:00.0");
  EXPECT_THAT(gpu.driver, Optional(std::string("nvidia")));
  ASSERT_EQ(gpu.iommu_group_members.size(), 2u);
  EXPECT_EQ(gpu.iommu_group_members[0].address, "0000:3a:00.0");
  EXPECT_THAT(gpu.iommu_group_members[0].driver, Optional(std::string("pcieport")));
  EXPECT_THAT(gpu.iommu_group_members[1].driver, Optional(std::string("snd_hda_intel")));
  EXPECT_THAT(Gpu(node, "0000:86:00.0").driver, Optional(std::string("vfio-pci")));
}

// The kernel's order, per device, for the group's endpoints only: never the
// bridge, never the NIC outside the group, nothing for the bound GPU.
TEST_F(VfioBindTest, BindsTheGroupsEndpointsInTheKernelsOrder) {
  FakeKernel kernel(root_);
  absl::StatusOr<std::vector<GroupBinding>> groups =
      BindGpuGroupsToVfio(RootedFs(root_.string()), kernel);
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_THAT(kernel.writes(),
              ElementsAre(SysfsWrite{"/sys/bus/pci/devices/0000:3b:00.0/driver_override", "vfio-pci"},
                          SysfsWrite{"/sys/bus/pci/devices/0000:3b:00.0/driver/unbind", "0000:3b:00.0"},
                          SysfsWrite{"/sys/bus/pci/drivers_probe", "0000:3b:00.0"},
                          SysfsWrite{"/sys/bus/pci/devices/0000:3b:00.1/driver_override", "vfio-pci"},
                          SysfsWrite{"/sys/bus/pci/devices/0000:3b:00.1/driver/unbind", "0000:3b:00.1"},
                          SysfsWrite{"/sys/bus/pci/drivers_probe", "0000:3b:00.1"}));
  ASSERT_EQ(groups->size(), 2u);
  EXPECT_EQ((*groups)[0].group, 33);
  EXPECT_TRUE((*groups)[0].bound) << (*groups)[0].problem;
  EXPECT_EQ((*groups)[0].writes.size(), 6u);
  EXPECT_EQ((*groups)[1].group, 70);
  EXPECT_TRUE((*groups)[1].bound) << (*groups)[1].problem;
  EXPECT_THAT((*groups)[1].writes, IsEmpty());

  // What the agent then reports: the whole group on vfio-pci, the bridge on
  // pcieport, so placement may hand both GPUs to VMs.
  core::NodeInfo node = Discover();
  const core::Gpu& gpu = Gpu(node, "0000:3b:00.0");
  EXPECT_THAT(gpu.driver, Optional(std::string("vfio-pci")));
  EXPECT_THAT(gpu.iommu_group_members[0].driver, Optional(std::string("pcieport")));
  EXPECT_THAT(gpu.iommu_group_members[1].driver, Optional(std::string("vfio-pci")));
  for (const core::Gpu& each : node.gpus) {
    EXPECT_EQ(core::VmBindingProblem(each), std::nullopt) << each.pci_address;
  }

  // A second cycle has nothing left to do.
  FakeKernel again(root_);
  ASSERT_TRUE(BindGpuGroupsToVfio(RootedFs(root_.string()), again).ok());
  EXPECT_THAT(again.writes(), IsEmpty());
}

// The writes as they land in plain files, through the real writer; the
// kernel's part does not happen, so the member keeps its driver and the GPU
// stays out with the reason.
TEST_F(VfioBindTest, RealWriterWritesTheAttributesAndAnUnboundMemberKeepsTheGpuOut) {
  RootedSysfsWriter writer(root_.string());
  absl::StatusOr<std::vector<GroupBinding>> groups =
      BindGpuGroupsToVfio(RootedFs(root_.string()), writer);
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_EQ(ReadAll(root_ / "sys/bus/pci/devices/0000:3b:00.1/driver_override"), "vfio-pci");
  // The unbind went through the driver link to the driver's own file.
  EXPECT_EQ(ReadAll(root_ / "sys/bus/pci/drivers/snd_hda_intel/unbind"), "0000:3b:00.1");
  EXPECT_EQ(ReadAll(root_ / "sys/bus/pci/drivers_probe"), "0000:3b:00.1");
  EXPECT_EQ(ReadAll(root_ / "sys/bus/pci/devices/0000:3a:00.0/driver_override"), "(null)\n");
  EXPECT_EQ(ReadAll(root_ / "sys/bus/pci/devices/0000:5e:00.0/driver_override"), "(null)\n");
  EXPECT_EQ(ReadAll(root_ / "sys/bus/pci/drivers/mlx5_core/unbind"), "");
  EXPECT_FALSE((*groups)[0].bound);
  EXPECT_TRUE((*groups)[0].device_missing);
  EXPECT_THAT((*groups)[0].problem, HasSubstr("/dev/vfio/33 did not appear after binding"));

  std::filesystem::remove(root_ / "sys/bus/pci/devices/0000:3b:00.0/driver");
  std::filesystem::create_symlink("/sys/bus/pci/drivers/vfio-pci",
                                  root_ / "sys/bus/pci/devices/0000:3b:00.0/driver");
  EXPECT_THAT(core::VmBindingProblem(Gpu(Discover(), "0000:3b:00.0")),
              Optional(std::string("GPU 0000:3b:00.0: group 33 member 0000:3b:00.1 is bound to "
                                   "snd_hda_intel, not vfio-pci")));
}

TEST_F(VfioBindTest, AFailedWriteEndsItsGroupsBinding) {
  FakeKernel kernel(root_);
  kernel.refuse = "/sys/bus/pci/devices/0000:3b:00.1/driver/unbind";
  absl::StatusOr<std::vector<GroupBinding>> groups =
      BindGpuGroupsToVfio(RootedFs(root_.string()), kernel);
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_EQ(kernel.writes().size(), 5u);  // Not the probe of 0000:3b:00.1.
  EXPECT_FALSE((*groups)[0].bound);
  EXPECT_FALSE((*groups)[0].device_missing);
  EXPECT_THAT((*groups)[0].problem,
              HasSubstr("IOMMU group 33 (GPU 0000:3b:00.0): writing 0000:3b:00.1 to "
                        "/sys/bus/pci/devices/0000:3b:00.1/driver/unbind: Device or resource busy"));
  EXPECT_TRUE((*groups)[1].bound);
  // The kernel kept the audio function on its driver: the reason says so.
  EXPECT_THAT(core::VmBindingProblem(Gpu(Discover(), "0000:3b:00.0")),
              Optional(HasSubstr("member 0000:3b:00.1 is bound to snd_hda_intel, not vfio-pci")));
}

// Unbinding with no vfio-pci to take the devices over would leave them
// with no driver at all.
TEST_F(VfioBindTest, WritesNothingWithoutTheVfioPciDriver) {
  std::filesystem::remove_all(root_ / "sys/bus/pci/drivers/vfio-pci");
  FakeKernel kernel(root_);
  absl::StatusOr<std::vector<GroupBinding>> groups =
      BindGpuGroupsToVfio(RootedFs(root_.string()), kernel);
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_THAT(kernel.writes(), IsEmpty());
  EXPECT_THAT((*groups)[0].problem, HasSubstr("modprobe vfio-pci"));
}

// A group that also holds one of the host's own devices is left alone.
TEST_F(VfioBindTest, LeavesAGroupWithAForeignDeviceAlone) {
  std::filesystem::create_symlink("../../../../devices/pci0000:5d/0000:5d:00.0/0000:5e:00.0",
                                  root_ / "sys/kernel/iommu_groups/33/devices/0000:5e:00.0");
  FakeKernel kernel(root_);
  absl::StatusOr<std::vector<GroupBinding>> groups =
      BindGpuGroupsToVfio(RootedFs(root_.string()), kernel);
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_THAT(kernel.writes(), IsEmpty());
  EXPECT_THAT((*groups)[0].problem,
              HasSubstr("also holds 0000:5e:00.0 (Ethernet controller, driver mlx5_core)"));
}

TEST_F(VfioBindTest, RealWriterNeverCreatesAMissingAttribute) {
  RootedSysfsWriter writer(root_.string());
  absl::Status status = writer.Write("/sys/bus/pci/devices/0000:3b:00.0/no_such", "x");
  EXPECT_TRUE(absl::IsNotFound(status)) << status;
  EXPECT_FALSE(std::filesystem::exists(root_ / "sys/bus/pci/devices/0000:3b:00.0/no_such"));
}

}  // namespace
}  // namespace wsched::agent
