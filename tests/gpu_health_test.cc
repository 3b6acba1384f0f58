// GPU health through the real gRPC server and a real PostgreSQL: an unhealthy
// GPU is never placed, one that goes bad while held shows on its workspace
// (read and watched), it stays out until it has reported healthy for
// --gpu_healthy_for (on the scheduler's injected clock) or an admin clears
// it, and a heartbeat without a driver version keeps the stored one.
#include <atomic>
#include <memory>
#include <set>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/catalog/load.h"
#include "server/app/catalog_applier.h"
#include "server/grpc/inventory_service.h"
#include "server/grpc/live_authenticator.h"
#include "server/grpc/placement_service.h"
#include "server/metrics/metrics.h"
#include "server/replica/database_stores.h"
#include "server/scheduler/scheduler.h"
#include "server/store/database.h"
#include "server/store/migrations.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;

constexpr char kXid79[] = "XID 79: GPU has fallen off the bus";

std::string Uuid(const std::string& node, int i) { return absl::StrCat("GPU-", node, "-", i); }

v1::NodeInfo Node(const std::string& name, int gpus) {
  testing::FakeNodeOptions options;
  options.gpus = gpus;
  return testing::FakeGpuNode(name, "gpu-h100", options);
}

// What the agent sends: the given GPUs unhealthy with `reason`, the others healthy.
v1::HeartbeatRequest Heartbeat(const v1::NodeInfo& node, const std::set<int>& unhealthy,
                               const std::string& reason = kXid79) {
  v1::HeartbeatRequest request;
  request.set_node_name(node.name());
  request.set_kernel_version(node.kernel_version());
  request.set_driver_version(node.driver_version());
  for (int i = 0; i < node.gpus_size(); ++i) {
    const std::string& uuid = node.gpus(i).uuid();
    bool bad = unhealthy.count(i) > 0;
    (*request.mutable_gpu_health_by_uuid())[uuid] =
        bad ? v1::GPU_HEALTH_UNHEALTHY : v1::GPU_HEALTH_HEALTHY;
    if (bad) (*request.mutable_gpu_health_reason_by_uuid())[uuid] = reason;
  }
  return request;
}

// Calls on one channel, as the roles the server's test tokens give.
class Client {
 public:
  explicit Client(std::shared_ptr<grpc::Channel> channel)
      : inventory_(v1::InventoryService::NewStub(channel)),
        placement_(v1::PlacementService::NewStub(channel)),
        channel_(std::move(channel)) {}

  void Send(const v1::HeartbeatRequest& request) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAgentToken);
    v1::HeartbeatResponse response;
    grpc::Status status = inventory_->Heartbeat(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  v1::Node GetNode(const std::string& name) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::NodeNameRequest request;
    request.set_node_name(name);
    v1::Node node;
    grpc::Status status = inventory_->GetNode(&context, request, &node);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return node;
  }

  grpc::Status Clear(const std::string& node, const std::string& uuid, const std::string& token,
                     v1::Node* out) {
    grpc::ClientContext context;
    testing::Authorize(context, token);
    v1::ClearGpuHealthRequest request;
    request.set_node_name(node);
    request.set_gpu_uuid(uuid);
    return inventory_->ClearGpuHealth(&context, request, out);
  }

  v1::Workspace Place(const std::string& id) {
    v1::Workspace out;
    grpc::Status status = testing::PlaceAs(channel_, id, "gpu-1x", &out);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return out;
  }

  v1::Workspace Get(const std::string& id) {
    v1::Workspace out;
    grpc::Status status = testing::GetAs(channel_, id, &out);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return out;
  }

  // A watch stream; Read blocks until the server sends (bounded by 20 s).
  struct Watch {
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReader<v1::Workspace>> reader;
  };
  std::unique_ptr<Watch> StartWatch(const std::string& id) {
    auto watch = std::make_unique<Watch>();
    testing::Authorize(watch->context, testing::kControlPlaneToken);
    watch->context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    v1::WatchWorkspaceRequest request;
    request.set_workspace_id(id);
    watch->reader = placement_->WatchWorkspace(&watch->context, request);
    return watch;
  }

 private:
  std::unique_ptr<v1::InventoryService::Stub> inventory_;
  std::unique_ptr<v1::PlacementService::Stub> placement_;
  std::shared_ptr<grpc::Channel> channel_;
};

