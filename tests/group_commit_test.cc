// Placements that arrive together share one transaction: the group commit
// writes a batch with a fixed handful of statements, and each batch is one
// change-log entry naming every workspace it wrote.
#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched {
namespace {

TEST(GroupCommit, ConcurrentPlacementsAndStopsShareTransactions) {
  testing::TestDatabase db;
  testing::ServerProcess server({db.url(), testing::SourcePath("classes/saas.yaml"), {}, "127.0.0.1:0",
                                 /*metrics=*/true});
  ASSERT_TRUE(server.started());
  for (int n = 0; n < 10; ++n) {  // Room for all: 7 "standard" each.
    testing::RegisterNode(server.channel(), testing::FakeCpuNode(absl::StrCat("gc-", n), "general"));
  }
  const std::string head_before = db.Query("SELECT seq FROM feed_head");

  constexpr int kClients = 48;
  std::atomic<int> ready{0}, errors{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      auto stub = v1::PlacementService::NewStub(server.channel());
      ready++;
      while (ready.load() < kClients) std::this_thread::yield();  // Start together.
      grpc::ClientContext context;
      testing::Authorize(context, testing::kControlPlaneToken);
      v1::PlaceWorkspaceRequest request;
      request.set_workspace_id(absl::StrCat("gc-ws-", c));
      request.set_org_id("o");
      request.set_project_id("p");
      request.set_user_id("u");
      request.set_class_id("standard");
      v1::Workspace out;
      grpc::Status status = stub->PlaceWorkspace(&context, request, &out);
      if (!status.ok() || out.state() != v1::WORKSPACE_STATE_PLACED) errors++;
      grpc::ClientContext stop_context;
      testing::Authorize(stop_context, testing::kControlPlaneToken);
      v1::StopWorkspaceRequest stop;
      stop.set_workspace_id(request.workspace_id());
      if (!stub->StopWorkspace(&stop_context, stop, &out).ok()) errors++;
    });
  }
  for (auto& client : clients) client.join();
  ASSERT_EQ(errors.load(), 0);

  // 96 writes (48 placements, 48 stops), every one committed...
  EXPECT_EQ(db.Query("SELECT count(*) FROM workspaces WHERE state = 'stopped'"),
            absl::StrCat(kClients));
  EXPECT_EQ(db.Query("SELECT COALESCE(sum(held_cpu_millis), 0) FROM nodes"), "0");
  // ...in fewer transactions than writes: some entry carries several.
  const std::string where = absl::StrCat(" FROM change_log WHERE seq > ", head_before,
                                         " AND 'workspace' = ANY(entities)");
  int entries = std::stoi(db.Query("SELECT count(*)" + where));
  int most = std::stoi(db.Query("SELECT max(cardinality(ids))" + where));
  std::printf("96 writes in %d group commits, up to %d in one\n", entries, most);
  EXPECT_LT(entries, 2 * kClients);
  EXPECT_GT(most, 1);

  // The batches are exported: size and statements per batch.
  std::string metrics = testing::HttpGet(server.metrics_port(), "/metrics");
  EXPECT_THAT(metrics, ::testing::HasSubstr("wsched_commit_batch_writes_count"));
  EXPECT_THAT(metrics, ::testing::HasSubstr("wsched_commit_batch_statements_sum"));
  // Three round trips per batch, every batch (no org here has a GPU quota).
  auto value_of = [&](const std::string& name) {
    size_t at = metrics.find("\n" + name + " ");
    return at == std::string::npos ? -1.0 : std::stod(metrics.substr(at + name.size() + 2));
  };
  const double batches = value_of("wsched_commit_batch_round_trips_count");
  EXPECT_GE(batches, entries);
  EXPECT_EQ(value_of("wsched_commit_batch_round_trips_sum"), 3 * batches);
  EXPECT_THAT(metrics, ::testing::HasSubstr("wsched_commit_batches_total{result=\"committed\"}"));
}

}  // namespace
}  // namespace wsched
