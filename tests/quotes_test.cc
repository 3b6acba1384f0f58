// Quotes through the real server and PostgreSQL: a validate_only
// PlaceWorkspace answers every way the request could be served and writes
// nothing; placing with a quote's token places exactly as quoted, and a
// change in between (the node removed, the org's quota used by another
// workspace) is refused QUOTE_STALE naming the change.
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"
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

// gpu-big has room for two 8-GPU nodes; gpu-spare, as good a pool, for one
// (none registered: only a scale-up brings it).
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
    pool_selector: {size: big}
    credits_per_minute: 8
  - id: gpu-4x
    display_name: 4 GPUs
    resources: {cpu: 8, memory: 32Gi, ephemeral_storage: 100Gi, disk: 200Gi}
    gpu: {count: 4, models: [H100], isolation: container}
    pool_selector: {size: big}
    credits_per_minute: 4
pools:
  - id: general
    labels: {workload: general}
    node: {cpu: 30, memory: 120Gi, ephemeral_storage: 300Gi, disk: 1Ti}
    max_size: 4
  - id: gpu-big
    labels: {size: big}
    node: {cpu: 200, memory: 1700Gi, ephemeral_storage: 3Ti, disk: 4Ti, gpus: 8, gpu_model: H100}
    max_size: 2
  - id: gpu-spare
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

// What the database holds that a placement would write.
struct Rows {
  std::string workspaces, holds, audit, changes;
  friend bool operator==(const Rows&, const Rows&) = default;
};

class QuotesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One file per test: ctest runs the cases in parallel processes.
    catalog_path_ = ::testing::TempDir() + "/quotes-catalog-" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".yaml";
    std::ofstream(catalog_path_) << kCatalog;
    server_ =
        std::make_unique<testing::ServerProcess>(testing::ServerConfig{db_.url(), catalog_path_});
    ASSERT_TRUE(server_->started());
    placement_ = v1::PlacementService::NewStub(server_->channel());
  }
  void TearDown() override { std::remove(catalog_path_.c_str()); }

  static v1::PlaceWorkspaceRequest Request(const std::string& id, const std::string& class_id) {
    v1::PlaceWorkspaceRequest request;
    request.set_workspace_id(id);
    request.set_org_id("o-1");
    request.set_project_id("p-1");
    request.set_user_id("u-1");
    request.set_class_id(class_id);
    return request;
  }

  grpc::Status Send(const v1::PlaceWorkspaceRequest& request, v1::Workspace* out) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    return placement_->PlaceWorkspace(&context, request, out);
  }

  v1::Workspace Quote(const std::string& id, const std::string& class_id) {
    v1::PlaceWorkspaceRequest request = Request(id, class_id);
    request.set_validate_only(true);
    v1::Workspace w;
    grpc::Status status = Send(request, &w);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return w;
  }

  grpc::Status PlaceQuoted(const std::string& id, const std::string& token, v1::Workspace* out) {
    v1::PlaceWorkspaceRequest request = Request(id, "");
    request.set_quote_token(token);
    return Send(request, out);
  }

  v1::Workspace Place(const std::string& id, const std::string& class_id) {
    v1::Workspace w;
    grpc::Status status = testing::PlaceAs(server_->channel(), id, class_id, &w);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return w;
  }

  Rows Count() const {
    return {db_.Query("SELECT count(*) FROM workspaces"),
            db_.Query("SELECT count(*) FROM gpu_holds"),
            db_.Query("SELECT count(*) FROM audit_records"),
            db_.Query("SELECT count(*) FROM change_log")};
  }

  grpc::Status SetQuota(int64_t gpu_quota) {
    auto settings = v1::SettingsService::NewStub(server_->channel());
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::SetOrgSettingsRequest request;
    request.mutable_settings()->set_org_id("o-1");
    request.mutable_settings()->set_gpu_quota(gpu_quota);
    v1::OrgSettings response;
    return settings->SetOrgSettings(&context, request, &response);
  }

  grpc::Status RemoveNode(const std::string& name) {
    auto inventory = v1::InventoryService::NewStub(server_->channel());
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::NodeNameRequest request;
    request.set_node_name(name);
    v1::Empty response;
    return inventory->RemoveNode(&context, request, &response);
  }

  // The refusal's ErrorInfo, checking it says QUOTE_STALE.
  static google::rpc::ErrorInfo Stale(const grpc::Status& status) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
    google::rpc::Status rpc;
    EXPECT_TRUE(rpc.ParseFromString(status.error_details()));
    for (const auto& any : rpc.details()) {
      google::rpc::ErrorInfo info;
      if (any.Is<google::rpc::ErrorInfo>() && any.UnpackTo(&info)) {
        EXPECT_EQ(info.reason(), "QUOTE_STALE");
        return info;
      }
    }
    ADD_FAILURE() << "no ErrorInfo in " << status.error_message();
    return {};
  }

  testing::TestDatabase db_;
  std::string catalog_path_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::PlacementService::Stub> placement_;
};

