// A queued workspace held back by a spending limit, through the real server
// and PostgreSQL (docs/billing.md "Spending limits"): it stays pending and
// is not placed, its reason is BUDGET_EXHAUSTED with the period's reset
// time, it takes no room from the workspaces behind it, an admin is offered
// the least raise of the limit that admits it (the control plane, reading
// for the project's users, is not), and applying that raise with the
// settings' version guard places it.
//
// Time is not waited for. The ledger counts by the database's clock, so a
// workspace that has "run for a while" is one whose placed_at the test
// moved back; placements are awaited on the watch stream.
#include <chrono>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/catalog_file.h"
#include "tests/support/eventually.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/placement.grpc.pb.h"
#include "wsched/v1/settings.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// One 8-GPU node: a second big-8x workspace queues behind the first.
constexpr char kCatalog[] = R"(classes:
  - id: standard
    display_name: Standard
    resources: {cpu: 4, memory: 16Gi, ephemeral_storage: 30Gi, disk: 50Gi}
    pool_selector: {workload: general}
    default: true
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

// 100 GPU-seconds a UTC month; a big-8x placement commits to 8 GPUs for
// --budget_interval (2 s): 16 GPU-seconds.
constexpr double kLimitGpuSeconds = 100;

v1::SpendingLimit MonthlyLimit(double gpu_hours) {
  v1::SpendingLimit limit;
  limit.set_gpu_hours(gpu_hours);
  limit.mutable_period()->mutable_calendar_month()->set_time_zone("UTC");
  return limit;
}

class BudgetPendingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::ServerConfig config{db_.url(), catalog_.path()};
    config.extra_flags = {"--budget_interval=2s"};
    server_ = std::make_unique<testing::ServerProcess>(config);
    ASSERT_TRUE(server_->started());
    placement_ = v1::PlacementService::NewStub(server_->channel());
    settings_ = v1::SettingsService::NewStub(server_->channel());
    testing::RegisterNode(server_->channel(), testing::FakeGpuNode("big-1", "gpu-big"));
  }

  v1::Workspace Place(const std::string& id, const std::string& org, const std::string& project) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::PlaceWorkspaceRequest request;
    request.set_workspace_id(id);
    request.set_org_id(org);
    request.set_project_id(project);
    request.set_user_id("u-1");
    request.set_class_id("big-8x");
    v1::Workspace w;
    grpc::Status status = placement_->PlaceWorkspace(&context, request, &w);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return w;
  }

  v1::OrgSettings ReadOrg() {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::GetOrgSettingsRequest request;
    request.set_org_id("o-1");
    v1::OrgSettings org;
    grpc::Status status = settings_->GetOrgSettings(&context, request, &org);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return org;
  }

  grpc::Status SetOrgLimit(double gpu_hours, int64_t expected_version) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::SetOrgSettingsRequest request;
    request.mutable_settings()->set_org_id("o-1");
    request.mutable_settings()->set_gpu_quota(-1);
    *request.mutable_settings()->mutable_spending_limit() = MonthlyLimit(gpu_hours);
    request.set_expected_version(expected_version);
    v1::OrgSettings response;
    return settings_->SetOrgSettings(&context, request, &response);
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

  // The org's limit spent: "filler" has held big-1 (8 GPUs) for 12 s, 96
  // GPU-seconds, and stops; 96 + 16 > 100.
  void SpendTheOrgsLimitAndFreeTheNode() {
    v1::Workspace stopped;
    db_.Query(
        "UPDATE workspaces SET placed_at = placed_at - interval '12 seconds' "
        "WHERE id = 'filler' RETURNING id");
    ASSERT_TRUE(testing::StopAs(server_->channel(), "filler", &stopped).ok());
  }

  // Follows the workspace's watch stream until it is placed.
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

  // The start of the next calendar month in UTC by the database's clock.
  absl::Time NextUtcMonth() {
    return absl::FromUnixSeconds(std::stoll(
        db_.Query("SELECT extract(epoch FROM date_trunc('month', now() AT TIME ZONE 'UTC') + "
                  "interval '1 month')::bigint")));
  }

  testing::TestDatabase db_;
  testing::CatalogFile catalog_{"budget-pending", kCatalog};
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::PlacementService::Stub> placement_;
  std::unique_ptr<v1::SettingsService::Stub> settings_;
};

