// What would let a pending workspace go, through the real server and
// PostgreSQL: a workspace held back by its org's GPU quota is offered the
// smallest quota raise (to an admin, who may set the org's settings; not
// to the control plane placing for the project's users), and applying it
// through SetOrgSettings places the workspace.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"
#include "tests/support/catalog_file.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"
#include "wsched/v1/settings.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// gpu-small holds one 8-GPU node; fb-h100 another.
constexpr char kCatalog[] = R"(classes:
  - id: standard
    display_name: Standard
    resources: {cpu: 4, memory: 16Gi, ephemeral_storage: 30Gi, disk: 50Gi}
    pool_selector: {workload: general}
    default: true
  - id: gpu-1x
    display_name: 1 GPU
    resources: {cpu: 4, memory: 16Gi, ephemeral_storage: 100Gi, disk: 200Gi}
    gpu: {count: 1, models: [H100], isolation: container}
    pool_selector: {size: small}
  - id: big-8x
    display_name: 8 GPUs
    resources: {cpu: 16, memory: 64Gi, ephemeral_storage: 100Gi, disk: 200Gi}
    gpu: {count: 8, models: [H100], isolation: container}
    pool_selector: {size: big}
pools:
  - id: general
    labels: {workload: general}
    node: {cpu: 30, memory: 120Gi, ephemeral_storage: 300Gi, disk: 1Ti}
    max_size: 4
  - id: gpu-small
    labels: {size: small}
    node: {cpu: 200, memory: 1700Gi, ephemeral_storage: 3Ti, disk: 4Ti, gpus: 8, gpu_model: H100}
    max_size: 1
  - id: gpu-big
    labels: {size: big}
    node: {cpu: 200, memory: 1700Gi, ephemeral_storage: 3Ti, disk: 4Ti, gpus: 8, gpu_model: H100}
    max_size: 1
driver_policy:
  - kernel: "5.15.0-*-generic"
    os_id: ubuntu
    os_version: "22.04"
    driver_version: 550.54.15
    driver_branch: "550"
    installer_repo: registry.example.com/nvidia/driver
)";

class PendingFixesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ =
        std::make_unique<testing::ServerProcess>(testing::ServerConfig{db_.url(), catalog_.path()});
    ASSERT_TRUE(server_->started());
    placement_ = v1::PlacementService::NewStub(server_->channel());
  }

  v1::Workspace Place(const std::string& id, const std::string& class_id) {
    v1::Workspace w;
    grpc::Status status = testing::PlaceAs(server_->channel(), id, class_id, &w);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return w;
  }

  grpc::Status SetOrg(const std::vector<std::string>& allowed, int64_t gpu_quota) {
    auto settings = v1::SettingsService::NewStub(server_->channel());
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::SetOrgSettingsRequest request;
    request.mutable_settings()->set_org_id("o-1");
    for (const auto& id : allowed) request.mutable_settings()->add_allowed_classes(id);
    request.mutable_settings()->set_gpu_quota(gpu_quota);
    v1::OrgSettings response;
    return settings->SetOrgSettings(&context, request, &response);
  }

  // The fixes come only with the FULL view (the default BASIC leaves them
  // out: a poll does not pay for them).
  v1::Workspace GetWith(const char* token, const std::string& id,
                        v1::WorkspaceView view = v1::WORKSPACE_VIEW_FULL) {
    grpc::ClientContext context;
    testing::Authorize(context, token);
    v1::GetWorkspaceRequest request;
    request.set_workspace_id(id);
    request.set_view(view);
    v1::Workspace w;
    grpc::Status status = placement_->GetWorkspace(&context, request, &w);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return w;
  }

  // Follows the workspace's watch stream until it is placed (each message
  // is a change; no polling).
  v1::Workspace AwaitPlaced(const std::string& id) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    v1::WatchWorkspaceRequest request;
    request.set_workspace_id(id);
    auto stream = placement_->WatchWorkspace(&context, request);
    v1::Workspace update;
    while (stream->Read(&update)) {
      if (update.state() == v1::WORKSPACE_STATE_PLACED) {
        context.TryCancel();
        return update;
      }
    }
    ADD_FAILURE() << "workspace " << id << " was never placed; last: " << update.pending_reason();
    return update;
  }

  testing::TestDatabase db_;
  testing::CatalogFile catalog_{"pending-fixes", kCatalog};
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::PlacementService::Stub> placement_;
};

