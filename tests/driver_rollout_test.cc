// Driver rollouts through the real server and PostgreSQL, agents played by
// the test (docs/operations.md "Driver rollouts"): a driver policy change
// on a pool of four nodes, two of them holding workspaces, goes to an idle
// canary first, then at most max_unavailable nodes at a time, never
// installing on a node while it holds a workspace; a failed canary stops
// it with the alert's metric set until an admin resumes it.
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"
#include "tests/support/metrics_text.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "wsched/v1/classes.grpc.pb.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;

constexpr char kKernel[] = "6.1.0-18-amd64";
constexpr char kOld[] = "550.54.15";
constexpr char kNew[] = "560.35.03";
constexpr int64_t kGi = int64_t{1} << 30;

// One pool of 2-GPU nodes whose agents install drivers themselves; a class
// that takes a whole node, so each workspace holds exactly one node.
std::string Catalog(const std::string& driver, const std::string& face = "node") {
  return absl::StrReplaceAll(R"(classes:
  - id: gpu-node
    display_name: A whole GPU node
    resources: {cpu: 8, memory: 32Gi}
    gpu: {count: 2, models: [L4], isolation: container}
    pool_selector: {workload: gpu}
    default: true
pools:
  - id: gpu
    labels: {workload: gpu}
    node: {cpu: 16, memory: 64Gi, gpus: 2, gpu_model: L4}
    min_size: 0
    max_size: 4
    driver_install: FACE
    driver_rollout: {max_unavailable: 2}
driver_policy:
  - kernel: 6.1.0-18-amd64
    os_id: debian
    os_version: "12"
    driver_version: DRIVER
    driver_branch: "DRIVER_BRANCH"
    installer_repo: registry.example.com/nvidia/driver
)", {{"DRIVER_BRANCH", driver.substr(0, 3)}, {"DRIVER", driver}, {"FACE", face}});
}

v1::NodeInfo GpuNode(const std::string& name) {
  v1::NodeInfo node;
  node.set_name(name);
  node.set_pool("gpu");
  node.mutable_allocatable()->set_cpu_millis(16000);
  node.mutable_allocatable()->set_memory_bytes(64 * kGi);
  node.set_kernel_version(kKernel);
  node.set_os_id("debian");
  node.set_os_version("12");
  node.set_driver_version(kOld);
  for (int i = 0; i < 2; ++i) {
    v1::Gpu* gpu = node.add_gpus();
    gpu->set_index(i);
    gpu->set_uuid(absl::StrFormat("GPU-%s-%d", name, i));
    gpu->set_pci_address(absl::StrFormat("0000:%02x:00.0", 0x30 + i));
    gpu->set_model("NVIDIA L4");
    gpu->set_memory_bytes(24 * kGi);
    gpu->set_health(v1::GPU_HEALTH_HEALTHY);
    gpu->set_iommu_group(40 + i);
  }
  return node;
}

class DriverRolloutTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(Catalog(kOld, face_), {}); }

  void Start(const std::string& catalog, std::vector<std::string> flags) {
    catalog_path_ = ::testing::TempDir() + "/driver-rollout-test.yaml";
    std::ofstream(catalog_path_) << catalog;
    testing::ServerConfig config{db_.url(), catalog_path_, std::move(flags)};
    config.metrics = true;
    server_ = std::make_unique<testing::ServerProcess>(config);
    ASSERT_TRUE(server_->started());
    inventory_ = v1::InventoryService::NewStub(server_->channel());
    placement_ = v1::PlacementService::NewStub(server_->channel());
    classes_ = v1::ClassService::NewStub(server_->channel());
    for (const char* name : {"n1", "n2", "n3", "n4"}) {
      grpc::ClientContext context;
      testing::Authorize(context, testing::kAgentToken);
      v1::RegisterNodeRequest request;
      *request.mutable_node() = GpuNode(name);
      v1::RegisterNodeResponse response;
      ASSERT_TRUE(inventory_->RegisterNode(&context, request, &response).ok());
      ASSERT_EQ(response.node().driver_state(), v1::DRIVER_STATE_READY);
    }
  }

  // The node's heartbeat with `driver` loaded; the answer's install job.
  std::optional<v1::DriverWork> Heartbeat(const std::string& node,
                                          const std::string& driver) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAgentToken);
    v1::HeartbeatRequest request;
    request.set_node_name(node);
    request.set_kernel_version(kKernel);
    request.set_driver_version(driver);
    v1::HeartbeatResponse response;
    grpc::Status status = inventory_->Heartbeat(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    if (!response.has_driver_work()) return std::nullopt;
    return response.driver_work();
  }

  void Report(const std::string& node, v1::DriverInstallOutcome outcome) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAgentToken);
    v1::ReportDriverInstallRequest request;
    request.set_node_name(node);
    request.set_kernel_version(kKernel);
    request.set_outcome(outcome);
    request.set_detail(outcome == v1::DRIVER_INSTALL_OUTCOME_FAILED ? "exit status 2" : kNew);
    if (outcome == v1::DRIVER_INSTALL_OUTCOME_FAILED) request.set_log_tail("nvidia.ko: Unknown symbol");
    v1::Node answer;
    grpc::Status status = inventory_->ReportDriverInstall(&context, request, &answer);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  // The install a released node is handed at its heartbeat. A heartbeat
  // that changes nothing is answered from this replica's mirror, which
  // learns of the release from the change feed a moment after the
  // database (GetNode reads the database): a real agent gets the job at
  // its next heartbeat, so this heartbeats until it does.
  std::optional<v1::DriverWork> AwaitWork(const std::string& node) {
    std::optional<v1::DriverWork> work;
    EXPECT_TRUE(testing::Eventually([&] { return (work = Heartbeat(node, kOld)).has_value(); }, 30))
        << node << " was handed no install";
    return work;
  }

  // An agent's whole install: started, succeeded, the new driver loaded.
  void Install(const std::string& node) {
    Report(node, v1::DRIVER_INSTALL_OUTCOME_STARTED);
    Report(node, v1::DRIVER_INSTALL_OUTCOME_SUCCEEDED);
    EXPECT_FALSE(Heartbeat(node, kNew).has_value());
    EXPECT_EQ(Node(node).driver_state(), v1::DRIVER_STATE_READY);
  }

  std::string Place(const std::string& id) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    v1::PlaceWorkspaceRequest request;
    request.set_workspace_id(id);
    request.set_org_id("o-1");
    request.set_project_id("p-1");
    request.set_user_id("u-1");
    request.set_class_id("gpu-node");
    v1::Workspace workspace;
    grpc::Status status = placement_->PlaceWorkspace(&context, request, &workspace);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(workspace.state(), v1::WORKSPACE_STATE_PLACED) << workspace.DebugString();
    return workspace.node_name();
  }

  void Stop(const std::string& id) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    v1::StopWorkspaceRequest request;
    request.set_workspace_id(id);
    v1::Workspace out;
    grpc::Status status = placement_->StopWorkspace(&context, request, &out);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  void ApplyPolicy(const std::string& driver) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::ApplyCatalogRequest request;
    request.set_yaml(Catalog(driver, face_));
    v1::ApplyCatalogResponse response;
    grpc::Status status = classes_->ApplyCatalog(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  v1::Node Node(const std::string& name) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::NodeNameRequest request;
    request.set_node_name(name);
    v1::Node node;
    grpc::Status status = inventory_->GetNode(&context, request, &node);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return node;
  }

  v1::DriverRollout Rollout() {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::ListDriverRolloutsRequest request;
    request.set_pool("gpu");
    v1::ListDriverRolloutsResponse response;
    grpc::Status status = inventory_->ListDriverRollouts(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.rollouts_size() == 1 ? response.rollouts(0) : v1::DriverRollout();
  }

  grpc::Status SetPaused(bool paused, v1::DriverRollout* out, const std::string& token =
                                                                  testing::kAdminToken) {
    grpc::ClientContext context;
    testing::Authorize(context, token);
    v1::SetDriverRolloutPausedRequest request;
    request.set_pool("gpu");
    request.set_paused(paused);
    return inventory_->SetDriverRolloutPaused(&context, request, out);
  }

  // The nodes in `state`, by name.
  std::vector<std::string> NodesIn(v1::DriverState state) {
    std::vector<std::string> out;
    for (const char* name : {"n1", "n2", "n3", "n4"}) {
      if (Node(name).driver_state() == state) out.push_back(name);
    }
    return out;
  }

  // Every node heartbeats with what it has loaded (the policy change is
  // judged at each node's next heartbeat, as with real agents).
  void HeartbeatAll() {
    for (const char* name : {"n1", "n2", "n3", "n4"}) {
      const bool upgraded = Node(name).info().driver_version() == kNew;
      Heartbeat(name, upgraded ? kNew : kOld);
    }
  }

  double Metric(const std::string& name, std::vector<std::string> labels) {
    std::string text = testing::HttpGet(server_->metrics_port(), "/metrics");
    return testing::MetricValue(text, name, labels).value_or(-1);
  }

  testing::TestDatabase db_;
  std::string face_ = "node";  // The pool's driver_install.
  std::string catalog_path_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::InventoryService::Stub> inventory_;
  std::unique_ptr<v1::PlacementService::Stub> placement_;
  std::unique_ptr<v1::ClassService::Stub> classes_;
};

