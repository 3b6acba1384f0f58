// Node pools, nodes and GPUs through the real gRPC server and a real
// PostgreSQL: registration, driver readiness, the IOMMU rule, lost nodes,
// input validation, cordon/drain, and the inventory metrics.
#include <chrono>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"
#include "tests/support/metrics_text.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kTi = int64_t{1} << 40;
constexpr char kKernel[] = "5.15.0-91-generic";
constexpr char kNewKernel[] = "5.15.0-94-generic";  // Covered by the 5.15.0-*-generic pattern.
constexpr char kDriver[] = "550.54.15";

bool Eventually(const std::function<bool()>& done, int seconds = 10) {
  return testing::Eventually(done, seconds);
}

// An 8-GPU H100 node as the agent reports it from a node of the saas
// gpu-h100 pool: Ubuntu 22.04 on the policy's exact kernel, driver loaded.
v1::NodeInfo H100Node(const std::string& name, int gpus = 8) {
  static constexpr int kBuses[] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
  v1::NodeInfo node;
  node.set_name(name);
  node.set_pool("gpu-h100");
  node.set_provider_id(absl::StrCat("aws:///us-east-1a/i-", name));
  node.mutable_allocatable()->set_cpu_millis(200000);
  node.mutable_allocatable()->set_memory_bytes(1700 * kGi);
  node.mutable_allocatable()->set_ephemeral_storage_bytes(3 * kTi);
  node.mutable_allocatable()->set_disk_bytes(4 * kTi);
  node.set_kernel_version(kKernel);
  node.set_os_id("ubuntu");
  node.set_os_version("22.04");
  node.set_driver_version(kDriver);
  for (int i = 0; i < gpus; ++i) {
    v1::Gpu* gpu = node.add_gpus();
    gpu->set_index(i);
    gpu->set_uuid(absl::StrFormat("GPU-%s-%04d", name, i));
    gpu->set_pci_address(absl::StrFormat("0000:%02x:00.0", kBuses[i % 8]));
    gpu->set_model("NVIDIA H100 80GB HBM3");
    gpu->set_memory_bytes(80 * kGi);
    gpu->set_numa_node(i < 4 ? 0 : 1);
    gpu->set_health(v1::GPU_HEALTH_HEALTHY);
    gpu->set_iommu_group(20 + i);
    // Its PCIe switch port: a bridge, which keeps the GPU safe.
    v1::IommuGroupMember* bridge = gpu->add_iommu_group_members();
    bridge->set_pci_address(absl::StrFormat("0000:%02x:00.0", kBuses[i % 8] - 1));
    bridge->set_pci_class("0x060400");
    bridge->set_vendor("0x1000");
  }
  v1::DeviceNode* ctl = node.add_control_devices();
  ctl->set_path("/dev/nvidiactl");
  ctl->set_type("c");
  ctl->set_major(195);
  ctl->set_minor(255);
  ctl->set_permissions("rw");
  return node;
}

// A CPU node of the saas general pool.
v1::NodeInfo GeneralNode(const std::string& name) {
  v1::NodeInfo node;
  node.set_name(name);
  node.set_pool("general");
  node.mutable_allocatable()->set_cpu_millis(30000);
  node.mutable_allocatable()->set_memory_bytes(120 * kGi);
  node.mutable_allocatable()->set_ephemeral_storage_bytes(300 * kGi);
  node.mutable_allocatable()->set_disk_bytes(kTi);
  node.set_kernel_version("6.1.0-18-amd64");
  node.set_os_id("debian");
  node.set_os_version("12");
  return node;
}

using testing::MetricValue;

class InventoryTest : public ::testing::Test {
 protected:
  void StartServer(std::vector<std::string> flags = {}, bool metrics = false,
                   std::string catalog = testing::SourcePath("classes/saas.yaml")) {
    testing::ServerConfig config{db_.url(), std::move(catalog), std::move(flags)};
    config.metrics = metrics;
    server_ = std::make_unique<testing::ServerProcess>(config);
    ASSERT_TRUE(server_->started());
    inventory_ = v1::InventoryService::NewStub(server_->channel());
    placement_ = v1::PlacementService::NewStub(server_->channel());
  }

