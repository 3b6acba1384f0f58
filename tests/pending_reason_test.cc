// Why a pending workspace waits, through the real server: a pool at
// max_size, a node whose driver installs, a pool backing off after a
// stockout, unhealthy GPUs. Each asserts the structured reason; the watch
// stream is followed as the reason changes.
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/catalog_file.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"
#include "wsched/v1/scaling.grpc.pb.h"
#include "wsched/v1/settings.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// gpu-small can never grow past one node; gpu-elastic can grow to three.
constexpr char kCatalog[] = R"(classes:
  - id: standard
    display_name: Standard
    resources: {cpu: 4, memory: 16Gi, ephemeral_storage: 30Gi, disk: 50Gi}
    pool_selector: {workload: general}
    default: true
  - id: gpu-8x
    display_name: 8 GPUs
    resources: {cpu: 16, memory: 64Gi, ephemeral_storage: 100Gi, disk: 200Gi}
    gpu: {count: 8, models: [H100], isolation: container}
    pool_selector: {size: small}
  - id: gpu-1x
    display_name: 1 GPU
    resources: {cpu: 4, memory: 16Gi, ephemeral_storage: 100Gi, disk: 200Gi}
    gpu: {count: 1, models: [H100], isolation: container}
    pool_selector: {size: small}
  - id: gpu-1x-elastic
    display_name: 1 GPU, elastic pool
    resources: {cpu: 4, memory: 16Gi, ephemeral_storage: 100Gi, disk: 200Gi}
    gpu: {count: 1, models: [H100], isolation: container}
    pool_selector: {size: elastic}
  - id: fallback-8x
    display_name: 8 GPUs, H100 or else A100
    resources: {cpu: 16, memory: 64Gi, ephemeral_storage: 100Gi, disk: 200Gi}
    gpu: {count: 8, models: [H100, A100], isolation: container}
    pool_selector: {size: fallback}
pools:
  - id: general
    labels: {workload: general}
    node: {cpu: 30, memory: 120Gi, ephemeral_storage: 300Gi, disk: 1Ti}
    max_size: 4
  - id: gpu-small
    labels: {size: small}
    node: {cpu: 200, memory: 1700Gi, ephemeral_storage: 3Ti, disk: 4Ti, gpus: 8, gpu_model: H100}
    max_size: 1
  - id: gpu-elastic
    labels: {size: elastic}
    node: {cpu: 200, memory: 1700Gi, ephemeral_storage: 3Ti, disk: 4Ti, gpus: 8, gpu_model: H100}
    max_size: 3
  - id: fb-h100
    labels: {size: fallback}
    node: {cpu: 200, memory: 1700Gi, ephemeral_storage: 3Ti, disk: 4Ti, gpus: 8, gpu_model: H100}
    max_size: 1
  - id: fb-a100
    labels: {size: fallback}
    node: {cpu: 200, memory: 1700Gi, ephemeral_storage: 3Ti, disk: 4Ti, gpus: 8, gpu_model: A100}
    max_size: 2
driver_policy:
  - kernel: "5.15.0-*-generic"
    os_id: ubuntu
    os_version: "22.04"
    driver_version: 550.54.15
    driver_branch: "550"
    installer_repo: registry.example.com/nvidia/driver
)";

class PendingReasonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::ServerConfig config{db_.url(), catalog_.path()};
    config.extra_flags = {"--scaling_batching_window=100ms"};
    server_ = std::make_unique<testing::ServerProcess>(config);
    ASSERT_TRUE(server_->started());
    placement_ = v1::PlacementService::NewStub(server_->channel());
    inventory_ = v1::InventoryService::NewStub(server_->channel());
  }

  v1::Workspace Place(const std::string& id, const std::string& class_id) {
    v1::Workspace w;
    grpc::Status status = testing::PlaceAs(server_->channel(), id, class_id, &w);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return w;
  }

  // Follows the workspace's watch stream until its pending reason has
  // `code` (each message is a change; no polling).
  v1::Workspace AwaitReason(const std::string& id, v1::PendingReasonCode code) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    v1::WatchWorkspaceRequest request;
    request.set_workspace_id(id);
    auto stream = placement_->WatchWorkspace(&context, request);
    v1::Workspace update;
    while (stream->Read(&update)) {
      if (update.pending().code() == code) {
        context.TryCancel();
        return update;
      }
    }
    ADD_FAILURE() << "workspace " << id << " never showed "
                  << v1::PendingReasonCode_Name(code) << "; last: " << update.pending_reason();
    return update;
  }

  void SetOrg(const std::vector<std::string>& allowed, int64_t gpu_quota) {
    auto settings = v1::SettingsService::NewStub(server_->channel());
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::SetOrgSettingsRequest request;
    request.mutable_settings()->set_org_id("o-1");
    for (const auto& id : allowed) request.mutable_settings()->add_allowed_classes(id);
    request.mutable_settings()->set_gpu_quota(gpu_quota);
    v1::OrgSettings response;
    grpc::Status status = settings->SetOrgSettings(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  v1::Workspace Get(const std::string& id) {
    v1::Workspace w;
    grpc::Status status = testing::GetAs(server_->channel(), id, &w);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return w;
  }

  testing::TestDatabase db_;
  testing::CatalogFile catalog_{"pending-reason", kCatalog};
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::PlacementService::Stub> placement_;
  std::unique_ptr<v1::InventoryService::Stub> inventory_;
};

TEST_F(PendingReasonTest, PoolAtMaxSizeSaysSoAndAsksForNothing) {
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("small-1", "gpu-small"));
  ASSERT_EQ(Place("first", "gpu-8x").state(), v1::WORKSPACE_STATE_PLACED);
  v1::Workspace second = Place("second", "gpu-8x");
  ASSERT_EQ(second.state(), v1::WORKSPACE_STATE_PENDING);
  EXPECT_EQ(second.pending().code(), v1::PENDING_REASON_CODE_POOL_AT_MAX_SIZE);
  EXPECT_EQ(second.pending().pool(), "gpu-small");
  EXPECT_THAT(second.pending_reason(), HasSubstr("is at max_size 1"));
  EXPECT_THAT(second.pending_reason(), Not(HasSubstr("scale-up requested")));
  EXPECT_FALSE(second.has_estimated_time_to_place());
  EXPECT_THAT(second.estimate_basis(), HasSubstr("no estimate"));
}

TEST_F(PendingReasonTest, DriverInstallingNamesNodeKernelAndImageThenLearnsTheTime) {
  v1::NodeInfo node = testing::FakeGpuNode("small-1", "gpu-small");
  node.set_driver_version("");  // Registered before its driver is installed.
  testing::RegisterNode(server_->channel(), node);
  v1::Workspace w = Place("waits-for-driver", "gpu-1x");
  ASSERT_EQ(w.state(), v1::WORKSPACE_STATE_PENDING);
  EXPECT_EQ(w.pending().code(), v1::PENDING_REASON_CODE_DRIVER_INSTALLING);
  EXPECT_EQ(w.pending().node(), "small-1");
  EXPECT_EQ(w.pending().kernel_version(), "5.15.0-91-generic");
  EXPECT_EQ(w.pending().installer_image(),
            "registry.example.com/nvidia/driver:550-5.15.0-91-generic-ubuntu22.04");
  EXPECT_TRUE(w.pending().has_since());
  EXPECT_THAT(w.estimate_basis(), HasSubstr("default driver install time"));

  grpc::ClientContext context;
  testing::Authorize(context, testing::kAdminToken);
  v1::ReportDriverInstallRequest report;
  report.set_node_name("small-1");
  report.set_kernel_version("5.15.0-91-generic");
  report.set_success(true);
  report.set_detail("550.54.15");
  v1::Node after;
  ASSERT_TRUE(inventory_->ReportDriverInstall(&context, report, &after).ok());
  // The install's duration is a sample for the next estimate on this kernel.
  EXPECT_EQ(db_.Query("SELECT count(*) FROM timing_samples WHERE kind = 'driver_install' AND "
                      "pool = 'gpu-small' AND kernel = '5.15.0-91-generic'"),
            "1");
  // ... which the API shows per pool, with the defaults still in use.
  grpc::ClientContext list_context;
  testing::Authorize(list_context, testing::kAdminToken);
  v1::ListPoolsResponse pools;
  ASSERT_TRUE(inventory_->ListPools(&list_context, {}, &pools).ok());
  const v1::PoolTimings* timings = nullptr;
  for (const auto& pool : pools.pools()) {
    if (pool.id() == "gpu-small") timings = &pool.timings();
  }
  ASSERT_NE(timings, nullptr);
  ASSERT_EQ(timings->driver_installs_size(), 1);
  EXPECT_EQ(timings->driver_installs(0).kernel_version(), "5.15.0-91-generic");
  EXPECT_EQ(timings->driver_installs(0).samples(), 1);
  EXPECT_FALSE(timings->has_node_start_median());
  EXPECT_EQ(timings->default_node_start().seconds(), 300);
  EXPECT_EQ(timings->default_driver_install().seconds(), 600);
  // The seconds fields stay filled, the same, until v2.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  EXPECT_FALSE(timings->has_node_start_median_seconds());
  EXPECT_EQ(timings->default_node_start_seconds(), 300);
  EXPECT_EQ(timings->default_driver_install_seconds(), 600);
#pragma GCC diagnostic pop
}