TEST_F(DriverRolloutTest, APolicyChangeRollsThroughACanaryThenAtMostNIdleNodesAtATime) {
  const std::string busy_a = Place("ws-a");
  const std::string busy_b = Place("ws-b");
  ASSERT_NE(busy_a, busy_b);
  // Nodes are judged against the new policy as they heartbeat, and the
  // canary is chosen among those outdated at a step: paused until all four
  // are, the rollout has the whole pool to choose from (docs/operations.md,
  // "Driver rollouts").
  v1::DriverRollout paused;
  ASSERT_TRUE(SetPaused(true, &paused).ok());
  ApplyPolicy(kNew);
  HeartbeatAll();
  ASSERT_EQ(NodesIn(v1::DRIVER_STATE_OUTDATED).size(), 4u);
  ASSERT_TRUE(SetPaused(false, &paused).ok());
  // Outdated nodes keep serving until released; the canary is an idle one.
  ASSERT_TRUE(testing::Eventually([&] { return !Rollout().canary().empty(); }, 30))
      << Rollout().DebugString();
  const std::string canary = Rollout().canary();
  EXPECT_NE(canary, busy_a);
  EXPECT_NE(canary, busy_b);
  EXPECT_EQ(Node(canary).driver_state(), v1::DRIVER_STATE_NEEDS_DRIVER);
  EXPECT_THAT(Node(canary).driver_detail(), HasSubstr("released by the pool's driver rollout"));
  EXPECT_EQ(NodesIn(v1::DRIVER_STATE_OUTDATED).size(), 3u);
  EXPECT_EQ(Node(busy_a).driver_state(), v1::DRIVER_STATE_OUTDATED);
  EXPECT_FALSE(Heartbeat(busy_a, kOld).has_value());
  std::optional<v1::DriverWork> work = AwaitWork(canary);
  ASSERT_TRUE(work.has_value());
  EXPECT_EQ(work->driver_version(), kNew);

  // The canary goes alone: the rollout steps (the metric is set each step)
  // and nothing more is released while it installs.
  Report(canary, v1::DRIVER_INSTALL_OUTCOME_STARTED);
  ASSERT_TRUE(testing::Eventually([&] {
    return Metric("wsched_driver_rollout_nodes", {"pool=\"gpu\"", "phase=\"in_flight\""}) == 1 &&
           Metric("wsched_driver_rollout_nodes", {"pool=\"gpu\"", "phase=\"waiting\""}) == 3;
  }, 30));
  EXPECT_EQ(NodesIn(v1::DRIVER_STATE_OUTDATED).size(), 3u);
  Report(canary, v1::DRIVER_INSTALL_OUTCOME_SUCCEEDED);
  EXPECT_FALSE(Heartbeat(canary, kNew).has_value());
  EXPECT_EQ(Node(canary).driver_state(), v1::DRIVER_STATE_READY);

  // Then two at a time (max_unavailable 2), the idle node first.
  ASSERT_TRUE(testing::Eventually([&] { return Rollout().in_flight_nodes() == 2; }, 30))
      << Rollout().DebugString();
  std::vector<std::string> released = NodesIn(v1::DRIVER_STATE_NEEDS_DRIVER);
  ASSERT_EQ(released.size(), 2u);
  const std::string idle = released[0] == busy_a || released[0] == busy_b ? released[1] : released[0];
  const std::string waiting_busy = idle == released[0] ? released[1] : released[0];
  EXPECT_TRUE(waiting_busy == busy_a || waiting_busy == busy_b);
  EXPECT_EQ(NodesIn(v1::DRIVER_STATE_OUTDATED).size(), 1u);
  // Never while it holds a workspace: the busy one is handed no job (and
  // takes no new work) until its workspace ends.
  EXPECT_FALSE(Heartbeat(waiting_busy, kOld).has_value());
  ASSERT_TRUE(AwaitWork(idle).has_value());
  Install(idle);
  EXPECT_FALSE(Heartbeat(waiting_busy, kOld).has_value());
  Stop(waiting_busy == busy_a ? "ws-a" : "ws-b");
  ASSERT_TRUE(AwaitWork(waiting_busy).has_value());
  Install(waiting_busy);

  // The last one, and the rollout ends.
  ASSERT_TRUE(testing::Eventually([&] { return NodesIn(v1::DRIVER_STATE_OUTDATED).empty(); }, 30));
  const std::string last = NodesIn(v1::DRIVER_STATE_NEEDS_DRIVER).at(0);
  Stop(last == busy_a ? "ws-a" : "ws-b");
  Install(last);
  ASSERT_TRUE(testing::Eventually([&] { return !Rollout().under_way(); }, 30))
      << Rollout().DebugString();
  EXPECT_EQ(NodesIn(v1::DRIVER_STATE_READY).size(), 4u);
}