TEST_F(QuotesTest, ValidateOnlyAnswersEveryWayAndWritesNothing) {
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("big-1", "gpu-big"));
  const Rows before = Count();
  v1::Workspace w = Quote("w-1", "gpu-8x");
  EXPECT_EQ(Count(), before);
  EXPECT_EQ(w.state(), v1::WORKSPACE_STATE_UNSPECIFIED);
  EXPECT_EQ(w.class_id(), "gpu-8x");
  // The requested class now on big-1, then the other class the policies
  // allow; then both after a scale-up of gpu-spare, which has no node yet.
  ASSERT_EQ(w.quotes_size(), 4) << w.DebugString();
  const v1::PlacementQuote& first = w.quotes(0);
  EXPECT_EQ(first.class_id(), "gpu-8x");
  EXPECT_EQ(first.when(), v1::PlacementQuote::WHEN_NOW);
  EXPECT_EQ(first.node(), "big-1");
  EXPECT_EQ(first.pool(), "gpu-big");
  EXPECT_EQ(first.gpu_model(), "H100");
  EXPECT_EQ(first.gpus(), 8);
  EXPECT_EQ(first.credits_per_minute_milli(), 8000);
  EXPECT_EQ(first.org_gpu_quota(), -1);
  EXPECT_EQ(w.quote_token(), first.quote_token());
  EXPECT_EQ(w.quotes(1).class_id(), "gpu-4x");
  EXPECT_EQ(w.quotes(1).when(), v1::PlacementQuote::WHEN_NOW);
  EXPECT_EQ(w.quotes(2).class_id(), "gpu-8x");
  EXPECT_EQ(w.quotes(2).pool(), "gpu-spare");
  EXPECT_EQ(w.quotes(2).when(), v1::PlacementQuote::WHEN_AFTER_SCALE_UP);
  EXPECT_TRUE(w.quotes(2).has_estimate());
  EXPECT_THAT(w.quotes(2).estimate_basis(), HasSubstr("node start"));

  v1::Workspace got;
  grpc::ClientContext context;
  testing::Authorize(context, testing::kControlPlaneToken);
  v1::GetWorkspaceRequest get;
  get.set_workspace_id("w-1");
  EXPECT_EQ(placement_->GetWorkspace(&context, get, &got).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(QuotesTest, PlacingWithATokenPlacesExactlyAsQuoted) {
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("big-1", "gpu-big"));
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("big-2", "gpu-big"));
  v1::Workspace quoted = Quote("w-1", "gpu-8x");
  // The other class's quote placed now (the request names no class).
  const v1::PlacementQuote* chosen = nullptr;
  for (const v1::PlacementQuote& q : quoted.quotes()) {
    if (q.class_id() == "gpu-4x" && q.when() == v1::PlacementQuote::WHEN_NOW) chosen = &q;
  }
  ASSERT_NE(chosen, nullptr) << quoted.DebugString();
  v1::Workspace placed;
  grpc::Status status = PlaceQuoted("w-1", chosen->quote_token(), &placed);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(placed.state(), v1::WORKSPACE_STATE_PLACED);
  EXPECT_EQ(placed.class_id(), "gpu-4x");
  EXPECT_EQ(placed.node_name(), chosen->node());
  EXPECT_EQ(placed.gpus_size(), 4);
  EXPECT_EQ(db_.Query("SELECT class_id FROM workspaces WHERE id = 'w-1'"), "gpu-4x");
}

TEST_F(QuotesTest, StaleWhenTheQuotedNodeIsGone) {
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("big-1", "gpu-big"));
  v1::Workspace quoted = Quote("w-1", "gpu-8x");
  ASSERT_EQ(quoted.quotes(0).node(), "big-1");
  ASSERT_TRUE(RemoveNode("big-1").ok());
  v1::Workspace placed;
  grpc::Status status = PlaceQuoted("w-1", quoted.quote_token(), &placed);
  google::rpc::ErrorInfo info = Stale(status);
  EXPECT_EQ(info.metadata().at("change"), "node_gone");
  EXPECT_EQ(info.metadata().at("detail"), "node big-1 is gone");
  EXPECT_THAT(status.error_message(), HasSubstr("node big-1 is gone"));
  EXPECT_EQ(db_.Query("SELECT count(*) FROM workspaces WHERE id = 'w-1'"), "0");
}