  grpc::Status Register(const v1::NodeInfo& node, v1::RegisterNodeResponse* response = nullptr) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAgentToken);
    v1::RegisterNodeRequest request;
    *request.mutable_node() = node;
    v1::RegisterNodeResponse ignored;
    return inventory_->RegisterNode(&context, request, response ? response : &ignored);
  }

  grpc::Status Heartbeat(const v1::HeartbeatRequest& request,
                         v1::HeartbeatResponse* response = nullptr) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAgentToken);
    v1::HeartbeatResponse ignored;
    return inventory_->Heartbeat(&context, request, response ? response : &ignored);
  }

  grpc::Status Heartbeat(const std::string& node, const std::string& kernel = kKernel,
                         const std::string& driver = kDriver) {
    v1::HeartbeatRequest request;
    request.set_node_name(node);
    request.set_kernel_version(kernel);
    request.set_driver_version(driver);
    return Heartbeat(request);
  }

  std::vector<v1::Node> ListNodes(const std::string& pool = "") {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::ListNodesRequest request;
    request.set_pool(pool);
    v1::ListNodesResponse response;
    grpc::Status status = inventory_->ListNodes(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return {response.nodes().begin(), response.nodes().end()};
  }

  std::optional<v1::Node> FindNode(const std::string& name) {
    for (auto& node : ListNodes()) {
      if (node.info().name() == name) return node;
    }
    return std::nullopt;
  }

  v1::Pool FindPool(const std::string& id) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::ListPoolsResponse response;
    grpc::Status status = inventory_->ListPools(&context, v1::ListPoolsRequest(), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    for (const auto& pool : response.pools()) {
      if (pool.id() == id) return pool;
    }
    ADD_FAILURE() << "no pool " << id;
    return {};
  }

  v1::ListDriverWorkResponse DriverWork() {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::ListDriverWorkResponse response;
    grpc::Status status =
        inventory_->ListDriverWork(&context, v1::ListDriverWorkRequest(), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  grpc::Status ReportInstall(const std::string& node, const std::string& kernel, bool success,
                             v1::Node* response) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::ReportDriverInstallRequest request;
    request.set_node_name(node);
    request.set_kernel_version(kernel);
    request.set_success(success);
    request.set_detail(success ? kDriver : "build failed");
    return inventory_->ReportDriverInstall(&context, request, response);
  }

  // Cordon, drain, uncordon or get: `call` is the stub method.
  using NodeCall = grpc::Status (v1::InventoryService::Stub::*)(
      grpc::ClientContext*, const v1::NodeNameRequest&, v1::Node*);
  grpc::Status CallNode(NodeCall call, const std::string& name, v1::Node* response,
                        const std::string& token = testing::kAdminToken) {
    grpc::ClientContext context;
    testing::Authorize(context, token);
    v1::NodeNameRequest request;
    request.set_node_name(name);
    return (inventory_.get()->*call)(&context, request, response);
  }

  grpc::Status Place(const std::string& id, const std::string& class_id, v1::Workspace* response) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    v1::PlaceWorkspaceRequest request;
    request.set_workspace_id(id);
    request.set_org_id("o-1");
    request.set_project_id("p-42");
    request.set_user_id("u-1");
    request.set_class_id(class_id);
    return placement_->PlaceWorkspace(&context, request, response);
  }

  v1::Workspace GetWorkspace(const std::string& id) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    v1::GetWorkspaceRequest request;
    request.set_workspace_id(id);
    v1::Workspace response;
    grpc::Status status = placement_->GetWorkspace(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  // Everything stored about a node ("" when there is no such row).
  std::string StoredNode(const std::string& name) {
    return db_.Query(absl::StrCat(
        "SELECT n.info::text || '|' || n.state || '|' || n.driver_state || '|' || "
        "n.version::text || '|' || l.last_heartbeat::text FROM nodes n "
        "JOIN node_liveness l ON l.name = n.name WHERE n.name = '", name, "'"));
  }

  testing::TestDatabase db_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::InventoryService::Stub> inventory_;
  std::unique_ptr<v1::PlacementService::Stub> placement_;
};

TEST_F(InventoryTest, RegisteredH100NodeIsReadyWithItsGpus) {
  StartServer();
  v1::RegisterNodeResponse registered;
  grpc::Status status = Register(H100Node("h100-a"), &registered);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(registered.node().state(), v1::NODE_STATE_READY);
  EXPECT_EQ(registered.node().driver_state(), v1::DRIVER_STATE_READY);
  EXPECT_GT(registered.heartbeat_interval().seconds(), 0);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  EXPECT_EQ(registered.heartbeat_interval_seconds(), registered.heartbeat_interval().seconds())
      << "the deprecated seconds stay filled until v2";
#pragma GCC diagnostic pop

  std::vector<v1::Node> nodes = ListNodes();
  ASSERT_EQ(nodes.size(), 1u);
  const v1::Node& node = nodes[0];
  EXPECT_EQ(node.info().name(), "h100-a");
  EXPECT_EQ(node.info().pool(), "gpu-h100");
  EXPECT_EQ(node.state(), v1::NODE_STATE_READY);
  EXPECT_EQ(node.driver_state(), v1::DRIVER_STATE_READY);
  EXPECT_EQ(node.info().kernel_version(), kKernel);
  EXPECT_EQ(node.info().driver_version(), kDriver);
  ASSERT_EQ(node.info().gpus_size(), 8);
  for (const auto& gpu : node.info().gpus()) {
    EXPECT_TRUE(gpu.passthrough_safe()) << gpu.pci_address() << ": " << gpu.passthrough_unsafe_reason();
    EXPECT_THAT(gpu.passthrough_unsafe_reason(), IsEmpty());
    EXPECT_THAT(gpu.held_by_workspace(), IsEmpty());
    EXPECT_EQ(gpu.health(), v1::GPU_HEALTH_HEALTHY);
  }
  EXPECT_EQ(node.info().gpus(3).pci_address(), "0000:5d:00.0");
  EXPECT_EQ(node.info().gpus(3).iommu_group(), 23);
  EXPECT_EQ(node.info().control_devices_size(), 1);
  EXPECT_EQ(node.workspace_count(), 0);

  // The pool filter.
  EXPECT_EQ(ListNodes("gpu-h100").size(), 1u);
  EXPECT_THAT(ListNodes("gpu-a100"), IsEmpty());

  v1::Pool pool = FindPool("gpu-h100");
  EXPECT_EQ(pool.gpus_total(), 8);
  EXPECT_EQ(pool.gpus_held(), 0);
  EXPECT_EQ(pool.gpus_unhealthy(), 0);
  EXPECT_EQ(pool.gpus_per_node(), 8);
  EXPECT_EQ(pool.nodes_by_state().at("ready"), 1);
  EXPECT_EQ(FindPool("gpu-a100").gpus_total(), 0);

  // GetNode answers the same node.
  v1::Node got;
  ASSERT_TRUE(CallNode(&v1::InventoryService::Stub::GetNode, "h100-a", &got).ok());
  EXPECT_EQ(got.info().gpus_size(), 8);
  EXPECT_EQ(CallNode(&v1::InventoryService::Stub::GetNode, "h100-zz", &got).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(InventoryTest, KernelChangeNeedsTheInstallerUntilItReportsSuccess) {
  StartServer();
  ASSERT_TRUE(Register(H100Node("h100-a")).ok());
  EXPECT_THAT(DriverWork().work(), IsEmpty());

  // An OS update rebooted the node into a newer kernel of the same series.
  ASSERT_TRUE(Heartbeat("h100-a", kNewKernel, kDriver).ok());
  std::optional<v1::Node> node = FindNode("h100-a");
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->info().kernel_version(), kNewKernel);
  EXPECT_EQ(node->driver_state(), v1::DRIVER_STATE_NEEDS_DRIVER);
  EXPECT_THAT(node->driver_detail(), HasSubstr(kNewKernel));

  v1::ListDriverWorkResponse work = DriverWork();
  ASSERT_EQ(work.work_size(), 1);
  EXPECT_EQ(work.work(0).node_name(), "h100-a");
  EXPECT_EQ(work.work(0).kernel_version(), kNewKernel);
  EXPECT_EQ(work.work(0).os_id(), "ubuntu");
  EXPECT_EQ(work.work(0).os_version(), "22.04");
  EXPECT_EQ(work.work(0).driver_version(), kDriver);
  EXPECT_EQ(work.work(0).installer_image(),
            "registry.example.com/nvidia/driver:550-5.15.0-94-generic-ubuntu22.04");
  EXPECT_THAT(work.nodes_without_policy(), IsEmpty());

  // A GPU workspace does not go to a node that needs its driver.
  v1::Workspace workspace;
  ASSERT_TRUE(Place("ws-driver", "gpu-1x", &workspace).ok());
  EXPECT_EQ(workspace.state(), v1::WORKSPACE_STATE_PENDING);

  // A report for the kernel the node ran before is stale.
  v1::Node reported;
  grpc::Status status = ReportInstall("h100-a", kKernel, true, &reported);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("kernel_version"));
  EXPECT_EQ(FindNode("h100-a")->driver_state(), v1::DRIVER_STATE_NEEDS_DRIVER);

  // A failed install is visible, and the work stays listed.
  ASSERT_TRUE(ReportInstall("h100-a", kNewKernel, false, &reported).ok());
  EXPECT_EQ(reported.driver_state(), v1::DRIVER_STATE_INSTALL_FAILED);
  EXPECT_EQ(DriverWork().work_size(), 1);

  status = ReportInstall("h100-a", kNewKernel, true, &reported);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(reported.driver_state(), v1::DRIVER_STATE_READY);
  EXPECT_EQ(FindNode("h100-a")->driver_state(), v1::DRIVER_STATE_READY);
  EXPECT_THAT(DriverWork().work(), IsEmpty());
  // Heartbeats on the verified kernel keep it ready.
  ASSERT_TRUE(Heartbeat("h100-a", kNewKernel, kDriver).ok());
  EXPECT_EQ(FindNode("h100-a")->driver_state(), v1::DRIVER_STATE_READY);

  // The pending GPU workspace now gets the node.
  ASSERT_TRUE(Eventually([&] {
    return GetWorkspace("ws-driver").state() == v1::WORKSPACE_STATE_PLACED;
  })) << GetWorkspace("ws-driver").DebugString() << server_->Log();
  EXPECT_EQ(GetWorkspace("ws-driver").node_name(), "h100-a");

  // Unknown node: NOT_FOUND.
  EXPECT_EQ(ReportInstall("h100-zz", kNewKernel, true, &reported).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

// classes/saas.yaml with the gpu-h100 pool's agents running driver installs.
std::string CatalogWithNodeInstalls() {
  std::ifstream in(testing::SourcePath("classes/saas.yaml"));
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  const std::string pool = "  - id: gpu-h100\n";
  yaml.insert(yaml.find(pool) + pool.size(), "    driver_install: node\n");
  const std::string path = ::testing::TempDir() + "/inventory-test-node-installs.yaml";
  std::ofstream(path) << yaml;
  return path;
}

// The agent's side of a `node` pool's installs (docs/agent.md "Driver
// installs"): answers hand the job out, reports move the node through
// installing and install_failed (with the log tail) to ready, and the
// job's measured time is kept by cache.
TEST_F(InventoryTest, ANodePoolsAgentIsHandedItsInstallAndReportsIt) {
  StartServer({}, false, CatalogWithNodeInstalls());
  v1::RegisterNodeResponse registered;
  ASSERT_TRUE(Register(H100Node("h100-a"), &registered).ok());
  EXPECT_FALSE(registered.has_driver_work());  // Ready: nothing to install.

  v1::HeartbeatRequest rebooted;
  rebooted.set_node_name("h100-a");
  rebooted.set_kernel_version(kNewKernel);
  v1::HeartbeatResponse answer;
  ASSERT_TRUE(Heartbeat(rebooted, &answer).ok());
  ASSERT_TRUE(answer.has_driver_work());
  EXPECT_EQ(answer.driver_work().node_name(), "h100-a");
  EXPECT_EQ(answer.driver_work().kernel_version(), kNewKernel);
  EXPECT_EQ(answer.driver_work().driver_version(), kDriver);
  EXPECT_EQ(answer.driver_work().installer_image(),
            "registry.example.com/nvidia/driver:550-5.15.0-94-generic-ubuntu22.04");

  auto report = [&](v1::DriverInstallOutcome outcome, const std::string& log_tail,
                    v1::Node* node) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAgentToken);
    v1::ReportDriverInstallRequest request;
    request.set_node_name("h100-a");
    request.set_kernel_version(kNewKernel);
    request.set_outcome(outcome);
    request.set_detail(outcome == v1::DRIVER_INSTALL_OUTCOME_SUCCEEDED ? kDriver : "exit status 3");
    request.set_log_tail(log_tail);
    if (outcome != v1::DRIVER_INSTALL_OUTCOME_STARTED) {
      request.mutable_duration()->set_seconds(42);
      request.set_cache(v1::DRIVER_CACHE_HIT);
    }
    return inventory_->ReportDriverInstall(&context, request, node);
  };
  v1::Node node;
  ASSERT_TRUE(report(v1::DRIVER_INSTALL_OUTCOME_STARTED, "", &node).ok());
  EXPECT_EQ(node.driver_state(), v1::DRIVER_STATE_INSTALLING);
  v1::Workspace workspace;
  ASSERT_TRUE(Place("ws-installing", "gpu-1x", &workspace).ok());
  EXPECT_EQ(workspace.state(), v1::WORKSPACE_STATE_PENDING);
  EXPECT_THAT(workspace.pending_reason(), HasSubstr("waiting for the driver install on node h100-a"));

  ASSERT_TRUE(report(v1::DRIVER_INSTALL_OUTCOME_FAILED, "cc: not found | make: *** Error 1", &node).ok());
  EXPECT_EQ(node.driver_state(), v1::DRIVER_STATE_INSTALL_FAILED);
  EXPECT_THAT(node.driver_detail(),
              HasSubstr("failed: exit status 3; log tail: cc: not found | make: *** Error 1"));
  // (gpu-1x may also take an A100, whose pool could scale up: its pending
  // reason names that pool now; tests/runtime/driver_install_test.sh checks
  // the log tail in a pending reason.)
  ASSERT_TRUE(Heartbeat(rebooted, &answer).ok());
  EXPECT_TRUE(answer.has_driver_work());  // The agent retries with backoff.

  ASSERT_TRUE(report(v1::DRIVER_INSTALL_OUTCOME_SUCCEEDED, "", &node).ok());
  EXPECT_EQ(node.driver_state(), v1::DRIVER_STATE_READY);
  EXPECT_THAT(node.driver_detail(), Not(HasSubstr("log tail")));
  ASSERT_TRUE(Heartbeat(rebooted, &answer).ok());
  EXPECT_FALSE(answer.has_driver_work());
  const v1::Pool pool = FindPool("gpu-h100");
  EXPECT_EQ(pool.driver_install(), v1::DRIVER_INSTALL_NODE);
  ASSERT_EQ(pool.timings().driver_installs_size(), 1);
  EXPECT_EQ(pool.timings().driver_installs(0).kernel_version(), kNewKernel);
  EXPECT_EQ(pool.timings().driver_installs(0).cache(), v1::DRIVER_CACHE_HIT);
  EXPECT_EQ(pool.timings().driver_installs(0).median().seconds(), 42);
  ASSERT_TRUE(Eventually([&] {
    return GetWorkspace("ws-installing").state() == v1::WORKSPACE_STATE_PLACED;
  })) << GetWorkspace("ws-installing").DebugString();

  // A manual pool's agent is handed nothing.
  v1::NodeInfo a100 = H100Node("a100-a");
  a100.set_pool("gpu-a100");
  a100.set_driver_version("");
  ASSERT_TRUE(Register(a100, &registered).ok());
  EXPECT_EQ(registered.node().driver_state(), v1::DRIVER_STATE_NEEDS_DRIVER);
  EXPECT_FALSE(registered.has_driver_work());
}

TEST_F(InventoryTest, BadDriverInstallReportsAreRefusedWithTheField) {
  StartServer();
  ASSERT_TRUE(Register(H100Node("h100-a")).ok());
  auto refusal = [&](const std::function<void(v1::ReportDriverInstallRequest&)>& edit) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::ReportDriverInstallRequest request;
    request.set_node_name("h100-a");
    request.set_kernel_version(kKernel);
    edit(request);
    v1::Node node;
    grpc::Status status = inventory_->ReportDriverInstall(&context, request, &node);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    return status.error_message();
  };
  EXPECT_THAT(refusal([](auto& r) { r.set_log_tail("line one\nline two"); }),
              HasSubstr("log_tail: at most 2048 printable characters"));
  EXPECT_THAT(refusal([](auto& r) {
                r.set_outcome(v1::DRIVER_INSTALL_OUTCOME_STARTED);
                r.mutable_duration()->set_seconds(5);
              }),
              HasSubstr("duration: must be unset when outcome is STARTED"));
  EXPECT_THAT(refusal([](auto& r) { r.mutable_duration()->set_seconds(-1); }),
              HasSubstr("duration: must be between 0 and 7 days"));
  EXPECT_THAT(refusal([](auto& r) { r.set_cache(static_cast<v1::DriverCache>(9)); }),
              HasSubstr("cache: must be a DriverCache"));
  EXPECT_EQ(FindNode("h100-a")->driver_state(), v1::DRIVER_STATE_READY);  // Nothing changed.
}

