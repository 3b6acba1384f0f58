#include "server/agent/agent_loop.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/agent/fake_kernel_test_util.h"
#include "server/agent/node_token.h"
#include "server/agent/test_paths.h"
#include "server/core/error_reason.h"

namespace wsched::agent {
namespace {

using ::testing::HasSubstr;
using testing::Tree;

// Answers from scripted queues (then OK) and records what it was sent, and
// with which bearer token. Unscripted, a registration that carries a node
// token hash is answered as the server does: the credential is issued.
class FakeInventory : public InventoryClient {
 public:
  absl::StatusOr<wsched::v1::RegisterNodeResponse> RegisterNode(
      const wsched::v1::RegisterNodeRequest& request, const std::string& bearer) override {
    absl::MutexLock lock(&mutex_);
    registers_.push_back(request);
    register_bearers_.push_back(bearer);
    if (register_errors_.empty()) {
      wsched::v1::RegisterNodeResponse response;
      response.set_node_credential_issued(!request.node_token_sha256().empty());
      if (driver_work_) *response.mutable_driver_work() = *driver_work_;
      if (mig_work_) *response.mutable_mig_work() = *mig_work_;
      return response;
    }
    absl::Status error = register_errors_.front();
    register_errors_.pop_front();
    return error;
  }

  absl::StatusOr<wsched::v1::HeartbeatResponse> Heartbeat(
      const wsched::v1::HeartbeatRequest& request, const std::string& bearer) override {
    absl::MutexLock lock(&mutex_);
    heartbeats_.push_back(request);
    heartbeat_bearers_.push_back(bearer);
    if (heartbeat_answers_.empty()) {
      wsched::v1::HeartbeatResponse response;
      if (driver_work_) *response.mutable_driver_work() = *driver_work_;
      if (mig_work_) *response.mutable_mig_work() = *mig_work_;
      return response;
    }
    absl::StatusOr<wsched::v1::HeartbeatResponse> answer = heartbeat_answers_.front();
    heartbeat_answers_.pop_front();
    return answer;
  }

  absl::StatusOr<wsched::v1::Node> ReportDriverInstall(
      const wsched::v1::ReportDriverInstallRequest& request, const std::string& bearer) override {
    absl::MutexLock lock(&mutex_);
    install_reports_.push_back(request);
    install_bearers_.push_back(bearer);
    return wsched::v1::Node();
  }
  std::vector<wsched::v1::ReportDriverInstallRequest> install_reports() {
    absl::MutexLock lock(&mutex_);
    return install_reports_;
  }
  bool AwaitInstallReports(size_t count) {
    absl::MutexLock lock(&mutex_);
    auto reached = [&]() ABSL_SHARED_LOCKS_REQUIRED(mutex_) {
      return install_reports_.size() >= count;
    };
    return mutex_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(10));
  }

  // Every answer from now on hands out this install.
  void HandOut(wsched::v1::DriverWork work) {
    absl::MutexLock lock(&mutex_);
    driver_work_ = std::move(work);
  }

  // Every answer from now on hands out this MIG re-layout.
  void HandOut(wsched::v1::MigWork work) {
    absl::MutexLock lock(&mutex_);
    mig_work_ = std::move(work);
  }

  void FailRegister(absl::Status error) {
    absl::MutexLock lock(&mutex_);
    register_errors_.push_back(std::move(error));
  }
  void AnswerHeartbeat(absl::StatusOr<wsched::v1::HeartbeatResponse> answer) {
    absl::MutexLock lock(&mutex_);
    heartbeat_answers_.push_back(std::move(answer));
  }

  // Waits (bounded) until at least that many calls arrived.
  bool AwaitCalls(size_t registers, size_t heartbeats) {
    absl::MutexLock lock(&mutex_);
    auto reached = [&]() ABSL_SHARED_LOCKS_REQUIRED(mutex_) {
      return registers_.size() >= registers && heartbeats_.size() >= heartbeats;
    };
    return mutex_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(10));
  }

  std::vector<wsched::v1::RegisterNodeRequest> registers() {
    absl::MutexLock lock(&mutex_);
    return registers_;
  }
  std::vector<wsched::v1::HeartbeatRequest> heartbeats() {
    absl::MutexLock lock(&mutex_);
    return heartbeats_;
  }
  std::vector<std::string> register_bearers() {
    absl::MutexLock lock(&mutex_);
    return register_bearers_;
  }
  std::vector<std::string> heartbeat_bearers() {
    absl::MutexLock lock(&mutex_);
    return heartbeat_bearers_;
  }

 private:
  absl::Mutex mutex_;
  std::deque<absl::Status> register_errors_ ABSL_GUARDED_BY(mutex_);
  std::deque<absl::StatusOr<wsched::v1::HeartbeatResponse>> heartbeat_answers_
      ABSL_GUARDED_BY(mutex_);
  std::vector<wsched::v1::RegisterNodeRequest> registers_ ABSL_GUARDED_BY(mutex_);
  std::vector<wsched::v1::HeartbeatRequest> heartbeats_ ABSL_GUARDED_BY(mutex_);
  std::vector<std::string> register_bearers_ ABSL_GUARDED_BY(mutex_);
  std::vector<std::string> heartbeat_bearers_ ABSL_GUARDED_BY(mutex_);
  std::vector<wsched::v1::ReportDriverInstallRequest> install_reports_ ABSL_GUARDED_BY(mutex_);
  std::vector<std::string> install_bearers_ ABSL_GUARDED_BY(mutex_);
  std::optional<wsched::v1::DriverWork> driver_work_ ABSL_GUARDED_BY(mutex_);
  std::optional<wsched::v1::MigWork> mig_work_ ABSL_GUARDED_BY(mutex_);
};

