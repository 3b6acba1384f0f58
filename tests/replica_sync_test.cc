// Several replicas on one database stay in step through the change feed:
// a caller's write on one replica is visible on its next call to another,
// a stop always wins over a queue placement racing with it, and a heartbeat
// that changes nothing writes no node row and publishes nothing.
#include <atomic>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/metrics_text.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/classes.grpc.pb.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}



TEST(ReplicaSync, CatalogAppliedOnOneReplicaIsUsedOnTheNextCallToAnother) {
  testing::TestDatabase db;
  testing::ServerProcess a({db.url()});
  testing::ServerProcess b({db.url()});
  ASSERT_TRUE(a.started() && b.started());

  grpc::ClientContext context;
  testing::Authorize(context, testing::kAdminToken);
  v1::ApplyCatalogRequest apply;
  apply.set_yaml(ReadFile(testing::SourcePath("classes/saas.yaml")));
  v1::ApplyCatalogResponse applied;
  grpc::Status status = v1::ClassService::NewStub(a.channel())->ApplyCatalog(&context, apply, &applied);
  ASSERT_TRUE(status.ok()) << status.error_message();

  // At once, on the other replica: the pool and the class exist there too.
  testing::RegisterNode(b.channel(), testing::FakeGpuNode("ryw-1", "gpu-h100"));
  v1::Workspace placed;
  status = testing::PlaceAs(b.channel(), "ryw-ws", "gpu-1x", &placed);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(placed.state(), v1::WORKSPACE_STATE_PLACED);
  EXPECT_EQ(placed.node_name(), "ryw-1");
  // And back: the node registered on B takes work placed through A at once.
  status = testing::PlaceAs(a.channel(), "ryw-ws-2", "gpu-1x", &placed);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(placed.state(), v1::WORKSPACE_STATE_PLACED);
}

TEST(ReplicaSync, StopAlwaysWinsOverQueuePlacementsOnOtherReplicas) {
  testing::TestDatabase db;
  const std::string catalog = testing::SourcePath("classes/saas.yaml");
  testing::ServerConfig config{db.url(), catalog};
  config.metrics = true;  // The quiescence below is read from /metrics.
  testing::ServerProcess a(config);
  testing::ServerProcess b(config);
  testing::ServerProcess c(config);
  ASSERT_TRUE(a.started() && b.started() && c.started());
  // What a replica still tracks as live (pending, placed, or being placed
  // from its queue); 0 on all three: nothing is left that any could place.
  auto live = [](const testing::ServerProcess& server) {
    return testing::MetricValue(testing::HttpGet(server.metrics_port(), "/metrics"),
                                "wsched_tracked_workspaces", {"kind=\"live\""});
  };
  testing::RegisterNode(a.channel(), testing::FakeGpuNode("stop-1", "gpu-h100"));
  testing::RegisterNode(a.channel(), testing::FakeGpuNode("stop-2", "gpu-h100"));  // 16 GPUs.

  constexpr int kRounds = 3;
  constexpr int kPlaced = 16;
  constexpr int kPending = 120;
  std::vector<std::shared_ptr<grpc::Channel>> others = {b.channel(), c.channel()};
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    std::vector<std::string> placed_ids, pending_ids;
    for (int i = 0; i < kPlaced + kPending; ++i) {
      std::string id = absl::StrCat("r", round, "-ws-", i);
      v1::Workspace out;
      grpc::Status status = testing::PlaceAs(others[i % 2], id, "gpu-1x", &out);
      ASSERT_TRUE(status.ok()) << id << ": " << status.error_message();
      (out.state() == v1::WORKSPACE_STATE_PLACED ? placed_ids : pending_ids).push_back(id);
    }
    ASSERT_EQ(placed_ids.size(), static_cast<size_t>(kPlaced));

    // Capacity frees on B and C (their queues drain onto it) while A stops
    // every pending workspace, from several clients at once.
    std::atomic<int> errors{0};
    std::mutex mu;
    std::string first_error;
    auto failed = [&](const std::string& id, const grpc::Status& status) {
      errors++;
      std::lock_guard<std::mutex> lock(mu);
      if (first_error.empty()) first_error = id + ": " + status.error_message();
    };
    std::vector<std::thread> clients;
    for (int t = 0; t < 4; ++t) {
      clients.emplace_back([&, t] {
        for (size_t i = t; i < pending_ids.size(); i += 4) {
          v1::Workspace out;
          grpc::Status status = testing::StopAs(a.channel(), pending_ids[i], &out);
          if (!status.ok() || out.state() != v1::WORKSPACE_STATE_STOPPED) failed(pending_ids[i], status);
        }
      });
    }
    clients.emplace_back([&] {
      for (size_t i = 0; i < placed_ids.size(); ++i) {
        v1::Workspace out;
        grpc::Status status = testing::StopAs(others[i % 2], placed_ids[i], &out);
        if (!status.ok() || out.state() != v1::WORKSPACE_STATE_STOPPED) failed(placed_ids[i], status);
      }
    });
    for (auto& client : clients) client.join();
    EXPECT_EQ(errors.load(), 0) << first_error;

    // Queue placements decided before a stop must not land after it. Once
    // no replica tracks a live workspace, none has a queue placement left
    // in flight: then every stopped workspace is still stopped, and no GPU
    // is held by a workspace that is not placed.
    EXPECT_TRUE(testing::Eventually([&] {
      return live(a) == 0 && live(b) == 0 && live(c) == 0;
    }, 30)) << "live on A, B, C: " << live(a).value_or(-1) << ", " << live(b).value_or(-1)
            << ", " << live(c).value_or(-1);
    EXPECT_EQ(db.Query(absl::StrCat("SELECT count(*) FROM workspaces WHERE id LIKE 'r", round,
                                    "-%' AND (state <> 'stopped' OR stopped_at IS NULL)")),
              "0");
    EXPECT_EQ(db.Query("SELECT count(*) FROM gpu_holds h JOIN workspaces w ON w.id = "
                       "h.workspace_id WHERE w.state <> 'placed'"),
              "0");
    EXPECT_EQ(db.Query("SELECT count(*) FROM gpu_holds"), "0");
    EXPECT_EQ(db.Query("SELECT COALESCE(sum(held_cpu_millis), 0) FROM nodes"), "0");
  }
  // The race was run, not dodged: the queues of B and C did place pending
  // work on freed GPUs while A was stopping it.
  auto count = [](const std::string& log, const std::string& what) {
    size_t n = 0;
    for (size_t at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) ++n;
    return n;
  };
  size_t from_queue = count(b.Log(), "pending workspace placed") + count(c.Log(), "pending workspace placed");
  std::printf("queue placements on B and C during the stops: %zu\n", from_queue);
  EXPECT_GT(from_queue, 0u);
}