TEST_F(InventoryTest, NodeWithoutDriverPolicyIsReportedNotGuessed) {
  StartServer();
  v1::NodeInfo rhel = H100Node("h100-rhel");
  rhel.set_kernel_version("5.14.0-362.8.1.el9_3.x86_64");
  rhel.set_os_id("rhel");
  rhel.set_os_version("9.3");
  v1::RegisterNodeResponse registered;
  ASSERT_TRUE(Register(rhel, &registered).ok());
  EXPECT_EQ(registered.node().driver_state(), v1::DRIVER_STATE_NO_POLICY);

  // Ubuntu, but a kernel series the policy does not cover.
  v1::NodeInfo hwe = H100Node("h100-hwe");
  hwe.set_kernel_version("6.5.0-14-generic");
  ASSERT_TRUE(Register(hwe).ok());

  std::optional<v1::Node> node = FindNode("h100-rhel");
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->driver_state(), v1::DRIVER_STATE_NO_POLICY);
  EXPECT_THAT(node->driver_detail(), HasSubstr("5.14.0-362.8.1.el9_3.x86_64"));
  EXPECT_EQ(FindNode("h100-hwe")->driver_state(), v1::DRIVER_STATE_NO_POLICY);

  v1::ListDriverWorkResponse work = DriverWork();
  EXPECT_THAT(work.work(), IsEmpty());
  EXPECT_THAT(work.nodes_without_policy(),
              ::testing::UnorderedElementsAre("h100-rhel", "h100-hwe"));

  // A CPU node needs no driver and is not listed anywhere.
  ASSERT_TRUE(Register(GeneralNode("cpu-a")).ok());
  EXPECT_EQ(FindNode("cpu-a")->driver_state(), v1::DRIVER_STATE_NOT_NEEDED);
  EXPECT_EQ(DriverWork().nodes_without_policy_size(), 2);
}