AgentOptions FastOptions(const std::string& tree) {
  AgentOptions options;
  options.discovery.root = Tree(tree);
  options.discovery.pool = "gpu-h100";
  options.nvidia_smi = "";  // No sampling unless a test asks for it.
  options.heartbeat_interval = absl::Milliseconds(2);
  options.initial_backoff = absl::Milliseconds(1);
  options.max_backoff = absl::Milliseconds(4);
  return options;
}

// Runs the loop on a thread; stops and joins it on destruction.
class RunningAgent {
 public:
  RunningAgent(AgentOptions options, InventoryClient& client)
      : agent_(std::move(options), client, stop_), thread_([this] { agent_.Run(); }) {}
  ~RunningAgent() {
    stop_.Stop();
    thread_.join();
  }

 private:
  StopSignal stop_;
  Agent agent_;
  std::thread thread_;
};

TEST(AgentOnceTest, RegistersThenSendsOneHeartbeat) {
  FakeInventory inventory;
  StopSignal stop;
  Agent agent(FastOptions("h100-8gpu"), inventory, stop);
  ASSERT_TRUE(agent.RunOnce().ok());
  ASSERT_EQ(inventory.registers().size(), 1u);
  wsched::v1::NodeInfo node = inventory.registers()[0].node();
  EXPECT_EQ(node.name(), "h100-node-1");
  EXPECT_EQ(node.pool(), "gpu-h100");
  EXPECT_EQ(node.gpus_size(), 8);
  ASSERT_EQ(inventory.heartbeats().size(), 1u);
  EXPECT_EQ(inventory.heartbeats()[0].kernel_version(), "5.15.0-91-generic");
  EXPECT_EQ(inventory.heartbeats()[0].gpu_health_by_uuid_size(), 8);
}

// In a vfio pool the agent binds before it discovers, so the registration
// already carries the GPUs and their group members on vfio-pci.
TEST(AgentOnceTest, VfioPoolBindsGroupsBeforeReporting) {
  testing::ScratchDir scratch;
  const std::filesystem::path root = scratch.path() / "root";
  testing::CopyTree(Tree("vfio-host"), root);
  FakeInventory inventory;
  AgentOptions options = FastOptions("vfio-host");
  options.discovery.root = root.string();
  options.gpu_binding = core::GpuBinding::kVfio;
  auto kernel = std::make_shared<testing::FakeKernel>(root);
  options.sysfs_writer = kernel;
  StopSignal stop;
  ASSERT_TRUE(Agent(options, inventory, stop).RunOnce().ok());
  EXPECT_EQ(kernel->writes().size(), 6u);
  const std::vector<wsched::v1::RegisterNodeRequest> registers = inventory.registers();
  ASSERT_EQ(registers.size(), 1u);
  const wsched::v1::NodeInfo& node = registers[0].node();
  ASSERT_EQ(node.gpus_size(), 2);
  for (const auto& gpu : node.gpus()) {
    EXPECT_EQ(gpu.driver(), "vfio-pci") << gpu.pci_address();
    for (const auto& member : gpu.iommu_group_members()) {
      EXPECT_EQ(member.driver(), member.pci_class() == "0x060400" ? "pcieport" : "vfio-pci")
          << member.pci_address();
    }
  }
  const std::vector<wsched::v1::HeartbeatRequest> heartbeats = inventory.heartbeats();
  ASSERT_EQ(heartbeats.size(), 1u);
  for (const auto& [uuid, health] : heartbeats[0].gpu_health_by_uuid()) {
    EXPECT_EQ(health, wsched::v1::GPU_HEALTH_HEALTHY) << uuid;
  }
}

