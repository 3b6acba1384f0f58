#include "server/placement/new_node_install.h"

#include "gtest/gtest.h"
#include "server/placement/test_nodes.h"

namespace wsched::placement {
namespace {

using testing::FakeGpuNode;

constexpr char kKernel[] = "6.1.0-18-amd64";  // FakeGpuNode's, on debian 12.

std::vector<core::DriverPolicyEntry> Policy() {
  return {{.kernel = "6.1.0-*-amd64",
           .os_id = "debian",
           .os_version = "12",
           .driver_version = "550.54.15",
           .driver_branch = "550",
           .installer_repo = "registry.example.com/nvidia/driver"}};
}

core::NodePool GpuPool() {
  core::NodePool pool;
  pool.id = "gpu-h100";
  pool.shape.gpus_per_node = 8;
  pool.shape.gpu_model = "H100";
  return pool;
}

class NewNodeInstallTest : public ::testing::Test {
 protected:
  void Add(const std::string& name, core::DriverState driver, const std::string& kernel = kKernel,
           const std::string& pool = "gpu-h100") {
    core::NodeInfo info = FakeGpuNode(name, pool);
    info.kernel_version = kernel;
    ASSERT_TRUE(snapshot_.UpsertNode(info, core::NodeState::kReady, driver).ok());
  }

  std::optional<std::string> Kernel(const std::vector<std::string>& measured = {}) {
    return NewNodeInstallKernel(pool_, snapshot_, policy_, measured);
  }

  core::NodePool pool_ = GpuPool();
  std::vector<core::DriverPolicyEntry> policy_ = Policy();
  Snapshot snapshot_;
};

TEST_F(NewNodeInstallTest, WithNoNodeUpTheMostRecentMeasuredKernelStandsIn) {
  Add("other-pool-1", core::DriverState::kNeedsDriver, kKernel, "gpu-a100");
  EXPECT_EQ(Kernel({"6.1.0-20-amd64", kKernel}), "6.1.0-20-amd64");
  // A kernel the policy no longer names installs nothing.
  EXPECT_EQ(Kernel({"5.15.0-91-generic"}), std::nullopt);
  // Nothing measured: an install on a kernel not known (the default time).
  EXPECT_EQ(Kernel(), "");
}

TEST_F(NewNodeInstallTest, ANodeThatInstallsNamesThePoolsKernel) {
  Add("gpu-1", core::DriverState::kInstalling);
  EXPECT_EQ(Kernel(), kKernel);
  EXPECT_EQ(Kernel({"6.1.0-20-amd64"}), kKernel) << "the nodes up win over old measurements";
}

TEST_F(NewNodeInstallTest, NodesThatCameUpReadyWithNoInstallMeasuredHaveTheDriverInTheirImage) {
  Add("gpu-1", core::DriverState::kReady);
  EXPECT_EQ(Kernel(), std::nullopt);
  // Once an install on that kernel was measured, the ready node installed.
  EXPECT_EQ(Kernel({kKernel}), kKernel);
}

TEST_F(NewNodeInstallTest, TheKernelMostNodesRunIsThePools) {
  Add("gpu-1", core::DriverState::kInstalling, "6.1.0-20-amd64");
  Add("gpu-2", core::DriverState::kReady);
  Add("gpu-3", core::DriverState::kReady);
  EXPECT_EQ(Kernel({kKernel}), kKernel);
  // A tie goes to the kernel of the first node by name.
  Add("gpu-0", core::DriverState::kNeedsDriver, "6.1.0-20-amd64");
  EXPECT_EQ(Kernel(), "6.1.0-20-amd64");
}

TEST_F(NewNodeInstallTest, NoPolicyEntryForTheNodesKernelAndOsInstallsNothing) {
  Add("gpu-1", core::DriverState::kNeedsDriver, "5.15.0-91-generic");
  EXPECT_EQ(Kernel({"5.15.0-91-generic"}), std::nullopt);
}

TEST_F(NewNodeInstallTest, VfioPoolsCpuPoolsAndAnEmptyPolicyInstallNothing) {
  pool_.gpu_binding = core::GpuBinding::kVfio;
  EXPECT_EQ(Kernel({kKernel}), std::nullopt);
  pool_ = GpuPool();
  pool_.shape.gpus_per_node = 0;
  EXPECT_EQ(Kernel({kKernel}), std::nullopt);
  pool_ = GpuPool();
  policy_.clear();
  EXPECT_EQ(Kernel({kKernel}), std::nullopt);
}

TEST(ProvisioningNodeInstallTest, AProvisioningNodeInstallsOnlyWhatItReportedItNeeds) {
  Snapshot snapshot;
  core::NodeInfo info = FakeGpuNode("n-1", "gpu-h100");
  for (core::DriverState state : {core::DriverState::kNeedsDriver, core::DriverState::kInstalling}) {
    ASSERT_TRUE(snapshot.UpsertNode(info, core::NodeState::kProvisioning, state).ok());
    EXPECT_EQ(ProvisioningNodeInstallKernel(*snapshot.FindNode("n-1")), kKernel);
  }
  for (core::DriverState state : {core::DriverState::kReady, core::DriverState::kNoPolicy,
                                  core::DriverState::kInstallFailed}) {
    ASSERT_TRUE(snapshot.UpsertNode(info, core::NodeState::kProvisioning, state).ok());
    EXPECT_EQ(ProvisioningNodeInstallKernel(*snapshot.FindNode("n-1")), std::nullopt);
  }
  info.gpus.clear();
  ASSERT_TRUE(
      snapshot.UpsertNode(info, core::NodeState::kProvisioning, core::DriverState::kNeedsDriver)
          .ok());
  EXPECT_EQ(ProvisioningNodeInstallKernel(*snapshot.FindNode("n-1")), std::nullopt)
      << "a node without GPUs installs no GPU driver";
}

}  // namespace
}  // namespace wsched::placement