TEST_F(InventoryTest, GpuSharingItsIommuGroupWithUsbIsUnsafeForPassthrough) {
  StartServer();
  v1::NodeInfo node = H100Node("h100-usb", 2);
  v1::Gpu* gpu = node.mutable_gpus(0);
  gpu->set_pci_address("0000:01:00.0");
  gpu->set_iommu_group(12);
  gpu->clear_iommu_group_members();
  // Its own audio function and the root port: fine.
  v1::IommuGroupMember* audio = gpu->add_iommu_group_members();
  audio->set_pci_address("0000:01:00.1");
  audio->set_pci_class("0x040300");
  audio->set_vendor("0x10de");
  v1::IommuGroupMember* port = gpu->add_iommu_group_members();
  port->set_pci_address("0000:00:01.0");
  port->set_pci_class("0x060400");
  port->set_vendor("0x8086");
  // The chipset's USB controller: not fine.
  v1::IommuGroupMember* usb = gpu->add_iommu_group_members();
  usb->set_pci_address("0000:00:14.0");
  usb->set_pci_class("0x0c0330");
  usb->set_vendor("0x8086");
  ASSERT_TRUE(Register(node).ok());

  std::optional<v1::Node> listed = FindNode("h100-usb");
  ASSERT_TRUE(listed.has_value());
  ASSERT_EQ(listed->info().gpus_size(), 2);
  const v1::Gpu& unsafe = listed->info().gpus(0);
  EXPECT_FALSE(unsafe.passthrough_safe());
  EXPECT_THAT(unsafe.passthrough_unsafe_reason(), HasSubstr("0000:00:14.0"));
  EXPECT_THAT(unsafe.passthrough_unsafe_reason(), HasSubstr("IOMMU group 12"));
  EXPECT_THAT(unsafe.passthrough_unsafe_reason(), HasSubstr("USB controller"));
  ASSERT_EQ(unsafe.iommu_group_members_size(), 3);
  EXPECT_EQ(unsafe.iommu_group_members(2).pci_class(), "0x0c0330");
  // The other GPU, alone with its bridge, stays safe.
  EXPECT_TRUE(listed->info().gpus(1).passthrough_safe());
  EXPECT_THAT(listed->info().gpus(1).passthrough_unsafe_reason(), IsEmpty());

  // IOMMU off: unsafe, with the reason.
  v1::NodeInfo off = H100Node("h100-noiommu", 1);
  off.mutable_gpus(0)->set_iommu_group(-1);
  off.mutable_gpus(0)->clear_iommu_group_members();
  ASSERT_TRUE(Register(off).ok());
  listed = FindNode("h100-noiommu");
  ASSERT_TRUE(listed.has_value());
  EXPECT_FALSE(listed->info().gpus(0).passthrough_safe());
  EXPECT_THAT(listed->info().gpus(0).passthrough_unsafe_reason(), HasSubstr("IOMMU"));
}