// Wholly on vfio-pci but no /dev/vfio/<group>: no VM could open it.
TEST(AgentOnceTest, VfioGroupWithoutItsDeviceNodeIsReportedUnhealthy) {
  testing::ScratchDir scratch;
  const std::filesystem::path root = scratch.path() / "root";
  testing::CopyTree(Tree("vfio-host"), root);
  for (const char* address : {"0000:3b:00.0", "0000:3b:00.1"}) {
    const std::filesystem::path driver = root / "sys/bus/pci/devices" / address / "driver";
    std::filesystem::remove(driver);
    std::filesystem::create_symlink("/sys/bus/pci/drivers/vfio-pci", driver);
  }
  FakeInventory inventory;
  AgentOptions options = FastOptions("vfio-host");
  options.discovery.root = root.string();
  options.gpu_binding = core::GpuBinding::kVfio;
  auto kernel = std::make_shared<testing::FakeKernel>(root);
  options.sysfs_writer = kernel;
  StopSignal stop;
  ASSERT_TRUE(Agent(options, inventory, stop).RunOnce().ok());
  EXPECT_TRUE(kernel->writes().empty());  // Nothing to bind.
  const std::vector<wsched::v1::RegisterNodeRequest> registers = inventory.registers();
  ASSERT_EQ(registers.size(), 1u);
  const wsched::v1::NodeInfo& node = registers[0].node();
  for (const auto& gpu : node.gpus()) {
    if (gpu.pci_address() != "0000:3b:00.0") {
      EXPECT_EQ(gpu.health(), wsched::v1::GPU_HEALTH_HEALTHY);
      continue;
    }
    EXPECT_EQ(gpu.driver(), "vfio-pci");
    EXPECT_EQ(gpu.health(), wsched::v1::GPU_HEALTH_UNHEALTHY);
    EXPECT_THAT(gpu.health_reason(), HasSubstr("VFIO: IOMMU group 33"));
    EXPECT_THAT(gpu.health_reason(), HasSubstr("/dev/vfio/33 did not appear"));
  }
}

// A host pool's agent never writes sysfs.
TEST(AgentOnceTest, HostPoolNeverBinds) {
  FakeInventory inventory;
  AgentOptions options = FastOptions("vfio-host");
  auto kernel = std::make_shared<testing::FakeKernel>(Tree("vfio-host"));
  options.sysfs_writer = kernel;
  StopSignal stop;
  ASSERT_TRUE(Agent(options, inventory, stop).RunOnce().ok());
  EXPECT_TRUE(kernel->writes().empty());
  EXPECT_EQ(inventory.registers()[0].node().gpus(0).driver(), "nvidia");
}

TEST(AgentOnceTest, ReturnsTheServerError) {
  FakeInventory inventory;
  inventory.FailRegister(absl::PermissionDeniedError("role agent may not register pool x"));
  StopSignal stop;
  absl::Status status = Agent(FastOptions("h100-8gpu"), inventory, stop).RunOnce();
  EXPECT_TRUE(absl::IsPermissionDenied(status));
  EXPECT_THAT(status.message(), HasSubstr("RegisterNode"));
}

TEST(AgentOnceTest, DiscoveryErrorNamesTheRoot) {
  FakeInventory inventory;
  AgentOptions options = FastOptions("h100-8gpu");
  options.discovery.root = "/nonexistent-root";
  StopSignal stop;
  absl::Status status = Agent(options, inventory, stop).RunOnce();
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("/nonexistent-root"));
  EXPECT_TRUE(inventory.registers().empty());
}

TEST(AgentOnceTest, HeartbeatCarriesNvidiaSmiUsage) {
  FakeInventory inventory;
  AgentOptions options = FastOptions("desktop-usb-group");
  options.nvidia_smi = testing::FakeNvidiaSmi();
  StopSignal stop;
  ASSERT_TRUE(Agent(options, inventory, stop).RunOnce().ok());
  EXPECT_EQ(inventory.registers()[0].node().gpus(0).uuid(),
            "GPU-3f9c2a71-8d4e-4b0a-9c51-2e7d6a1b8f04");
  ASSERT_EQ(inventory.heartbeats()[0].gpu_usage_size(), 1);
  EXPECT_EQ(inventory.heartbeats()[0].gpu_usage(0).utilization_percent(), 7);
}

std::string Fixture(const std::string& name) {
  return absl::StrCat(WSCHED_SOURCE_DIR, "/tests/fixtures/gpu_health/", name);
}

// Fake nvidia-smi output and kernel log lines for the 8-GPU tree: each GPU
// but GPU 6 and 7 has one thing wrong (see the fixture files).
class AgentHealthTest : public ::testing::Test {
 protected:
  void SetUp() override { setenv("FAKE_NVIDIA_SMI_CSV", Fixture("h100-smi-unhealthy.csv").c_str(), 1); }
  void TearDown() override {
    unsetenv("FAKE_NVIDIA_SMI_CSV");
    unsetenv("FAKE_NVIDIA_SMI_MODE");
  }
  static AgentOptions Options() {
    AgentOptions options = FastOptions("h100-8gpu");
    options.nvidia_smi = testing::FakeNvidiaSmi();
    options.kernel_log = Fixture("kmsg-xids.txt");
    return options;
  }
};