TEST_F(PendingReasonTest, BackingOffAfterAStockoutReplacesTheScaleUp) {
  v1::Workspace w = Place("elastic", "gpu-1x-elastic");
  ASSERT_EQ(w.state(), v1::WORKSPACE_STATE_PENDING);
  v1::Workspace asked = AwaitReason("elastic", v1::PENDING_REASON_CODE_SCALE_UP_REQUESTED);
  EXPECT_THAT(asked.pending_reason(), HasSubstr("scale-up of pool gpu-elastic from 0 to 1"));

  auto scaling = v1::ScalingService::NewStub(server_->channel());
  grpc::ClientContext context;
  testing::Authorize(context, testing::kActuatorToken);
  v1::ActuatorReport report;
  report.set_pool("gpu-elastic");
  report.set_state(v1::ActuatorReport::INSTANCE_STATE_OUT_OF_RESOURCES);
  report.set_instances(1);
  report.set_detail("InsufficientInstanceCapacity in us-east-1a");
  v1::ActuatorReportResponse ignored;
  ASSERT_TRUE(scaling->ReportActuator(&context, report, &ignored).ok());

  v1::Workspace backing_off = AwaitReason("elastic", v1::PENDING_REASON_CODE_POOL_BACKING_OFF);
  EXPECT_TRUE(backing_off.pending().has_until());
  EXPECT_THAT(backing_off.pending_reason(), HasSubstr("backing off"));
  EXPECT_THAT(backing_off.estimate_basis(), HasSubstr("backoff ends in"));
}

TEST_F(PendingReasonTest, UnhealthyGpusAreNamed) {
  v1::NodeInfo node = testing::FakeGpuNode("small-1", "gpu-small");
  node.mutable_gpus(3)->set_health(v1::GPU_HEALTH_UNHEALTHY);
  testing::RegisterNode(server_->channel(), node);
  v1::Workspace w = Place("needs-eight", "gpu-8x");
  ASSERT_EQ(w.state(), v1::WORKSPACE_STATE_PENDING);
  EXPECT_EQ(w.pending().code(), v1::PENDING_REASON_CODE_GPUS_UNHEALTHY);
  EXPECT_EQ(w.pending().node(), "small-1");
  EXPECT_THAT(w.pending_reason(), HasSubstr("1 GPU of its free GPUs is unhealthy"));
}

TEST_F(PendingReasonTest, PolicyAndQuotaChangedAfterQueueingAreNamed) {
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("small-1", "gpu-small"));
  ASSERT_EQ(Place("holder", "gpu-1x").state(), v1::WORKSPACE_STATE_PLACED);
  ASSERT_EQ(Place("queued", "gpu-8x").state(), v1::WORKSPACE_STATE_PENDING);

  SetOrg({"standard", "gpu-1x"}, -1);
  v1::Workspace w = Get("queued");
  EXPECT_EQ(w.pending().code(), v1::PENDING_REASON_CODE_CLASS_POLICY);
  EXPECT_EQ(w.pending_reason(), "class gpu-8x is not in the allow-list of org o-1");

  SetOrg({}, 4);
  w = Get("queued");
  EXPECT_EQ(w.pending().code(), v1::PENDING_REASON_CODE_ORG_GPU_QUOTA);
  EXPECT_EQ(w.pending().org_gpus_held(), 1);
  EXPECT_EQ(w.pending().org_gpu_quota(), 4);
  EXPECT_EQ(w.pending().gpus_needed(), 8);
  EXPECT_THAT(w.pending_reason(), HasSubstr("the org holds 1 of its GPU quota of 4"));
}

TEST_F(PendingReasonTest, AFullPreferredPoolSendsTheDemandToTheFallbackPool) {
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("h100-1", "fb-h100"));
  ASSERT_EQ(Place("on-h100", "fallback-8x").node_name(), "h100-1");
  ASSERT_EQ(Place("needs-more", "fallback-8x").state(), v1::WORKSPACE_STATE_PENDING);
  // fb-h100 is at max_size: the A100 fallback is asked to grow, and the
  // reason names that scale-up, not the full pool.
  v1::Workspace w = AwaitReason("needs-more", v1::PENDING_REASON_CODE_SCALE_UP_REQUESTED);
  EXPECT_EQ(w.pending().pool(), "fb-a100");
  EXPECT_THAT(w.pending_reason(), HasSubstr("scale-up of pool fb-a100 from 0 to 1"));
}

}  // namespace
}  // namespace wsched