// Against the wsched-server binary (default --gpu_healthy_for=10m).
class GpuHealthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::ServerConfig config{db_.url(), testing::SourcePath("classes/saas.yaml")};
    config.metrics = true;
    server_ = std::make_unique<testing::ServerProcess>(config);
    ASSERT_TRUE(server_->started());
    client_ = std::make_unique<Client>(server_->channel());
  }

  testing::TestDatabase db_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<Client> client_;
};

TEST_F(GpuHealthTest, UnhealthyGpuIsNeverPlaced) {
  v1::NodeInfo node = Node("n1", 2);
  testing::RegisterNode(server_->channel(), node);
  client_->Send(Heartbeat(node, {0}));

  v1::Node stored = client_->GetNode("n1");
  EXPECT_EQ(stored.info().gpus(0).health(), v1::GPU_HEALTH_UNHEALTHY);
  EXPECT_EQ(stored.info().gpus(0).health_reason(), kXid79);
  EXPECT_TRUE(stored.info().gpus(0).has_unhealthy_since());
  EXPECT_EQ(stored.info().gpus(1).health(), v1::GPU_HEALTH_HEALTHY);

  v1::Workspace first = client_->Place("w1");
  ASSERT_EQ(first.state(), v1::WORKSPACE_STATE_PLACED) << first.pending_reason();
  ASSERT_EQ(first.gpus_size(), 1);
  EXPECT_EQ(first.gpus(0).uuid(), Uuid("n1", 1));
  // The only other GPU is unhealthy: the next one waits.
  EXPECT_EQ(client_->Place("w2").state(), v1::WORKSPACE_STATE_PENDING);

  // A node that registers with a GPU already bad keeps it out too.
  v1::NodeInfo bad = Node("n2", 1);
  bad.mutable_gpus(0)->set_health(v1::GPU_HEALTH_UNHEALTHY);
  bad.mutable_gpus(0)->set_health_reason("nvidia-smi: GPU is lost");
  testing::RegisterNode(server_->channel(), bad);
  EXPECT_EQ(client_->GetNode("n2").info().gpus(0).health_reason(), "nvidia-smi: GPU is lost");
  EXPECT_EQ(client_->Get("w2").state(), v1::WORKSPACE_STATE_PENDING);

  std::string metrics = testing::HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_THAT(metrics, HasSubstr("status=\"unhealthy\"} 2"));
}

TEST_F(GpuHealthTest, GpuThatGoesBadWhileHeldShowsOnItsWorkspace) {
  v1::NodeInfo node = Node("n1", 1);
  testing::RegisterNode(server_->channel(), node);
  v1::Workspace placed = client_->Place("w1");
  ASSERT_EQ(placed.state(), v1::WORKSPACE_STATE_PLACED);

  auto watch = client_->StartWatch("w1");
  v1::Workspace seen;
  ASSERT_TRUE(watch->reader->Read(&seen));
  EXPECT_EQ(seen.gpus(0).health(), v1::GPU_HEALTH_HEALTHY);

  client_->Send(Heartbeat(node, {0}, "2 uncorrected ECC error(s) since the driver loaded"));
  v1::Workspace read = client_->Get("w1");
  EXPECT_EQ(read.state(), v1::WORKSPACE_STATE_PLACED);  // It keeps its GPU; its owner decides.
  EXPECT_EQ(read.gpus(0).health(), v1::GPU_HEALTH_UNHEALTHY);
  EXPECT_THAT(read.gpus(0).health_reason(), HasSubstr("uncorrected ECC"));
  // The watcher hears of it without any change to the workspace itself.
  ASSERT_TRUE(watch->reader->Read(&seen));
  EXPECT_EQ(seen.gpus(0).health(), v1::GPU_HEALTH_UNHEALTHY);
  EXPECT_EQ(seen.gpus(0).uuid(), Uuid("n1", 0));
  watch->context.TryCancel();
}