TEST_F(AgentHealthTest, HeartbeatMarksTheRightGpusUnhealthy) {
  FakeInventory inventory;
  StopSignal stop;
  ASSERT_TRUE(Agent(Options(), inventory, stop).RunOnce().ok());
  ASSERT_EQ(inventory.heartbeats().size(), 1u);
  const wsched::v1::HeartbeatRequest heartbeat = inventory.heartbeats()[0];
  const std::map<std::string, std::string> expected_problem = {
      {"GPU-1f0b7c9e-4a2d-4e35-8b61-0c9a7d3e2f10", "XID 79: GPU has fallen off the bus"},
      {"GPU-2a6d4e81-9b3c-4f07-a2d5-1e8b6c4f3a21", "2 uncorrected ECC error(s)"},
      {"GPU-3b9e2f14-6c7a-4d18-b3e6-2f9c7d5a4b32", "remapped rows pending"},
      {"GPU-4c1f8a27-3d6b-4e29-84f7-3a0d8e6b5c43", "row remapping failed"},
      {"GPU-5d2a9b38-7e4c-4f3a-95a8-4b1e9f7c6d54", "nvidia-smi: [GPU requires reset]"},
      {"GPU-6e3bac49-1f5d-4a4b-a6b9-5c2fa08d7e65", "nvidia-smi: GPU is lost"},
  };
  ASSERT_EQ(heartbeat.gpu_health_by_uuid_size(), 8);
  for (const auto& [uuid, health] : heartbeat.gpu_health_by_uuid()) {
    auto expected = expected_problem.find(uuid);
    if (expected == expected_problem.end()) {
      // GPU 6 had XIDs 13 and 31, GPU 7 XIDs 43 and 45: application errors.
      EXPECT_EQ(health, wsched::v1::GPU_HEALTH_HEALTHY) << uuid;
      EXPECT_FALSE(heartbeat.gpu_health_reason_by_uuid().contains(uuid)) << uuid;
      continue;
    }
    EXPECT_EQ(health, wsched::v1::GPU_HEALTH_UNHEALTHY) << uuid;
    EXPECT_THAT(heartbeat.gpu_health_reason_by_uuid().at(uuid), HasSubstr(expected->second));
  }
  // Registration carries the same health, and the lost GPU keeps its UUID
  // (from /proc/driver/nvidia) and memory.
  const wsched::v1::NodeInfo node = inventory.registers()[0].node();
  EXPECT_EQ(node.gpus(0).health(), wsched::v1::GPU_HEALTH_UNHEALTHY);
  EXPECT_EQ(node.gpus(0).health_reason(), "XID 79: GPU has fallen off the bus");
  EXPECT_EQ(node.gpus(6).health(), wsched::v1::GPU_HEALTH_HEALTHY);
  EXPECT_EQ(node.gpus(0).memory_bytes(), int64_t{81559} << 20);
  EXPECT_EQ(node.gpus(5).uuid(), "GPU-6e3bac49-1f5d-4a4b-a6b9-5c2fa08d7e65");
}

TEST_F(AgentHealthTest, HealthyOutputAndNoXidsAreAllHealthy) {
  setenv("FAKE_NVIDIA_SMI_CSV", Fixture("h100-smi-healthy.csv").c_str(), 1);
  AgentOptions options = Options();
  options.kernel_log = "";
  FakeInventory inventory;
  StopSignal stop;
  ASSERT_TRUE(Agent(options, inventory, stop).RunOnce().ok());
  const wsched::v1::HeartbeatRequest heartbeat = inventory.heartbeats()[0];
  ASSERT_EQ(heartbeat.gpu_health_by_uuid_size(), 8);
  for (const auto& [uuid, health] : heartbeat.gpu_health_by_uuid()) {
    EXPECT_EQ(health, wsched::v1::GPU_HEALTH_HEALTHY) << uuid;
  }
  EXPECT_EQ(heartbeat.gpu_health_reason_by_uuid_size(), 0);
}

TEST_F(AgentHealthTest, FailedNvidiaSmiLeavesAllButXidGpusUnjudged) {
  setenv("FAKE_NVIDIA_SMI_MODE", "fail", 1);
  FakeInventory inventory;
  StopSignal stop;
  ASSERT_TRUE(Agent(Options(), inventory, stop).RunOnce().ok());
  const wsched::v1::HeartbeatRequest heartbeat = inventory.heartbeats()[0];
  ASSERT_EQ(heartbeat.gpu_health_by_uuid_size(), 1);
  EXPECT_EQ(heartbeat.gpu_health_by_uuid().at("GPU-1f0b7c9e-4a2d-4e35-8b61-0c9a7d3e2f10"),
            wsched::v1::GPU_HEALTH_UNHEALTHY);
}

TEST(AgentLoopTest, KeepsRetryingWhileTheServerIsDown) {
  FakeInventory inventory;
  for (int i = 0; i < 3; ++i) inventory.FailRegister(absl::UnavailableError("connection refused"));
  RunningAgent agent(FastOptions("h100-8gpu"), inventory);
  ASSERT_TRUE(inventory.AwaitCalls(4, 2));
  EXPECT_EQ(inventory.registers().size(), 4u);  // Registered once it could, then heartbeats.
}

TEST(AgentLoopTest, HeartbeatErrorsDoNotStopTheLoop) {
  FakeInventory inventory;
  inventory.AnswerHeartbeat(absl::UnavailableError("server restarting"));
  inventory.AnswerHeartbeat(absl::DeadlineExceededError("slow"));
  RunningAgent agent(FastOptions("h100-8gpu"), inventory);
  ASSERT_TRUE(inventory.AwaitCalls(1, 4));
  EXPECT_EQ(inventory.registers().size(), 1u);
}

TEST(AgentLoopTest, RegistersAgainWhenAsked) {
  FakeInventory inventory;
  wsched::v1::HeartbeatResponse reregister;
  reregister.set_reregister(true);
  inventory.AnswerHeartbeat(reregister);
  RunningAgent agent(FastOptions("h100-8gpu"), inventory);
  ASSERT_TRUE(inventory.AwaitCalls(2, 2));
}