TEST_F(InventoryTest, LostNodeTakesNoWorkAndComesBackWithAHeartbeat) {
  // 2 s rather than 1 s keeps the "placed before it is lost" step far from
  // the deadline on a busy machine.
  StartServer({"--node_lost_after=2s", "--heartbeat_interval=1s"});
  ASSERT_TRUE(Register(H100Node("h100-a")).ok());
  v1::Workspace workspace;
  ASSERT_TRUE(Heartbeat("h100-a").ok());
  grpc::Status status = Place("ws-before", "gpu-1x", &workspace);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(workspace.state(), v1::WORKSPACE_STATE_PLACED);
  ASSERT_EQ(workspace.node_name(), "h100-a");

  // No more heartbeats: the node is lost, and so is its workspace.
  ASSERT_TRUE(Eventually([&] {
    std::optional<v1::Node> node = FindNode("h100-a");
    return node && node->state() == v1::NODE_STATE_LOST;
  })) << FindNode("h100-a").value_or(v1::Node()).DebugString() << server_->Log();
  EXPECT_EQ(FindPool("gpu-h100").nodes_by_state().at("lost"), 1);
  v1::Workspace before = GetWorkspace("ws-before");
  EXPECT_EQ(before.state(), v1::WORKSPACE_STATE_LOST);
  EXPECT_EQ(before.node_name(), "h100-a");

  // Only gpu-h100 (and the empty gpu-a100) could hold gpu-1x: pending, not
  // placed on the lost node.
  status = Place("ws-waits", "gpu-1x", &workspace);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(workspace.state(), v1::WORKSPACE_STATE_PENDING);
  EXPECT_THAT(workspace.node_name(), IsEmpty());
  // A CPU class has no ready general node either.
  ASSERT_TRUE(Place("ws-cpu", "small", &workspace).ok());
  EXPECT_EQ(workspace.state(), v1::WORKSPACE_STATE_PENDING);

  // The node heartbeats again: ready, and the pending GPU workspace lands.
  v1::HeartbeatRequest request;
  request.set_node_name("h100-a");
  request.set_kernel_version(kKernel);
  request.set_driver_version(kDriver);
  v1::HeartbeatResponse response;
  ASSERT_TRUE(Heartbeat(request, &response).ok());
  EXPECT_EQ(response.state(), v1::NODE_STATE_READY);
  EXPECT_FALSE(response.reregister());
  ASSERT_TRUE(Eventually([&] {
    (void)Heartbeat("h100-a");  // Keep it alive while waiting.
    return GetWorkspace("ws-waits").state() == v1::WORKSPACE_STATE_PLACED;
  })) << GetWorkspace("ws-waits").DebugString() << server_->Log();
  EXPECT_EQ(GetWorkspace("ws-waits").node_name(), "h100-a");
  EXPECT_EQ(FindNode("h100-a")->state(), v1::NODE_STATE_READY);
  // The workspace that was on it stays reported lost; it holds nothing.
  EXPECT_EQ(GetWorkspace("ws-before").state(), v1::WORKSPACE_STATE_LOST);
  EXPECT_EQ(db_.Query("SELECT count(*) FROM gpu_holds WHERE workspace_id = 'ws-before'"), "0");
  EXPECT_EQ(GetWorkspace("ws-cpu").state(), v1::WORKSPACE_STATE_PENDING);

  // An unknown node is told to register.
  request.set_node_name("h100-unknown");
  ASSERT_TRUE(Heartbeat(request, &response).ok());
  EXPECT_TRUE(response.reregister());
}