TEST_F(BudgetPendingTest, AQueuedWorkspaceSaysTheLimitHoldsItAndTheRaiseOfferedPlacesIt) {
  ASSERT_TRUE(SetOrgLimit(kLimitGpuSeconds / 3600, 0).ok());
  ASSERT_EQ(Place("filler", "o-1", "p-1").state(), v1::WORKSPACE_STATE_PLACED);
  ASSERT_EQ(Place("queued", "o-1", "p-1").state(), v1::WORKSPACE_STATE_PENDING);
  SpendTheOrgsLimitAndFreeTheNode();

  // The fix is proven on this replica's view of the node, which is free
  // once it has applied the stop from the change feed: no event says when.
  v1::Workspace admin_view;
  ASSERT_TRUE(testing::Eventually([&] {
    admin_view = GetWith(testing::kAdminToken, "queued");
    return admin_view.fixes_size() > 0;
  })) << admin_view.DebugString();
  EXPECT_EQ(admin_view.state(), v1::WORKSPACE_STATE_PENDING);
  EXPECT_EQ(admin_view.node_name(), "");
  ASSERT_EQ(admin_view.pending().code(), v1::PENDING_REASON_CODE_BUDGET_EXHAUSTED);
  EXPECT_THAT(admin_view.pending().detail(), HasSubstr("the spending limit of org o-1 is reached"));
  EXPECT_THAT(admin_view.pending().detail(), HasSubstr("of 100.000000 GPU-seconds spent"));
  EXPECT_EQ(absl::FromUnixSeconds(admin_view.pending().until().seconds()), NextUtcMonth());

  ASSERT_EQ(admin_view.fixes_size(), 1);
  const v1::PendingFix& fix = admin_view.fixes(0);
  EXPECT_EQ(fix.kind(), v1::PendingFix::KIND_RAISE_SPENDING_LIMIT);
  EXPECT_EQ(fix.applier(), v1::PendingFix::APPLIER_ORG_ADMIN);
  EXPECT_EQ(fix.spending_limit_scope(), "org");
  EXPECT_EQ(fix.outcome(), v1::PENDING_REASON_CODE_QUEUED);
  EXPECT_EQ(fix.node(), "big-1");
  // 96 spent (and 8 GPU-seconds a second the test took to stop it) and 16
  // committed.
  EXPECT_GE(fix.spending_limit_gpu_hours() * 3600, 112);
  EXPECT_LT(fix.spending_limit_gpu_hours() * 3600, 120);
  EXPECT_NEAR(fix.spending_limit_gpu_hours() - fix.spending_limit_raise_by_gpu_hours(),
              kLimitGpuSeconds / 3600, 1e-12);
  EXPECT_THAT(fix.detail(), HasSubstr("raise the spending limit of org o-1 to "));

  // The control plane reads for the project's users and sees what a
  // project owner may apply; neither changes a limit: told why, offered
  // nothing.
  v1::Workspace user_view = GetWith(testing::kControlPlaneToken, "queued");
  EXPECT_EQ(user_view.pending().code(), v1::PENDING_REASON_CODE_BUDGET_EXHAUSTED);
  EXPECT_THAT(user_view.fixes(), IsEmpty());

  // A raise short of the fix by a GPU-second leaves it waiting.
  const int64_t version = ReadOrg().version();
  ASSERT_TRUE(SetOrgLimit(fix.spending_limit_gpu_hours() - 1.0 / 3600, version).ok());
  EXPECT_EQ(GetWith(testing::kAdminToken, "queued").pending().code(),
            v1::PENDING_REASON_CODE_BUDGET_EXHAUSTED);
  // A writer that read the old version changes nothing; the fix as read,
  // with the current version, places it.
  EXPECT_EQ(SetOrgLimit(fix.spending_limit_gpu_hours(), version).error_code(),
            grpc::StatusCode::ABORTED);
  ASSERT_TRUE(SetOrgLimit(fix.spending_limit_gpu_hours(), ReadOrg().version()).ok());
  EXPECT_EQ(AwaitPlaced("queued").node_name(), "big-1");
}

TEST_F(BudgetPendingTest, AWorkspaceHeldByItsLimitTakesNoRoomFromTheOnesBehindIt) {
  ASSERT_TRUE(SetOrgLimit(kLimitGpuSeconds / 3600, 0).ok());
  ASSERT_EQ(Place("filler", "o-1", "p-1").state(), v1::WORKSPACE_STATE_PLACED);
  ASSERT_EQ(Place("held", "o-1", "p-1").state(), v1::WORKSPACE_STATE_PENDING);
  // Another org, no limit, behind it in the queue.
  ASSERT_EQ(Place("behind", "o-2", "p-2").state(), v1::WORKSPACE_STATE_PENDING);
  SpendTheOrgsLimitAndFreeTheNode();

  EXPECT_EQ(AwaitPlaced("behind").node_name(), "big-1");
  v1::Workspace held = GetWith(testing::kAdminToken, "held");
  EXPECT_EQ(held.state(), v1::WORKSPACE_STATE_PENDING);
  EXPECT_EQ(held.pending().code(), v1::PENDING_REASON_CODE_BUDGET_EXHAUSTED);
  EXPECT_EQ(db_.Query("SELECT count(*) FROM usage_intervals WHERE workspace_id = 'held'"), "0");
}

}  // namespace
}  // namespace wsched