TEST(AgentLoopTest, RegistersAgainWhenTheServerForgotTheNode) {
  FakeInventory inventory;
  inventory.AnswerHeartbeat(absl::NotFoundError("node h100-node-1 not found"));
  RunningAgent agent(FastOptions("h100-8gpu"), inventory);
  ASSERT_TRUE(inventory.AwaitCalls(2, 2));
}

wsched::v1::DriverWork Work() {
  wsched::v1::DriverWork work;
  work.set_node_name("gpu-node-1");
  work.set_kernel_version("6.1.0-18-amd64");
  work.set_os_id("debian");
  work.set_os_version("12");
  work.set_driver_version("550.54.15");
  work.set_installer_image("registry.example/driver:550-6.1.0-18-amd64-debian12");
  return work;
}

process::Result Ran(int exit_code, std::string log) {
  process::Result result;
  result.exit_code = exit_code;
  result.out.text = std::move(log);
  result.took = absl::Seconds(42);
  return result;
}

TEST(AgentLoopTest, RunsAHandedOutInstallAndReportsItsStartAndEnd) {
  FakeInventory inventory;
  inventory.HandOut(Work());
  std::vector<std::string> commands;
  absl::Mutex mutex;
  AgentOptions options = FastOptions("h100-8gpu");
  options.driver_install_runner = [&](const process::Command& command) {
    absl::MutexLock lock(&mutex);
    commands.push_back(absl::StrJoin(command.argv, " "));
    return absl::StatusOr<process::Result>(Ran(0, "wsched-driver-cache: hit\ninstalled\n"));
  };
  RunningAgent agent(options, inventory);
  ASSERT_TRUE(inventory.AwaitInstallReports(2));
  const auto reports = inventory.install_reports();
  EXPECT_EQ(reports[0].outcome(), wsched::v1::DRIVER_INSTALL_OUTCOME_STARTED);
  EXPECT_EQ(reports[0].node_name(), "gpu-node-1");
  EXPECT_EQ(reports[0].kernel_version(), "6.1.0-18-amd64");
  EXPECT_EQ(reports[1].outcome(), wsched::v1::DRIVER_INSTALL_OUTCOME_SUCCEEDED);
  EXPECT_TRUE(reports[1].success());
  EXPECT_EQ(reports[1].detail(), "550.54.15");
  EXPECT_EQ(reports[1].cache(), wsched::v1::DRIVER_CACHE_HIT);
  EXPECT_EQ(reports[1].duration().seconds(), 42);
  EXPECT_EQ(reports[1].log_tail(), "wsched-driver-cache: hit | installed");
  absl::MutexLock lock(&mutex);
  ASSERT_FALSE(commands.empty());
  EXPECT_THAT(commands[0], HasSubstr("podman run --rm --replace --name wsched-driver-install"));
  EXPECT_THAT(commands[0], HasSubstr("-e WSCHED_DRIVER_VERSION=550.54.15"));
}

TEST(AgentLoopTest, AFailedInstallIsReportedWithItsTailAndNotRetriedBeforeItsBackoff) {
  FakeInventory inventory;
  inventory.HandOut(Work());
  int runs = 0;
  absl::Mutex mutex;
  AgentOptions options = FastOptions("h100-8gpu");
  options.driver_install.initial_backoff = absl::Hours(1);
  options.driver_install_runner = [&](const process::Command&) {
    absl::MutexLock lock(&mutex);
    ++runs;
    return absl::StatusOr<process::Result>(Ran(3, "building nvidia.ko\ncc: not found\n"));
  };
  RunningAgent agent(options, inventory);
  ASSERT_TRUE(inventory.AwaitInstallReports(2));
  const size_t heartbeats = inventory.heartbeats().size();
  ASSERT_TRUE(inventory.AwaitCalls(1, heartbeats + 20));  // Many cycles later...
  const auto reports = inventory.install_reports();
  ASSERT_EQ(reports.size(), 2u);  // ...no second attempt.
  EXPECT_EQ(reports[1].outcome(), wsched::v1::DRIVER_INSTALL_OUTCOME_FAILED);
  EXPECT_EQ(reports[1].detail(), "exit status 3");
  EXPECT_EQ(reports[1].log_tail(), "building nvidia.ko | cc: not found");
  absl::MutexLock lock(&mutex);
  EXPECT_EQ(runs, 1);
}

// MIG work against the fake nvidia-smi: GPU 0 of the H200 node starts as
// seven 1g.18gb (h200-relayout); after a -cgi the fake answers from
// h200-mig, where it is 1g.18gb@0, 1g.18gb@1, 2g.35gb@2, 3g.71gb@4.
class AgentMigWorkTest : public ::testing::Test {
 protected:
  static constexpr char kGpu0Uuid[] = "GPU-2c6f1a3e-91d4-4b7a-a0e2-5f83c1d9b417";