TEST_F(GpuHealthTest, StaysOutWhileRecoveringUntilAnAdminClearsIt) {
  v1::NodeInfo node = Node("n1", 1);
  testing::RegisterNode(server_->channel(), node);
  client_->Send(Heartbeat(node, {0}));
  client_->Send(Heartbeat(node, {}));  // Healthy again, but not for 10 minutes.
  v1::Node stored = client_->GetNode("n1");
  EXPECT_EQ(stored.info().gpus(0).health(), v1::GPU_HEALTH_UNHEALTHY);
  EXPECT_TRUE(stored.info().gpus(0).has_reported_healthy_since());
  EXPECT_EQ(client_->Place("w1").state(), v1::WORKSPACE_STATE_PENDING);

  v1::Node cleared;
  EXPECT_EQ(client_->Clear("n1", Uuid("n1", 0), testing::kControlPlaneToken, &cleared).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(client_->Clear("n1", Uuid("n1", 0), testing::kAgentToken, &cleared).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  grpc::Status unknown = client_->Clear("n1", "GPU-nope", testing::kAdminToken, &cleared);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(unknown.error_message(), HasSubstr("gpu_uuid"));
  grpc::Status empty = client_->Clear("n1", "", testing::kAdminToken, &cleared);
  EXPECT_EQ(empty.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(empty.error_message(), HasSubstr("gpu_uuid"));

  auto watch = client_->StartWatch("w1");
  ASSERT_TRUE(client_->Clear("n1", Uuid("n1", 0), testing::kAdminToken, &cleared).ok());
  EXPECT_EQ(cleared.info().gpus(0).health(), v1::GPU_HEALTH_HEALTHY);
  EXPECT_EQ(cleared.info().gpus(0).health_reason(), "");
  // The waiting workspace gets the GPU back.
  v1::Workspace seen;
  while (watch->reader->Read(&seen) && seen.state() != v1::WORKSPACE_STATE_PLACED) {
  }
  EXPECT_EQ(seen.state(), v1::WORKSPACE_STATE_PLACED);
  EXPECT_EQ(seen.gpus(0).uuid(), Uuid("n1", 0));
  watch->context.TryCancel();
}

TEST_F(GpuHealthTest, HeartbeatWithoutDriverVersionKeepsIt) {
  v1::NodeInfo node = Node("n1", 1);
  testing::RegisterNode(server_->channel(), node);
  v1::HeartbeatRequest heartbeat = Heartbeat(node, {});
  heartbeat.clear_driver_version();
  client_->Send(heartbeat);
  v1::Node stored = client_->GetNode("n1");
  EXPECT_EQ(stored.info().driver_version(), "550.54.15");
  EXPECT_EQ(stored.driver_state(), v1::DRIVER_STATE_READY);
  EXPECT_EQ(client_->Place("w1").state(), v1::WORKSPACE_STATE_PLACED);
}

// A clock the test moves; the scheduler reads it from several threads.
class TestClock {
 public:
  absl::Time Now() const { return absl::FromUnixMicros(micros_.load()); }
  void Advance(absl::Duration d) { micros_ += absl::ToInt64Microseconds(d); }

 private:
  std::atomic<int64_t> micros_{absl::ToUnixMicros(absl::Now())};
};

// The scheduler and the inventory and placement services in this process,
// on the test's clock, served over real gRPC on a real PostgreSQL.
class GpuHealthClockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = store::Database::Connect(db_.url(), 4);
    ASSERT_TRUE(db.ok()) << db.status();
    database_ = *std::move(db);
    ASSERT_TRUE(store::ApplyEmbeddedMigrations(*database_).ok());
    auto applied = app::ApplyCheckedCatalog(
        *database_, catalog::CheckCatalogPath(testing::SourcePath("classes/saas.yaml")), false);
    ASSERT_TRUE(applied.ok()) << applied.status();

    placement_store_ = std::make_unique<replica::DatabasePlacementStore>(
        database_.get(), store::CommitBatcher::Options{}, nullptr);
    state_store_ = std::make_unique<replica::DatabaseStateStore>(database_.get());
    feed_ = std::make_unique<replica::DatabaseFeedSource>(database_.get());
    scheduler::SchedulerOptions options;
    options.gpu_healthy_for = absl::Minutes(10);
    scheduler_ = std::make_unique<scheduler::Scheduler>(
        scheduler::SchedulerStores{database_.get(), placement_store_.get(), state_store_.get(),
                                   feed_.get()},
        &metrics_, options, [this] { return clock_.Now(); });
    ASSERT_TRUE(scheduler_->Start().ok());

    auth_ = grpc_api::LiveAuthenticator::AllowAll();
    grpc_api::ServiceContext context;
    context.auth = auth_.get();
    context.metrics = &metrics_;
    context.scheduler = scheduler_.get();
    inventory_ = std::make_unique<grpc_api::InventoryServiceImpl>(context);
    placement_ = std::make_unique<grpc_api::PlacementServiceImpl>(context);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(inventory_.get());
    builder.RegisterService(placement_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port),
                                   grpc::InsecureChannelCredentials());
    client_ = std::make_unique<Client>(channel_);
  }

  void TearDown() override {
    if (scheduler_) scheduler_->Stop();
    if (server_) server_->Shutdown();
  }

  testing::TestDatabase db_;
  TestClock clock_;
  metrics::Metrics metrics_;
  std::unique_ptr<store::Database> database_;
  std::unique_ptr<replica::DatabasePlacementStore> placement_store_;
  std::unique_ptr<replica::DatabaseStateStore> state_store_;
  std::unique_ptr<replica::DatabaseFeedSource> feed_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
  std::unique_ptr<grpc_api::LiveAuthenticator> auth_;
  std::unique_ptr<grpc_api::InventoryServiceImpl> inventory_;
  std::unique_ptr<grpc_api::PlacementServiceImpl> placement_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<Client> client_;
};

