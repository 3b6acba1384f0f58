// Stopping an idle workspace as the fix for a pending one, through the
// real server and PostgreSQL: an org at its GPU quota has a workspace whose
// GPUs a fake agent reports idle; a workspace of another project of the
// org waits for the quota. An admin's read of it offers stopping the idle
// workspace, named; the control plane, placing for the waiting project's
// users, is not shown another project's workspace to stop; and stopping it
// through StopWorkspace places the waiting one. The idle policy runs on
// seconds (--min_idle_for=1s); every step awaits the watch stream or the
// server, none sleeps for a guess.
#include <chrono>
#include <memory>
#include <string>

#include <google/protobuf/util/time_util.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/catalog_file.h"
#include "tests/support/fake_agent.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/placement.grpc.pb.h"
#include "wsched/v1/settings.grpc.pb.h"

namespace wsched {
namespace {

using google::protobuf::util::TimeUtil;
using ::testing::HasSubstr;

// One 8-GPU node; gpu-4x tells of GPUs idle for a second.
constexpr char kCatalog[] = R"(classes:
  - id: standard
    display_name: Standard
    resources: {cpu: 4, memory: 16Gi}
    default: true
  - id: gpu-4x
    display_name: 4 GPUs
    resources: {cpu: 4, memory: 16Gi}
    gpu: {count: 4, models: [H100]}
    idle: {gpu_utilization_below: 5%, for: 1s, action: notify}
pools:
  - id: general
    node: {cpu: 30, memory: 120Gi}
    max_size: 4
  - id: gpu-h100
    node: {cpu: 200, memory: 1700Gi, gpus: 8, gpu_model: H100}
    max_size: 1
driver_policy:
  - kernel: "5.15.0-*-generic"
    os_id: ubuntu
    os_version: "22.04"
    driver_version: 550.54.15
    driver_branch: "550"
    installer_repo: registry.example.com/nvidia/driver
)";

class IdleFixTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::ServerConfig config{db_.url(), catalog_.path()};
    config.extra_flags = {"--min_idle_for=1s", "--heartbeat_interval=1s"};
    server_ = std::make_unique<testing::ServerProcess>(config);
    ASSERT_TRUE(server_->started());
    placement_ = v1::PlacementService::NewStub(server_->channel());
    node_ = testing::FakeGpuNode("h100-a", "gpu-h100");
    testing::RegisterNode(server_->channel(), node_);
  }

  // As the control plane places for the users of `project` in org o-1.
  v1::Workspace Place(const std::string& id, const std::string& project) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    v1::PlaceWorkspaceRequest request;
    request.set_workspace_id(id);
    request.set_org_id("o-1");
    request.set_project_id(project);
    request.set_user_id("u-1");
    request.set_class_id("gpu-4x");
    v1::Workspace w;
    grpc::Status status = placement_->PlaceWorkspace(&context, request, &w);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return w;
  }

  grpc::Status SetOrgQuota(int64_t gpu_quota) {
    auto settings = v1::SettingsService::NewStub(server_->channel());
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::SetOrgSettingsRequest request;
    request.mutable_settings()->set_org_id("o-1");
    request.mutable_settings()->set_gpu_quota(gpu_quota);
    v1::OrgSettings response;
    return settings->SetOrgSettings(&context, request, &response);
  }

  v1::Workspace GetWith(const char* token, const std::string& id) {
    grpc::ClientContext context;
    testing::Authorize(context, token);
    v1::GetWorkspaceRequest request;
    request.set_workspace_id(id);
    request.set_view(v1::WORKSPACE_VIEW_FULL);  // With the fixes.
    v1::Workspace w;
    grpc::Status status = placement_->GetWorkspace(&context, request, &w);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return w;
  }

  // Follows the workspace's watch stream to the first message `done`
  // accepts (each message is a change; no polling).
  template <typename Done>
  v1::Workspace Await(const std::string& id, Done done, const std::string& what) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    v1::WatchWorkspaceRequest request;
    request.set_workspace_id(id);
    auto stream = placement_->WatchWorkspace(&context, request);
    v1::Workspace update;
    while (stream->Read(&update)) {
      if (done(update)) {
        context.TryCancel();
        return update;
      }
    }
    ADD_FAILURE() << "workspace " << id << ": never " << what << "; last: " << update.DebugString();
    return update;
  }

  testing::TestDatabase db_;
  testing::CatalogFile catalog_{"idle-fix", kCatalog};
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::PlacementService::Stub> placement_;
  v1::NodeInfo node_;
};