  void SetUp() override {
    calls_ = (scratch_.path() / "calls.txt").string();
    setenv("FAKE_NVIDIA_SMI_DIR", Tree("nvidia-smi/h200-relayout").c_str(), 1);
    setenv("FAKE_NVIDIA_SMI_AFTER_DIR", Tree("nvidia-smi/h200-mig").c_str(), 1);
    setenv("FAKE_NVIDIA_SMI_CALLS", calls_.c_str(), 1);
  }
  void TearDown() override {
    for (const char* name : {"FAKE_NVIDIA_SMI_DIR", "FAKE_NVIDIA_SMI_AFTER_DIR",
                             "FAKE_NVIDIA_SMI_CALLS", "FAKE_NVIDIA_SMI_FAIL"}) {
      unsetenv(name);
    }
  }

  static AgentOptions Options() {
    AgentOptions options = FastOptions("h200-mig");
    options.discovery.pool = "gpu-h200";
    options.nvidia_smi = testing::FakeNvidiaSmi();
    options.relayout_command_timeout = absl::Seconds(10);
    return options;
  }
  // 1g.18gb@0, 1g.18gb@1, 2g.35gb@2, 3g.71gb@4 on GPU 0, for a 3g.
  static wsched::v1::MigWork Work(const std::string& uuid = kGpu0Uuid) {
    wsched::v1::MigWork work;
    work.set_gpu_index(0);
    work.set_gpu_uuid(uuid);
    work.set_for_profile("3g.71gb");
    for (const auto& [profile, start] : std::vector<std::pair<std::string, int>>{
             {"1g.18gb", 0}, {"1g.18gb", 1}, {"2g.35gb", 2}, {"3g.71gb", 4}}) {
      wsched::v1::MigSlicePlacement* slice = work.add_slices();
      slice->set_profile(profile);
      slice->set_start(start);
    }
    return work;
  }
  // The calls that change a GPU, in order.
  std::vector<std::string> Changes() const {
    std::vector<std::string> changes;
    std::ifstream in(calls_);
    for (std::string line; std::getline(in, line);) {
      if (absl::StartsWith(line, "mig -i ")) changes.push_back(line);
    }
    return changes;
  }
  // "1g.18gb@0 ..." of GPU 0 as a registration reports it, by start.
  static std::string SlicesOf(const wsched::v1::RegisterNodeRequest& request) {
    std::vector<std::pair<int, std::string>> slices;
    for (const auto& slice : request.node().gpus(0).mig().instances()) {
      slices.emplace_back(slice.start(), absl::StrCat(slice.profile(), "@", slice.start()));
    }
    std::sort(slices.begin(), slices.end());
    return absl::StrJoin(slices, " ", [](std::string* out, const auto& slice) {
      absl::StrAppend(out, slice.second);
    });
  }

  testing::ScratchDir scratch_;
  std::string calls_;
};

TEST_F(AgentMigWorkTest, CarriesOutTheReLayoutOnceAndRegistersTheNewSlices) {
  FakeInventory inventory;
  inventory.HandOut(Work());
  {
    RunningAgent agent(Options(), inventory);
    ASSERT_TRUE(inventory.AwaitCalls(2, 0));
    // Handed out with every answer, carried out once.
    const size_t heartbeats = inventory.heartbeats().size();
    ASSERT_TRUE(inventory.AwaitCalls(2, heartbeats + 10));
  }
  const auto registers = inventory.registers();
  ASSERT_EQ(registers.size(), 2u);
  EXPECT_EQ(SlicesOf(registers[0]),
            "1g.18gb@0 1g.18gb@1 1g.18gb@2 1g.18gb@3 1g.18gb@4 1g.18gb@5 1g.18gb@6");
  EXPECT_EQ(SlicesOf(registers[1]), "1g.18gb@0 1g.18gb@1 2g.35gb@2 3g.71gb@4");
  EXPECT_EQ(registers[1].node().gpus(0).health(), wsched::v1::GPU_HEALTH_HEALTHY);
  EXPECT_THAT(Changes(), ::testing::ElementsAre("mig -i 0 -dci", "mig -i 0 -dgi",
                                                "mig -i 0 -cgi 19:0 -C", "mig -i 0 -cgi 19:1 -C",
                                                "mig -i 0 -cgi 14:2 -C", "mig -i 0 -cgi 9:4 -C"));
}

TEST_F(AgentMigWorkTest, AFailureIsRegisteredAsTheGpusHealthAndNotRetried) {
  setenv("FAKE_NVIDIA_SMI_FAIL", "mig -i 0 -cgi 14:2 -C", 1);
  FakeInventory inventory;
  inventory.HandOut(Work());
  {
    RunningAgent agent(Options(), inventory);
    ASSERT_TRUE(inventory.AwaitCalls(2, 0));
    const size_t heartbeats = inventory.heartbeats().size();
    ASSERT_TRUE(inventory.AwaitCalls(2, heartbeats + 10));
  }
  const auto registers = inventory.registers();
  ASSERT_GE(registers.size(), 2u);
  const wsched::v1::Gpu& gpu = registers[1].node().gpus(0);
  EXPECT_EQ(gpu.health(), wsched::v1::GPU_HEALTH_UNHEALTHY);
  EXPECT_THAT(gpu.health_reason(), HasSubstr("MIG re-layout failed: "));
  EXPECT_THAT(gpu.health_reason(), HasSubstr("Insufficient Permissions"));
  // The heartbeats say it too, and the commands ran once.
  const wsched::v1::HeartbeatRequest last = inventory.heartbeats().back();
  EXPECT_EQ(last.gpu_health_by_uuid().at(kGpu0Uuid), wsched::v1::GPU_HEALTH_UNHEALTHY);
  EXPECT_EQ(Changes().size(), 5u);
}