TEST_F(DriverRolloutTest, AFailedCanaryStopsTheRolloutUntilAnAdminResumes) {
  ApplyPolicy(kNew);
  HeartbeatAll();
  ASSERT_TRUE(testing::Eventually([&] { return !Rollout().canary().empty(); }, 30));
  const std::string canary = Rollout().canary();
  Report(canary, v1::DRIVER_INSTALL_OUTCOME_STARTED);
  Report(canary, v1::DRIVER_INSTALL_OUTCOME_FAILED);
  ASSERT_TRUE(testing::Eventually([&] { return Rollout().paused(); }, 30))
      << Rollout().DebugString();
  EXPECT_THAT(Rollout().reason(), HasSubstr(absl::StrCat("canary ", canary, " failed")));
  EXPECT_THAT(Rollout().reason(), HasSubstr("nvidia.ko: Unknown symbol"));
  ASSERT_TRUE(testing::Eventually(
      [&] { return Metric("wsched_driver_rollout_paused", {"pool=\"gpu\""}) == 1; }, 30));
  EXPECT_EQ(NodesIn(v1::DRIVER_STATE_OUTDATED).size(), 3u);  // The others keep serving.

  // Only an admin resumes; the same failure does not stop it again, and
  // nothing more is released until the canary's retry succeeds.
  v1::DriverRollout rollout;
  EXPECT_EQ(SetPaused(false, &rollout, testing::kControlPlaneToken).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  ASSERT_TRUE(SetPaused(false, &rollout).ok());
  EXPECT_FALSE(rollout.paused());
  ASSERT_TRUE(testing::Eventually(
      [&] { return Metric("wsched_driver_rollout_paused", {"pool=\"gpu\""}) == 0; }, 30));
  EXPECT_FALSE(Rollout().paused());
  EXPECT_EQ(NodesIn(v1::DRIVER_STATE_OUTDATED).size(), 3u);
  Install(canary);
  ASSERT_TRUE(testing::Eventually([&] { return Rollout().in_flight_nodes() == 2; }, 30))
      << Rollout().DebugString();

  // A pause by an admin holds the rest back.
  ASSERT_TRUE(SetPaused(true, &rollout).ok());
  EXPECT_EQ(rollout.reason(), "paused by an admin");
  for (const std::string& node : NodesIn(v1::DRIVER_STATE_NEEDS_DRIVER)) Install(node);
  ASSERT_TRUE(testing::Eventually([&] { return Rollout().in_flight_nodes() == 0; }, 30));
  EXPECT_EQ(NodesIn(v1::DRIVER_STATE_OUTDATED).size(), 1u);
  EXPECT_TRUE(Rollout().paused());
}

// The cluster face: the scaling leader runs the admin's command per node
// (here a script standing in for deploy/actuators/
// driver-install-kubernetes-job.sh) with the installer contract's
// environment, records its start and end, and the node is ready once its
// agent reports the driver loaded. A failing command is install_failed
// with its output's tail, which stops the rollout.
class ClusterDriverInstallTest : public DriverRolloutTest {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/cluster-installs";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    const std::string script = dir_ + "/install.sh";
    std::ofstream(script) << "#!/bin/sh\n"
                          << "env | grep '^WSCHED_' | sort > \"" << dir_ << "/$WSCHED_NODE.env\"\n"
                          << "if [ -e \"" << dir_ << "/fail\" ]; then\n"
                          << "  echo 'nvidia-installer: cc: not found'; exit 4\n"
                          << "fi\n"
                          << "echo 'wsched-driver-cache: hit'\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    face_ = "cluster";
    Start(Catalog(kOld, face_),
          {"--driver_install_command=" + script, "--driver_install_cache=/srv/driver-cache"});
  }

  std::string Env(const std::string& node) {
    std::ifstream in(dir_ + "/" + node + ".env");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::string dir_;
};

TEST_F(ClusterDriverInstallTest, TheLeaderRunsTheCommandPerNodeAndRecordsItsOutcome) {
  ApplyPolicy(kNew);
  HeartbeatAll();
  ASSERT_TRUE(testing::Eventually([&] { return !Rollout().canary().empty(); }, 30));
  const std::string canary = Rollout().canary();
  // Run and recorded: verified for the kernel, ready once the agent reports 560.
  ASSERT_TRUE(testing::Eventually([&] { return !Env(canary).empty(); }, 30)) << server_->Log();
  const std::string env = Env(canary);
  EXPECT_THAT(env, HasSubstr(absl::StrCat("WSCHED_NODE=", canary, "\n")));
  EXPECT_THAT(env, HasSubstr(absl::StrCat("WSCHED_KERNEL=", kKernel, "\n")));
  EXPECT_THAT(env, HasSubstr("WSCHED_OS=debian12\n"));
  EXPECT_THAT(env, HasSubstr(absl::StrCat("WSCHED_DRIVER_VERSION=", kNew, "\n")));
  EXPECT_THAT(env, HasSubstr(
      "WSCHED_IMAGE=registry.example.com/nvidia/driver:560-6.1.0-18-amd64-debian12\n"));
  EXPECT_THAT(env, HasSubstr("WSCHED_DRIVER_CACHE=/srv/driver-cache\n"));
  EXPECT_THAT(env, HasSubstr("WSCHED_TIMEOUT_SECONDS=1800\n"));
  ASSERT_TRUE(testing::Eventually([&] {
    return Metric("wsched_driver_install_reports_total",
                  {"pool=\"gpu\"", "outcome=\"succeeded\"", "cache=\"hit\""}) == 1;
  }, 30));
  EXPECT_EQ(Node(canary).driver_state(), v1::DRIVER_STATE_NEEDS_DRIVER);  // Not loaded yet.
  EXPECT_FALSE(Heartbeat(canary, kNew).has_value());
  EXPECT_EQ(Node(canary).driver_state(), v1::DRIVER_STATE_READY);

  // The next ones fail: install_failed with the output's tail.
  std::ofstream(dir_ + "/fail") << "";
  ASSERT_TRUE(testing::Eventually(
      [&] { return NodesIn(v1::DRIVER_STATE_INSTALL_FAILED).size() == 2; }, 30));
  const std::string failed = NodesIn(v1::DRIVER_STATE_INSTALL_FAILED).at(0);
  EXPECT_THAT(Node(failed).driver_detail(), HasSubstr("exit status 4"));
  EXPECT_THAT(Node(failed).driver_detail(), HasSubstr("nvidia-installer: cc: not found"));
  EXPECT_EQ(NodesIn(v1::DRIVER_STATE_OUTDATED).size(), 1u);  // At most two at a time.
}

TEST_F(DriverRolloutTest, BadRolloutRequestsNameTheField) {
  v1::DriverRollout out;
  grpc::ClientContext context;
  testing::Authorize(context, testing::kAdminToken);
  v1::SetDriverRolloutPausedRequest request;
  request.set_pool("Not A Pool");
  request.set_paused(true);
  grpc::Status status = inventory_->SetDriverRolloutPaused(&context, request, &out);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("pool"));
  grpc::ClientContext unknown_context;
  testing::Authorize(unknown_context, testing::kAdminToken);
  request.set_pool("nope");
  status = inventory_->SetDriverRolloutPaused(&unknown_context, request, &out);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_FALSE(Rollout().under_way());
}

}  // namespace
}  // namespace wsched