const v1::PendingFix* StopFix(const v1::Workspace& w) {
  for (const v1::PendingFix& fix : w.fixes()) {
    if (fix.kind() == v1::PendingFix::KIND_STOP_IDLE_WORKSPACE) return &fix;
  }
  return nullptr;
}

TEST_F(IdleFixTest, AnIdleWorkspaceOfTheOrgIsOfferedToStopAndStoppingItPlaces) {
  const v1::Workspace idle = Place("ws-idle", "p-1");
  const v1::Workspace busy = Place("ws-busy", "p-1");
  ASSERT_EQ(idle.state(), v1::WORKSPACE_STATE_PLACED);
  ASSERT_EQ(busy.state(), v1::WORKSPACE_STATE_PLACED);
  // Queued for the full node, then the org's quota is set to what it holds
  // (a request over the quota would be refused, not queued): it waits for
  // the quota.
  ASSERT_EQ(Place("ws-waiting", "p-42").state(), v1::WORKSPACE_STATE_PENDING);
  ASSERT_TRUE(SetOrgQuota(8).ok());

  // Before anything is idle, nothing of the org may be stopped for it.
  v1::Workspace before = GetWith(testing::kAdminToken, "ws-waiting");
  EXPECT_EQ(StopFix(before), nullptr) << before.DebugString();

  testing::FakeAgent agent(server_->channel(), node_);
  for (const auto& gpu : idle.gpus()) agent.Set(gpu.uuid(), 0);
  for (const auto& gpu : busy.gpus()) agent.Set(gpu.uuid(), 80);
  const v1::Workspace marked = Await(
      "ws-idle",
      [](const v1::Workspace& w) { return w.event().kind() == v1::WorkspaceEvent::KIND_IDLE; },
      "idle");
  ASSERT_EQ(marked.event().kind(), v1::WorkspaceEvent::KIND_IDLE);

  // The mark is on the record this replica has applied: an admin's read
  // names the idle workspace, and only it (the busy one is not idle).
  v1::Workspace admin_view = GetWith(testing::kAdminToken, "ws-waiting");
  ASSERT_EQ(admin_view.pending().code(), v1::PENDING_REASON_CODE_ORG_GPU_QUOTA);
  const v1::PendingFix* fix = StopFix(admin_view);
  ASSERT_NE(fix, nullptr) << admin_view.DebugString();
  EXPECT_EQ(fix->workspace_id(), "ws-idle");
  EXPECT_EQ(fix->project_id(), "p-1");
  // Another project's workspace: the org's admin stops it for this one.
  EXPECT_EQ(fix->applier(), v1::PendingFix::APPLIER_ORG_ADMIN);
  EXPECT_EQ(fix->outcome(), v1::PENDING_REASON_CODE_QUEUED);
  EXPECT_EQ(fix->node(), "h100-a");
  EXPECT_GE(TimeUtil::DurationToMilliseconds(fix->idle_for()), 1000) << "idle for `for` at least";
  EXPECT_THAT(fix->detail(), HasSubstr("stop workspace ws-idle of project p-1"));
  // Ranked before the quota raise, which would need a node the pool may
  // not have: no raise is offered.
  EXPECT_EQ(admin_view.fixes(0).kind(), v1::PendingFix::KIND_STOP_IDLE_WORKSPACE);

  // The control plane places for p-42's users, who may not stop p-1's
  // workspace: the same read shows them nothing to stop.
  v1::Workspace user_view = GetWith(testing::kControlPlaneToken, "ws-waiting");
  EXPECT_EQ(user_view.pending().code(), v1::PENDING_REASON_CODE_ORG_GPU_QUOTA);
  EXPECT_EQ(StopFix(user_view), nullptr) << user_view.DebugString();

  // Applied through the API: the waiting workspace takes the freed GPUs.
  v1::Workspace stopped;
  ASSERT_TRUE(testing::StopAs(server_->channel(), fix->workspace_id(), &stopped).ok());
  const v1::Workspace placed = Await(
      "ws-waiting", [](const v1::Workspace& w) { return w.state() == v1::WORKSPACE_STATE_PLACED; },
      "placed");
  EXPECT_EQ(placed.state(), v1::WORKSPACE_STATE_PLACED);
  EXPECT_EQ(placed.node_name(), "h100-a");
}

}  // namespace
}  // namespace wsched