TEST(ReplicaSync, HeartbeatThatChangesNothingWritesNoNodeRowAndPublishesNothing) {
  testing::TestDatabase db;
  testing::ServerProcess a({db.url(), testing::SourcePath("classes/saas.yaml"),
                            {"--heartbeat_interval=1s", "--node_lost_after=3s"}});
  ASSERT_TRUE(a.started());
  v1::NodeInfo node = testing::FakeGpuNode("quiet-1", "gpu-h100");
  testing::RegisterNode(a.channel(), node);
  const std::string version = db.Query("SELECT version FROM nodes WHERE name = 'quiet-1'");
  const std::string head = db.Query("SELECT seq FROM feed_head");
  const std::string heard = db.Query("SELECT last_heartbeat FROM node_liveness");

  auto stub = v1::InventoryService::NewStub(a.channel());
  // What the agent reports every interval: the node as it registered.
  auto heartbeat = [&](v1::GpuHealth first_gpu, v1::HeartbeatResponse* response) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAgentToken);
    v1::HeartbeatRequest request;
    request.set_node_name("quiet-1");
    request.set_kernel_version(node.kernel_version());
    request.set_driver_version(node.driver_version());
    (*request.mutable_gpu_health_by_uuid())[node.gpus(0).uuid()] = first_gpu;
    return stub->Heartbeat(&context, request, response);
  };
  for (int i = 0; i < 50; ++i) {
    v1::HeartbeatResponse response;
    grpc::Status status = heartbeat(v1::GPU_HEALTH_HEALTHY, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.state(), v1::NODE_STATE_READY);
  }
  EXPECT_EQ(db.Query("SELECT version FROM nodes WHERE name = 'quiet-1'"), version);
  EXPECT_EQ(db.Query("SELECT seq FROM feed_head"), head);
  // Liveness still reaches the database, batched: wait for the flush (at
  // most 300 ms with a 3 s lost timeout) by polling the row.
  bool advanced = false;
  for (int i = 0; i < 50 && !advanced; ++i) {
    advanced = db.Query("SELECT last_heartbeat FROM node_liveness") != heard;
    if (!advanced) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(advanced);
  EXPECT_EQ(db.Query("SELECT state FROM nodes WHERE name = 'quiet-1'"), "ready");

  // A real change (a GPU turns unhealthy) is written and published.
  v1::HeartbeatResponse response;
  ASSERT_TRUE(heartbeat(v1::GPU_HEALTH_UNHEALTHY, &response).ok());
  EXPECT_NE(db.Query("SELECT version FROM nodes WHERE name = 'quiet-1'"), version);
  EXPECT_NE(db.Query("SELECT seq FROM feed_head"), head);
}

}  // namespace
}  // namespace wsched
