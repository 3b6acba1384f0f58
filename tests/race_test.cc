// Two server processes on one database, many concurrent clients, a pool too
// small for the demand: no GPU is ever held twice, and every successful
// answer is what the database holds.
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched {
namespace {

TEST(Race, TwoReplicasNeverDoubleAllocateAGpu) {
  testing::TestDatabase db;
  testing::ServerProcess a({db.url(), testing::SourcePath("classes/saas.yaml")});
  ASSERT_TRUE(a.started());
  testing::ServerProcess b({db.url(), testing::SourcePath("classes/saas.yaml")});
  ASSERT_TRUE(b.started());
  // 16 H100 GPUs in all, registered through replica A only.
  testing::RegisterNode(a.channel(), testing::FakeGpuNode("race-1", "gpu-h100"));
  testing::RegisterNode(a.channel(), testing::FakeGpuNode("race-2", "gpu-h100"));

  constexpr int kClients = 8;
  constexpr int kPerClient = 6;  // 48 one-GPU workspaces for 16 GPUs.
  std::mutex mu;
  std::map<std::string, std::pair<std::string, std::vector<std::string>>> placed;  // id -> node, uuids
  std::atomic<int> pending{0}, errors{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      auto stub = v1::PlacementService::NewStub(c % 2 == 0 ? a.channel() : b.channel());
      for (int i = 0; i < kPerClient; ++i) {
        grpc::ClientContext context;
        testing::Authorize(context, testing::kControlPlaneToken);
        v1::PlaceWorkspaceRequest request;
        request.set_workspace_id("ws-" + std::to_string(c) + "-" + std::to_string(i));
        request.set_org_id("org-" + std::to_string(c % 3));
        request.set_project_id("p");
        request.set_user_id("u");
        request.set_class_id("gpu-1x");
        v1::Workspace response;
        grpc::Status status = stub->PlaceWorkspace(&context, request, &response);
        if (!status.ok()) {
          errors++;
          ADD_FAILURE() << request.workspace_id() << ": " << status.error_message();
          continue;
        }
        if (response.state() == v1::WORKSPACE_STATE_PENDING) {
          pending++;
          continue;
        }
        std::vector<std::string> uuids;
        for (const auto& gpu : response.gpus()) uuids.push_back(gpu.uuid());
        std::lock_guard<std::mutex> lock(mu);
        placed[response.id()] = {response.node_name(), uuids};
      }
    });
  }
  for (auto& client : clients) client.join();

  EXPECT_EQ(errors.load(), 0);
  EXPECT_LE(placed.size(), 16u);
  EXPECT_EQ(placed.size() + pending.load(), static_cast<size_t>(kClients * kPerClient));
  // No GPU appears in two successful answers.
  std::set<std::string> answered;
  for (const auto& [id, where] : placed) {
    for (const auto& uuid : where.second) EXPECT_TRUE(answered.insert(uuid).second) << uuid;
  }
  // Every successful answer is what the database holds. (Pending work may
  // have been placed since; those rows are extra, never conflicting.)
  for (const auto& [id, where] : placed) {
    EXPECT_EQ(db.Query("SELECT node_name FROM workspaces WHERE id = '" + id + "'"), where.first);
    EXPECT_EQ(db.Query("SELECT workspace_id FROM gpu_holds WHERE gpu_uuid = '" + where.second[0] + "'"),
              id);
  }
  EXPECT_LE(std::stoi(db.Query("SELECT count(*) FROM gpu_holds")), 16);
  // What the schema cannot guarantee (one statement: one snapshot, while the
  // queue may still be placing): every hold belongs to a placed workspace,
  // and each node's held capacity is the sum of the workspaces placed on it.
  EXPECT_EQ(db.Query("SELECT count(*) FROM gpu_holds h JOIN workspaces w ON w.id = h.workspace_id "
                     "WHERE w.state <> 'placed'"),
            "0");
  EXPECT_EQ(db.Query("SELECT count(*) FROM nodes n LEFT JOIN (SELECT node_name, sum(cpu_millis) AS cpu, "
                     "sum(memory_bytes) AS mem FROM workspaces WHERE state = 'placed' GROUP BY node_name) s "
                     "ON s.node_name = n.name "
                     "WHERE n.held_cpu_millis <> COALESCE(s.cpu, 0) OR n.held_memory_bytes <> COALESCE(s.mem, 0)"),
            "0");
}

}  // namespace
}  // namespace wsched