TEST_F(InventoryTest, BadAgentInputIsRejectedWithTheFieldAndChangesNothing) {
  StartServer();
  ASSERT_TRUE(Register(H100Node("h100-a")).ok());
  const std::string stored = StoredNode("h100-a");
  ASSERT_FALSE(stored.empty());

  struct Case {
    std::string what;
    std::function<void(v1::NodeInfo&)> spoil;
    std::string field;
  };
  std::vector<Case> cases = {
      {"negative cpu", [](v1::NodeInfo& n) { n.mutable_allocatable()->set_cpu_millis(-1000); },
       "node.allocatable.cpu_millis"},
      {"duplicate index", [](v1::NodeInfo& n) { n.mutable_gpus(1)->set_index(0); },
       "node.gpus[1].index"},
      {"duplicate uuid",
       [](v1::NodeInfo& n) { n.mutable_gpus(2)->set_uuid(n.gpus(0).uuid()); },
       "node.gpus[2].uuid"},
      {"not a PCI address", [](v1::NodeInfo& n) { n.mutable_gpus(0)->set_pci_address("3b:00.0"); },
       "node.gpus[0].pci_address"},
      {"unknown pool", [](v1::NodeInfo& n) { n.set_pool("no-such-pool"); }, "node.pool"},
      {"bad name", [](v1::NodeInfo& n) { n.set_name("Not_A_Name"); }, "node.name"},
      {"no kernel", [](v1::NodeInfo& n) { n.clear_kernel_version(); }, "node.kernel_version"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    // Both as a re-registration of the stored node and as a new node.
    for (const char* name : {"h100-a", "h100-new"}) {
      v1::NodeInfo node = H100Node(name);
      c.spoil(node);
      grpc::Status status = Register(node);
      EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << name;
      EXPECT_THAT(status.error_message(), HasSubstr(c.field)) << name;
    }
  }
  EXPECT_THAT(Register([] {
                v1::NodeInfo n = H100Node("h100-a");
                n.mutable_gpus(0)->set_pci_address("3b:00.0");
                return n;
              }()).error_message(),
              HasSubstr("\"3b:00.0\" is not a PCI address"));
  EXPECT_THAT(Register([] {
                v1::NodeInfo n = H100Node("h100-a");
                n.set_pool("no-such-pool");
                return n;
              }()).error_message(),
              HasSubstr("no-such-pool"));

  // Heartbeats are validated too.
  v1::HeartbeatRequest heartbeat;
  heartbeat.set_node_name("h100-a");
  heartbeat.set_kernel_version(kNewKernel);
  v1::GpuUsage* usage = heartbeat.add_gpu_usage();
  usage->set_uuid("GPU-h100-a-0000");
  usage->set_utilization_percent(101);
  grpc::Status status = Heartbeat(heartbeat);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("gpu_usage[0]"));
  heartbeat.clear_gpu_usage();
  heartbeat.set_node_name("Bad_Name");
  status = Heartbeat(heartbeat);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("node_name"));

  EXPECT_EQ(StoredNode("h100-a"), stored);
  EXPECT_EQ(db_.Query("SELECT count(*) FROM nodes"), "1");
  EXPECT_EQ(FindNode("h100-a")->info().kernel_version(), kKernel);

  // Moving a node to another pool without removing it first is refused too.
  v1::NodeInfo moved = H100Node("h100-a");
  moved.set_pool("gpu-a100");
  status = Register(moved);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("node.pool"));
  EXPECT_EQ(StoredNode("h100-a"), stored);
}