TEST_F(GpuHealthClockTest, ReturnsAfterReportingHealthyForTheSetTime) {
  v1::NodeInfo node = Node("n1", 1);
  testing::RegisterNode(channel_, node);
  client_->Send(Heartbeat(node, {0}));
  clock_.Advance(absl::Minutes(3));
  client_->Send(Heartbeat(node, {}));  // The wait starts now.

  clock_.Advance(absl::Minutes(9));
  client_->Send(Heartbeat(node, {}));
  EXPECT_EQ(client_->GetNode("n1").info().gpus(0).health(), v1::GPU_HEALTH_UNHEALTHY);
  EXPECT_EQ(client_->Place("w1").state(), v1::WORKSPACE_STATE_PENDING);

  // A relapse restarts the wait.
  client_->Send(Heartbeat(node, {0}));
  client_->Send(Heartbeat(node, {}));
  clock_.Advance(absl::Minutes(9));
  client_->Send(Heartbeat(node, {}));
  EXPECT_EQ(client_->GetNode("n1").info().gpus(0).health(), v1::GPU_HEALTH_UNHEALTHY);

  auto watch = client_->StartWatch("w1");
  clock_.Advance(absl::Minutes(1));
  client_->Send(Heartbeat(node, {}));  // Healthy for 10 minutes: back in service.
  v1::Node stored = client_->GetNode("n1");
  EXPECT_EQ(stored.info().gpus(0).health(), v1::GPU_HEALTH_HEALTHY);
  EXPECT_FALSE(stored.info().gpus(0).has_unhealthy_since());
  v1::Workspace seen;
  while (watch->reader->Read(&seen) && seen.state() != v1::WORKSPACE_STATE_PLACED) {
  }
  EXPECT_EQ(seen.state(), v1::WORKSPACE_STATE_PLACED);
  EXPECT_EQ(seen.gpus(0).health(), v1::GPU_HEALTH_HEALTHY);
  watch->context.TryCancel();
}

}  // namespace
}  // namespace wsched