TEST_F(AgentMigWorkTest, WorkForAGpuTheNodeDoesNotHaveIsNotCarriedOut) {
  FakeInventory inventory;
  inventory.HandOut(Work("GPU-00000000-0000-0000-0000-000000000000"));
  {
    RunningAgent agent(Options(), inventory);
    ASSERT_TRUE(inventory.AwaitCalls(1, 10));
  }
  EXPECT_EQ(inventory.registers().size(), 1u);
  EXPECT_TRUE(Changes().empty());
}

TEST(AgentLoopTest, StopEndsALongWaitAtOnce) {
  FakeInventory inventory;
  AgentOptions options = FastOptions("h100-8gpu");
  options.heartbeat_interval = absl::Hours(1);
  absl::Time start = absl::Now();
  {
    RunningAgent agent(options, inventory);
    ASSERT_TRUE(inventory.AwaitCalls(1, 0));
  }  // Stops and joins here.
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_TRUE(inventory.heartbeats().empty());
}

// Node identity (agent_auth.h): a state directory of its own per test.
class AgentNodeTokenTest : public ::testing::Test {
 protected:
  static constexpr char kBootstrap[] = "bootstrap-token-0123456789abcdef";
  static constexpr char kSaved[] = "saved-node-token-0123456789abcdef";

  void SetUp() override {
    char pattern[] = "/tmp/wsched-agent-state-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    base_ = pattern;
    state_dir_ = base_ + "/state";
  }
  void TearDown() override { std::filesystem::remove_all(base_); }

  AgentOptions Bootstrapping() const {
    AgentOptions options = FastOptions("h100-8gpu");
    options.auth = {.bootstrap_token = kBootstrap, .state_dir = state_dir_};
    return options;
  }

  std::string base_;
  std::string state_dir_;
};

TEST_F(AgentNodeTokenTest, BootstrapRegistersTheSavedTokensHashThenPresentsTheToken) {
  FakeInventory inventory;
  wsched::v1::HeartbeatResponse reregister;
  reregister.set_reregister(true);
  inventory.AnswerHeartbeat(reregister);
  {
    RunningAgent agent(Bootstrapping(), inventory);
    ASSERT_TRUE(inventory.AwaitCalls(2, 2));
  }
  absl::StatusOr<std::string> saved = LoadNodeToken(state_dir_);
  ASSERT_TRUE(saved.ok()) << saved.status();
  std::vector<wsched::v1::RegisterNodeRequest> registers = inventory.registers();
  std::vector<std::string> register_bearers = inventory.register_bearers();
  EXPECT_EQ(register_bearers[0], kBootstrap);
  EXPECT_EQ(registers[0].node_token_sha256(), NodeTokenSha256(*saved));
  // From then on the node token, and never its hash again: heartbeats and
  // the registration the server asked for.
  for (size_t i = 1; i < registers.size(); ++i) {
    EXPECT_EQ(register_bearers[i], *saved) << i;
    EXPECT_EQ(registers[i].node_token_sha256(), "") << i;
  }
  for (const std::string& bearer : inventory.heartbeat_bearers()) EXPECT_EQ(bearer, *saved);
}

TEST_F(AgentNodeTokenTest, ARestartWithASavedTokenNeverPresentsTheBootstrapToken) {
  ASSERT_TRUE(SaveNodeToken(state_dir_, kSaved).ok());
  FakeInventory inventory;
  StopSignal stop;
  ASSERT_TRUE(Agent(Bootstrapping(), inventory, stop).RunOnce().ok());
  EXPECT_THAT(inventory.register_bearers(), ::testing::ElementsAre(kSaved));
  EXPECT_EQ(inventory.registers()[0].node_token_sha256(), "");
  EXPECT_THAT(inventory.heartbeat_bearers(), ::testing::ElementsAre(kSaved));
  EXPECT_EQ(*LoadNodeToken(state_dir_), kSaved);
}

TEST_F(AgentNodeTokenTest, AnUnknownSavedTokenIsRegisteredThroughBootstrapWithItsOwnHash) {
  // The agent saved its token and crashed before the server stored it.
  ASSERT_TRUE(SaveNodeToken(state_dir_, kSaved).ok());
  FakeInventory inventory;
  inventory.FailRegister(absl::UnauthenticatedError("unknown token"));
  StopSignal stop;
  absl::Status status = Agent(Bootstrapping(), inventory, stop).RunOnce();
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_THAT(inventory.register_bearers(), ::testing::ElementsAre(kSaved, kBootstrap));
  EXPECT_EQ(inventory.registers()[1].node_token_sha256(), NodeTokenSha256(kSaved));
  EXPECT_THAT(inventory.heartbeat_bearers(), ::testing::ElementsAre(kSaved));
  EXPECT_EQ(*LoadNodeToken(state_dir_), kSaved);
}