TEST_F(InventoryTest, CordonDrainUncordonAndRemove) {
  StartServer();
  ASSERT_TRUE(Register(GeneralNode("cpu-a")).ok());
  using Stub = v1::InventoryService::Stub;
  v1::Node node;

  ASSERT_TRUE(CallNode(&Stub::CordonNode, "cpu-a", &node).ok());
  EXPECT_EQ(node.state(), v1::NODE_STATE_CORDONED);
  EXPECT_EQ(FindNode("cpu-a")->state(), v1::NODE_STATE_CORDONED);
  // A heartbeat does not undo an operator's cordon.
  ASSERT_TRUE(Heartbeat("cpu-a", "6.1.0-18-amd64", "").ok());
  EXPECT_EQ(FindNode("cpu-a")->state(), v1::NODE_STATE_CORDONED);

  v1::Workspace workspace;
  ASSERT_TRUE(Place("ws-1", "small", &workspace).ok());
  EXPECT_EQ(workspace.state(), v1::WORKSPACE_STATE_PENDING);
  EXPECT_THAT(workspace.pending_reason(), ::testing::Not(IsEmpty()));

  ASSERT_TRUE(CallNode(&Stub::DrainNode, "cpu-a", &node).ok());
  EXPECT_EQ(node.state(), v1::NODE_STATE_DRAINING);
  EXPECT_EQ(FindPool("general").nodes_by_state().at("draining"), 1);
  EXPECT_EQ(GetWorkspace("ws-1").state(), v1::WORKSPACE_STATE_PENDING);

  // Agents may not operate nodes.
  EXPECT_EQ(CallNode(&Stub::UncordonNode, "cpu-a", &node, testing::kAgentToken).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(CallNode(&Stub::CordonNode, "cpu-zz", &node).error_code(),
            grpc::StatusCode::NOT_FOUND);

  ASSERT_TRUE(CallNode(&Stub::UncordonNode, "cpu-a", &node).ok());
  EXPECT_EQ(node.state(), v1::NODE_STATE_READY);
  ASSERT_TRUE(Eventually([&] {
    return GetWorkspace("ws-1").state() == v1::WORKSPACE_STATE_PLACED;
  })) << GetWorkspace("ws-1").DebugString() << server_->Log();
  EXPECT_EQ(GetWorkspace("ws-1").node_name(), "cpu-a");
  EXPECT_EQ(FindNode("cpu-a")->held().cpu_millis(), 2000);
  // A CPU workspace counts as much as a GPU one.
  EXPECT_EQ(FindNode("cpu-a")->workspace_count(), 1);
  ASSERT_TRUE(CallNode(&Stub::GetNode, "cpu-a", &node).ok());
  EXPECT_EQ(node.workspace_count(), 1);

  // Remove: the node is gone and its workspace is reported lost.
  {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::NodeNameRequest request;
    request.set_node_name("cpu-a");
    v1::Empty empty;
    grpc::Status status = inventory_->RemoveNode(&context, request, &empty);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  EXPECT_THAT(ListNodes(), IsEmpty());
  EXPECT_EQ(db_.Query("SELECT count(*) FROM nodes"), "0");
  EXPECT_EQ(CallNode(&Stub::GetNode, "cpu-a", &node).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(GetWorkspace("ws-1").state(), v1::WORKSPACE_STATE_LOST);
  // Its agent is told to register again.
  v1::HeartbeatRequest heartbeat;
  heartbeat.set_node_name("cpu-a");
  v1::HeartbeatResponse response;
  ASSERT_TRUE(Heartbeat(heartbeat, &response).ok());
  EXPECT_TRUE(response.reregister());
}

TEST_F(InventoryTest, MetricsShowNodesGpusAndDriverReadiness) {
  StartServer({}, /*metrics=*/true);
  ASSERT_TRUE(Register(H100Node("h100-a")).ok());
  ASSERT_TRUE(Register(GeneralNode("cpu-a")).ok());
  std::string text = testing::HttpGet(server_->metrics_port(), "/metrics");
  ASSERT_THAT(text, HasSubstr("wsched_nodes{"));
  EXPECT_EQ(MetricValue(text, "wsched_nodes", {"pool=\"gpu-h100\"", "state=\"ready\""}), 1.0)
      << text;
  EXPECT_EQ(MetricValue(text, "wsched_nodes", {"pool=\"general\"", "state=\"ready\""}), 1.0);
  // Every pool shows up, even at zero nodes.
  EXPECT_EQ(MetricValue(text, "wsched_nodes", {"pool=\"gpu-a100\"", "state=\"ready\""}), 0.0);
  ASSERT_THAT(text, HasSubstr("wsched_gpus{"));
  EXPECT_EQ(MetricValue(text, "wsched_gpus",
                        {"pool=\"gpu-h100\"", "status=\"total\"", "model=\"H100\""}),
            8.0)
      << text;
  EXPECT_EQ(MetricValue(text, "wsched_driver_not_ready_nodes", {"pool=\"gpu-h100\""}),
            std::nullopt);

  ASSERT_TRUE(Heartbeat("h100-a", kNewKernel, kDriver).ok());
  text = testing::HttpGet(server_->metrics_port(), "/metrics");
  ASSERT_THAT(text, HasSubstr("wsched_driver_not_ready_nodes{"));
  EXPECT_EQ(MetricValue(text, "wsched_driver_not_ready_nodes",
                        {"pool=\"gpu-h100\"", "reason=\"needs_driver\""}),
            1.0)
      << text;
}

TEST_F(InventoryTest, GpuUsageIsExportedByPoolAndClassWithoutAWorkspaceLabel) {
  StartServer({}, /*metrics=*/true);
  ASSERT_TRUE(Register(H100Node("h100-a")).ok());
  v1::Workspace workspace;
  grpc::Status status = Place("ws-gpu", "gpu-1x", &workspace);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(workspace.state(), v1::WORKSPACE_STATE_PLACED);
  ASSERT_EQ(workspace.gpus_size(), 1);
  const v1::AssignedGpu& held = workspace.gpus(0);
  EXPECT_EQ(FindNode("h100-a")->info().gpus(held.index()).held_by_workspace(), "ws-gpu");
  EXPECT_EQ(FindPool("gpu-h100").gpus_held(), 1);
  EXPECT_EQ(FindNode("h100-a")->workspace_count(), 1);

  v1::HeartbeatRequest heartbeat;
  heartbeat.set_node_name("h100-a");
  heartbeat.set_kernel_version(kKernel);
  heartbeat.set_driver_version(kDriver);
  v1::GpuUsage* usage = heartbeat.add_gpu_usage();
  usage->set_uuid(held.uuid());
  usage->set_utilization_percent(42);
  usage->set_memory_used_bytes(10 * kGi);
  // Two GPUs nobody holds, at 10% and 30%.
  const std::string free_a = absl::StrFormat("GPU-h100-a-%04d", held.index() == 0 ? 1 : 0);
  const std::string free_b = absl::StrFormat("GPU-h100-a-%04d", held.index() == 7 ? 6 : 7);
  v1::GpuUsage* idle_a = heartbeat.add_gpu_usage();
  idle_a->set_uuid(free_a);
  idle_a->set_utilization_percent(10);
  v1::GpuUsage* idle_b = heartbeat.add_gpu_usage();
  idle_b->set_uuid(free_b);
  idle_b->set_utilization_percent(30);
  ASSERT_TRUE(Heartbeat(heartbeat).ok());

  std::string text = testing::HttpGet(server_->metrics_port(), "/metrics");
  const std::vector<std::string> held_labels = {"pool=\"gpu-h100\"", "class=\"gpu-1x\""};
  std::optional<double> ratio = MetricValue(text, "wsched_gpu_utilization_ratio", held_labels);
  ASSERT_TRUE(ratio.has_value()) << text;
  EXPECT_DOUBLE_EQ(*ratio, 0.42);
  EXPECT_EQ(MetricValue(text, "wsched_gpu_utilization_gpus", held_labels), 1.0);
  EXPECT_EQ(MetricValue(text, "wsched_gpu_memory_used_bytes", held_labels),
            static_cast<double>(10 * kGi));
  const std::vector<std::string> free_labels = {"pool=\"gpu-h100\"", "class=\"\""};
  std::optional<double> free_ratio = MetricValue(text, "wsched_gpu_utilization_ratio", free_labels);
  ASSERT_TRUE(free_ratio.has_value()) << text;
  EXPECT_DOUBLE_EQ(*free_ratio, 0.2);
  EXPECT_EQ(MetricValue(text, "wsched_gpu_utilization_gpus", free_labels), 2.0);
  // No series names a workspace or a single GPU any more.
  EXPECT_THAT(text, ::testing::Not(HasSubstr("workspace=\"ws-gpu\"")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr(absl::StrCat("UUID=\"", held.uuid(), "\""))));
  EXPECT_EQ(MetricValue(text, "wsched_gpus",
                        {"pool=\"gpu-h100\"", "status=\"held\"", "model=\"H100\""}),
            1.0);
}

}  // namespace
}  // namespace wsched