TEST_F(QuotesTest, StaleWhenAnotherWorkspaceUsedTheQuota) {
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("big-1", "gpu-big"));
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("big-2", "gpu-big"));
  ASSERT_TRUE(SetQuota(8).ok());
  v1::Workspace quoted = Quote("w-1", "gpu-8x");
  ASSERT_GT(quoted.quotes_size(), 0);
  EXPECT_EQ(quoted.quotes(0).org_gpus_held(), 0);
  EXPECT_EQ(quoted.quotes(0).org_gpus_after(), 8);
  EXPECT_EQ(quoted.quotes(0).org_gpu_quota(), 8);
  ASSERT_EQ(Place("other", "gpu-4x").state(), v1::WORKSPACE_STATE_PLACED);
  v1::Workspace placed;
  google::rpc::ErrorInfo info = Stale(PlaceQuoted("w-1", quoted.quote_token(), &placed));
  EXPECT_EQ(info.metadata().at("change"), "quota");
  EXPECT_EQ(info.metadata().at("detail"),
            "org o-1 now holds 4 of 8 GPUs; class gpu-8x needs 8 more");
}

TEST_F(QuotesTest, ATokenIsForTheRequestItWasMadeFor) {
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("big-1", "gpu-big"));
  v1::Workspace quoted = Quote("w-1", "gpu-8x");
  v1::Workspace placed;
  EXPECT_EQ(Stale(PlaceQuoted("w-2", quoted.quote_token(), &placed)).metadata().at("change"),
            "request");
  EXPECT_EQ(PlaceQuoted("w-1", "not-a-token", &placed).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

// A replica that is not the placer forwards both to the placer, with the
// request's new fields: the dry run still writes nothing, the token still
// places the quoted class.
TEST_F(QuotesTest, AFrontDoorForwardsTheDryRunAndTheToken) {
  testing::TestDatabase db;
  auto replica = [&] {
    testing::ServerConfig config{db.url(), catalog_path_};
    config.extra_flags = {"--advertise_host=127.0.0.1", "--placer_poll_interval=100ms"};
    return config;
  };
  testing::ServerProcess placer(replica());  // Started first: it takes the lock.
  ASSERT_TRUE(placer.started());
  testing::ServerProcess front_door(replica());
  ASSERT_TRUE(front_door.started());
  ASSERT_EQ(db.Query("SELECT address FROM placer"), absl::StrCat("127.0.0.1:", placer.port()));
  testing::RegisterNode(front_door.channel(), testing::FakeGpuNode("big-1", "gpu-big"));
  auto stub = v1::PlacementService::NewStub(front_door.channel());
  auto send = [&](const v1::PlaceWorkspaceRequest& request, v1::Workspace* out) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    return stub->PlaceWorkspace(&context, request, out);
  };

  v1::PlaceWorkspaceRequest dry_run = Request("w-1", "gpu-8x");
  dry_run.set_validate_only(true);
  v1::Workspace quoted;
  const v1::PlacementQuote* other_class = nullptr;
  // The node registered through the front door reaches the placer's mirror
  // by the change feed, a moment later: until then the placer quotes only
  // scale-ups. A dry run writes nothing, so asking again changes nothing.
  ASSERT_TRUE(testing::Eventually([&] {
    quoted.Clear();
    other_class = nullptr;
    if (!send(dry_run, &quoted).ok()) return false;
    for (const v1::PlacementQuote& q : quoted.quotes()) {
      if (q.class_id() == "gpu-4x" && q.when() == v1::PlacementQuote::WHEN_NOW) other_class = &q;
    }
    return other_class != nullptr;
  })) << quoted.DebugString();
  EXPECT_EQ(quoted.state(), v1::WORKSPACE_STATE_UNSPECIFIED);
  EXPECT_EQ(db.Query("SELECT count(*) FROM workspaces"), "0");

  v1::PlaceWorkspaceRequest quoted_request = Request("w-1", "");
  quoted_request.set_quote_token(other_class->quote_token());
  v1::Workspace placed;
  grpc::Status status = send(quoted_request, &placed);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(placed.class_id(), "gpu-4x");
  EXPECT_EQ(placed.node_name(), "big-1");
  EXPECT_EQ(db.Query("SELECT class_id FROM workspaces WHERE id = 'w-1'"), "gpu-4x");
}

}  // namespace
}  // namespace wsched