absl::Status NodeExists() {
  return core::ReasonError("node h100-node-1 is registered already",
                           {.reason = core::ErrorReason::kBootstrapNodeExists});
}

TEST_F(AgentNodeTokenTest, ATakenNameIsAClearErrorAndTheTokenIsKept) {
  FakeInventory inventory;
  inventory.FailRegister(NodeExists());
  StopSignal stop;
  absl::Status status = Agent(Bootstrapping(), inventory, stop).RunOnce();
  EXPECT_TRUE(absl::IsPermissionDenied(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("BOOTSTRAP_NODE_EXISTS"));
  EXPECT_THAT(status.message(), HasSubstr("wschedctl node rotate-credential h100-node-1"));
  EXPECT_THAT(status.message(), HasSubstr(NodeTokenPath(state_dir_)));
  EXPECT_TRUE(inventory.heartbeats().empty());
  EXPECT_TRUE(LoadNodeToken(state_dir_).ok());
}

TEST_F(AgentNodeTokenTest, ATakenNameIsRetriedWithTheSameToken) {
  FakeInventory inventory;
  inventory.FailRegister(NodeExists());
  // The retry presents the saved token first: still unknown, then bootstrap.
  inventory.FailRegister(absl::UnauthenticatedError("unknown token"));
  RunningAgent agent(Bootstrapping(), inventory);
  ASSERT_TRUE(inventory.AwaitCalls(3, 1));
  absl::StatusOr<std::string> saved = LoadNodeToken(state_dir_);
  ASSERT_TRUE(saved.ok());
  std::vector<std::string> bearers = inventory.register_bearers();
  EXPECT_EQ(bearers[0], kBootstrap);
  EXPECT_EQ(bearers[1], *saved);
  EXPECT_EQ(bearers[2], kBootstrap);
  EXPECT_EQ(inventory.registers()[2].node_token_sha256(), NodeTokenSha256(*saved));
}

TEST_F(AgentNodeTokenTest, AnUnauthenticatedHeartbeatRegistersAgain) {
  ASSERT_TRUE(SaveNodeToken(state_dir_, kSaved).ok());
  FakeInventory inventory;
  inventory.AnswerHeartbeat(absl::UnauthenticatedError("unknown token"));
  RunningAgent agent(Bootstrapping(), inventory);
  ASSERT_TRUE(inventory.AwaitCalls(2, 2));
  EXPECT_EQ(inventory.register_bearers()[1], kSaved);
}

TEST_F(AgentNodeTokenTest, AnInstalledTokenIsUsedFromTheNextRegistration) {
  ASSERT_TRUE(SaveNodeToken(state_dir_, kSaved).ok());
  FakeInventory inventory;
  StopSignal stop;
  Agent agent(Bootstrapping(), inventory, stop);
  ASSERT_TRUE(agent.RunOnce().ok());
  // What `wschedctl node rotate-credential` printed, installed by an admin.
  const std::string rotated = "rotated-node-token-0123456789abcdef";
  ASSERT_TRUE(SaveNodeToken(state_dir_, rotated).ok());
  ASSERT_TRUE(agent.RunOnce().ok());
  EXPECT_THAT(inventory.register_bearers(), ::testing::ElementsAre(kSaved, rotated));
  EXPECT_THAT(inventory.heartbeat_bearers(), ::testing::ElementsAre(kSaved, rotated));
}

TEST_F(AgentNodeTokenTest, ABadTokenFileSendsNothing) {
  ASSERT_TRUE(SaveNodeToken(state_dir_, kSaved).ok());
  ASSERT_EQ(chmod(NodeTokenPath(state_dir_).c_str(), 0644), 0);
  FakeInventory inventory;
  StopSignal stop;
  absl::Status status = Agent(Bootstrapping(), inventory, stop).RunOnce();
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(NodeTokenPath(state_dir_)));
  EXPECT_TRUE(inventory.registers().empty());
}

TEST_F(AgentNodeTokenTest, AStaticTokenIsSentAsIs) {
  AgentOptions options = FastOptions("h100-8gpu");
  options.auth.static_token = "static-agent-token-0123456789";
  FakeInventory inventory;
  StopSignal stop;
  ASSERT_TRUE(Agent(options, inventory, stop).RunOnce().ok());
  EXPECT_THAT(inventory.register_bearers(), ::testing::ElementsAre(options.auth.static_token));
  EXPECT_EQ(inventory.registers()[0].node_token_sha256(), "");
  EXPECT_THAT(inventory.heartbeat_bearers(), ::testing::ElementsAre(options.auth.static_token));
}

TEST(StopSignalTest, WaitForTimesOutUntilStopped) {
  StopSignal stop;
  EXPECT_FALSE(stop.WaitFor(absl::Milliseconds(1)));
  stop.Stop();
  EXPECT_TRUE(stop.stopped());
  EXPECT_TRUE(stop.WaitFor(absl::Hours(1)));
}

}  // namespace
}  // namespace wsched::agent
