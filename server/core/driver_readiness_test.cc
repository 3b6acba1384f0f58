#include "server/core/driver_readiness.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::core {
namespace {

std::vector<DriverPolicyEntry> Policy() {
  return {{"5.15.0-*-generic", "ubuntu", "22.04", "550.54.15", "550", "reg.example/driver"}};
}

NodeInfo GpuNode(std::string kernel, std::string driver) {
  NodeInfo node;
  node.name = "n1";
  node.kernel_version = std::move(kernel);
  node.os_id = "ubuntu";
  node.os_version = "22.04";
  node.driver_version = std::move(driver);
  node.gpus.push_back({});
  return node;
}

TEST(DriverReadiness, PrebakedDriverIsReadyOnFirstRegistration) {
  NodeInfo node = GpuNode("5.15.0-91-generic", "550.54.15");
  DriverHistory history = HistoryOnReport(Policy(), node, {}, /*first_registration=*/true);
  EXPECT_EQ(EvaluateDriver(Policy(), node, history).state, DriverState::kReady);
}

TEST(DriverReadiness, KernelChangeNeedsTheInstallerAgain) {
  NodeInfo node = GpuNode("5.15.0-91-generic", "550.54.15");
  DriverHistory history = HistoryOnReport(Policy(), node, {}, true);
  node.kernel_version = "5.15.0-92-generic";  // OS upgrade; the module may even still load.
  history = HistoryOnReport(Policy(), node, history, false);
  DriverReadiness readiness = EvaluateDriver(Policy(), node, history);
  EXPECT_EQ(readiness.state, DriverState::kNeedsDriver);
  ASSERT_TRUE(readiness.requirement.has_value());
  EXPECT_EQ(readiness.requirement->installer_image,
            "reg.example/driver:550-5.15.0-92-generic-ubuntu22.04");
  history.verified_kernel = "5.15.0-92-generic";  // The installer reported success.
  EXPECT_EQ(EvaluateDriver(Policy(), node, history).state, DriverState::kReady);
}

TEST(DriverReadiness, MissingDriverFailedInstallAndNoPolicy) {
  NodeInfo node = GpuNode("5.15.0-91-generic", "");
  EXPECT_EQ(EvaluateDriver(Policy(), node, HistoryOnReport(Policy(), node, {}, true)).state,
            DriverState::kNeedsDriver);
  EXPECT_EQ(EvaluateDriver(Policy(), node, {"", "5.15.0-91-generic"}).state,
            DriverState::kInstallFailed);
  NodeInfo other = GpuNode("6.8.0-1-generic", "550.54.15");
  DriverReadiness readiness = EvaluateDriver(Policy(), other, {});
  EXPECT_EQ(readiness.state, DriverState::kNoPolicy);
  EXPECT_THAT(readiness.detail, ::testing::HasSubstr("no driver policy entry for kernel 6.8.0-1"));
  NodeInfo cpu;
  EXPECT_EQ(EvaluateDriver(Policy(), cpu, {}).state, DriverState::kNotNeeded);
}

// A node's agent installs, then reports the end: installing until then, and
// ready only once the policy's driver is loaded for the running kernel.
TEST(DriverReadiness, InstallingUntilTheAgentReportsTheEnd) {
  NodeInfo node = GpuNode("5.15.0-91-generic", "");
  DriverHistory history;
  history.installing_kernel = "5.15.0-91-generic";
  DriverReadiness readiness = EvaluateDriver(Policy(), node, history);
  EXPECT_EQ(readiness.state, DriverState::kInstalling);
  EXPECT_THAT(readiness.detail, ::testing::HasSubstr("the agent installs driver 550.54.15"));
  history.installing_kernel.clear();
  history.verified_kernel = "5.15.0-91-generic";  // Success reported, module not loaded yet.
  EXPECT_EQ(EvaluateDriver(Policy(), node, history).state, DriverState::kNeedsDriver);
  node.driver_version = "550.54.15";
  EXPECT_EQ(EvaluateDriver(Policy(), node, history).state, DriverState::kReady);
}

TEST(DriverReadiness, AFailedInstallSaysWhatItsJobSaid) {
  NodeInfo node = GpuNode("5.15.0-91-generic", "");
  DriverHistory history;
  history.failed_kernel = "5.15.0-91-generic";
  history.failure = "exit 3: gcc: not found";
  DriverReadiness readiness = EvaluateDriver(Policy(), node, history);
  EXPECT_EQ(readiness.state, DriverState::kInstallFailed);
  EXPECT_THAT(readiness.detail, ::testing::HasSubstr("failed: exit 3: gcc: not found"));
  history.installing_kernel = "5.15.0-91-generic";  // The retry started.
  EXPECT_EQ(EvaluateDriver(Policy(), node, history).state, DriverState::kInstalling);
}

// A policy change (550 -> 560) on a node whose 550 works for its kernel:
// it serves, outdated, until the pool's rollout releases it; released, it
// needs its driver; ready once 560 is loaded.
TEST(DriverReadiness, APolicyChangeLeavesAWorkingNodeOutdatedUntilReleased) {
  NodeInfo node = GpuNode("5.15.0-91-generic", "550.54.15");
  DriverHistory history = HistoryOnReport(Policy(), node, {}, true);
  std::vector<DriverPolicyEntry> newer = Policy();
  newer[0].driver_version = "560.35.03";
  DriverReadiness readiness = EvaluateDriver(newer, node, history);
  EXPECT_EQ(readiness.state, DriverState::kOutdated);
  EXPECT_THAT(readiness.detail, ::testing::HasSubstr("driver 550.54.15 works"));
  history.released_driver = "560.35.03";
  readiness = EvaluateDriver(newer, node, history);
  EXPECT_EQ(readiness.state, DriverState::kNeedsDriver);
  EXPECT_THAT(readiness.detail, ::testing::StartsWith("released by the pool's driver rollout"));
  node.driver_version = "560.35.03";
  EXPECT_EQ(EvaluateDriver(newer, node, history).state, DriverState::kReady);
  // A release for an older policy does not count for a newer one.
  newer[0].driver_version = "570.86.10";
  EXPECT_EQ(EvaluateDriver(newer, node, history).state, DriverState::kOutdated);
}

// GPUs on vfio-pci go to VMs, whose guests load the driver: the host of a
// vfio pool needs none, whatever the policy says for its kernel.
TEST(DriverReadiness, VfioPoolNeedsNoHostDriver) {
  NodeInfo node = GpuNode("5.15.0-91-generic", "");
  DriverReadiness readiness = EvaluateDriver(Policy(), node, {}, GpuBinding::kVfio);
  EXPECT_EQ(readiness.state, DriverState::kNotNeeded);
  EXPECT_THAT(readiness.detail, ::testing::HasSubstr("gpu_binding vfio"));
  EXPECT_EQ(EvaluateDriver(Policy(), node, {}, GpuBinding::kHost).state, DriverState::kNeedsDriver);
}

}  // namespace
}  // namespace wsched::core