TEST_F(PendingFixesTest, AQuotaRaiseIsOfferedToAdminsAndApplyingItPlaces) {
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("small-1", "gpu-small"));
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("big-1", "gpu-big"));
  ASSERT_EQ(Place("holder", "gpu-1x").state(), v1::WORKSPACE_STATE_PLACED);
  ASSERT_EQ(Place("filler", "big-8x").node_name(), "big-1");
  // Queued behind the filler; then the org's quota leaves it 7 of the 8
  // GPUs it needs, and the filler's stop frees a node that would hold it.
  ASSERT_EQ(Place("queued", "big-8x").state(), v1::WORKSPACE_STATE_PENDING);
  // Only big-8x is allowed, so no other class is offered.
  ASSERT_TRUE(SetOrg({"big-8x"}, 8).ok());
  v1::Workspace stopped;
  ASSERT_TRUE(testing::StopAs(server_->channel(), "filler", &stopped).ok());

  // The reason stays ORG_GPU_QUOTA, so no watch message says when this
  // replica has applied the stop from the change feed: until it has, the
  // node is full in its view and no quota raise alone would do.
  v1::Workspace admin_view;
  ASSERT_TRUE(testing::Eventually([&] {
    admin_view = GetWith(testing::kAdminToken, "queued");
    return admin_view.fixes_size() > 0;
  })) << admin_view.DebugString();
  ASSERT_EQ(admin_view.state(), v1::WORKSPACE_STATE_PENDING);
  ASSERT_EQ(admin_view.pending().code(), v1::PENDING_REASON_CODE_ORG_GPU_QUOTA);
  ASSERT_EQ(admin_view.fixes_size(), 1);
  const v1::PendingFix& fix = admin_view.fixes(0);
  EXPECT_EQ(fix.kind(), v1::PendingFix::KIND_RAISE_ORG_GPU_QUOTA);
  EXPECT_EQ(fix.applier(), v1::PendingFix::APPLIER_ORG_ADMIN);
  EXPECT_EQ(fix.gpu_quota(), 9);
  EXPECT_EQ(fix.raise_by(), 1);
  EXPECT_EQ(fix.outcome(), v1::PENDING_REASON_CODE_QUEUED);
  EXPECT_EQ(fix.node(), "big-1");
  EXPECT_THAT(fix.detail(), HasSubstr("raise the GPU quota of org o-1 from 8 to 9 (+1)"));
  // A poll (the BASIC view, also when the view is unset) reads the same
  // reason without the fixes.
  for (v1::WorkspaceView basic : {v1::WORKSPACE_VIEW_BASIC, v1::WORKSPACE_VIEW_UNSPECIFIED}) {
    v1::Workspace polled = GetWith(testing::kAdminToken, "queued", basic);
    EXPECT_EQ(polled.pending().code(), v1::PENDING_REASON_CODE_ORG_GPU_QUOTA);
    EXPECT_THAT(polled.fixes(), IsEmpty()) << v1::WorkspaceView_Name(basic);
  }

  // The control plane places for the project's users, who cannot change
  // the org's settings: the same read shows it nothing to do.
  v1::Workspace user_view = GetWith(testing::kControlPlaneToken, "queued");
  EXPECT_EQ(user_view.pending().code(), v1::PENDING_REASON_CODE_ORG_GPU_QUOTA);
  EXPECT_THAT(user_view.fixes(), IsEmpty());
  // Nothing of the fixes is stored.
  EXPECT_EQ(db_.Query("SELECT count(*) FROM workspaces WHERE id = 'queued' AND "
                      "pending_reason LIKE '%raise%'"),
            "0");

  ASSERT_TRUE(SetOrg({"big-8x"}, fix.gpu_quota()).ok());
  v1::Workspace placed = AwaitPlaced("queued");
  EXPECT_EQ(placed.node_name(), "big-1");
  EXPECT_THAT(GetWith(testing::kAdminToken, "queued").fixes(), IsEmpty());
}

TEST_F(PendingFixesTest, AnotherAllowedClassIsOfferedToTheControlPlane) {
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("small-1", "gpu-small"));
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("big-1", "gpu-big"));
  ASSERT_EQ(Place("first", "big-8x").state(), v1::WORKSPACE_STATE_PLACED);
  ASSERT_EQ(Place("second", "big-8x").state(), v1::WORKSPACE_STATE_PENDING);

  v1::Workspace w = GetWith(testing::kControlPlaneToken, "second");
  ASSERT_EQ(w.pending().code(), v1::PENDING_REASON_CODE_POOL_AT_MAX_SIZE);
  ASSERT_EQ(w.fixes_size(), 1);
  EXPECT_EQ(w.fixes(0).kind(), v1::PendingFix::KIND_USE_CLASS);
  EXPECT_EQ(w.fixes(0).class_id(), "gpu-1x");
  EXPECT_EQ(w.fixes(0).applier(), v1::PendingFix::APPLIER_PROJECT_OWNER);
  EXPECT_EQ(w.fixes(0).outcome(), v1::PENDING_REASON_CODE_QUEUED);

  // An admin also sees the pool's max_size, after the class (least change first).
  v1::Workspace admin_view = GetWith(testing::kAdminToken, "second");
  ASSERT_EQ(admin_view.fixes_size(), 2);
  EXPECT_EQ(admin_view.fixes(0).class_id(), "gpu-1x");
  EXPECT_EQ(admin_view.fixes(1).kind(), v1::PendingFix::KIND_RAISE_POOL_MAX_SIZE);
  EXPECT_EQ(admin_view.fixes(1).pool(), "gpu-big");
  EXPECT_EQ(admin_view.fixes(1).max_size(), 2);
  EXPECT_EQ(admin_view.fixes(1).outcome(), v1::PENDING_REASON_CODE_SCALE_UP_NOT_YET_REQUESTED);
}

}  // namespace
}  // namespace wsched
