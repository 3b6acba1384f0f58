// MIG layouts by demand through the real server and PostgreSQL, with fake
// agents (docs/placement.md "Layouts by demand"): pending 3g work in a pool
// whose free GPU is cut 7x1g has that GPU cut anew by its agent and is
// placed on it; a GPU holding one slice is never handed the order.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/mig_layout.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;

// A node of pool h200-demand with one H200 cut as the pool starts it:
// seven 1g.18gb slices.
v1::NodeInfo DemandNode(const std::string& name) {
  testing::FakeNodeOptions options;
  options.model = "NVIDIA H200";
  options.gpus = 1;
  options.cpu_cores = 64;
  options.memory_gib = 512;
  v1::NodeInfo node = testing::FakeGpuNode(name, "h200-demand", options);
  testing::LayOutSlices(node, std::vector<std::string>(7, "1g.18gb"));
  return node;
}

// What the agent reports after carrying out `work`: the GPU cut exactly as
// ordered, every slice a new instance with a new UUID ("MIG-<node>-0-new-k").
void CarryOut(const v1::MigWork& work, v1::NodeInfo& node) {
  std::vector<core::MigLayoutSlice> layout;
  for (const auto& slice : work.slices()) layout.push_back({slice.profile(), slice.start()});
  testing::CutGpu(node, work.gpu_index(), layout, "new-");
}

class RelayoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<testing::ServerProcess>(testing::ServerConfig{
        db_.url(), testing::SourcePath("tests/fixtures/relayout-catalog.yaml")});
    ASSERT_TRUE(server_->started());
    inventory_ = v1::InventoryService::NewStub(server_->channel());
  }

  // One heartbeat of `node`'s agent, as its loop sends them.
  std::optional<v1::MigWork> Heartbeat(const std::string& node) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAgentToken);
    v1::HeartbeatRequest request;
    request.set_node_name(node);
    v1::HeartbeatResponse response;
    grpc::Status status = inventory_->Heartbeat(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_FALSE(response.reregister());
    if (!response.has_mig_work()) return std::nullopt;
    return response.mig_work();
  }

  // The agent's loop until the server hands `node` its order: heartbeats at
  // the agent's pace (the order is published a moment after the pending
  // reason names it), for at most ten seconds.
  std::optional<v1::MigWork> HeartbeatUntilWork(const std::string& node) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (auto work = Heartbeat(node)) return work;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return std::nullopt;
  }

  // Follows `id` until `done` holds for it (or the stream ends).
  v1::Workspace WatchUntil(const std::string& id,
                           const std::function<bool(const v1::Workspace&)>& done) {
    grpc::ClientContext watch;
    testing::Authorize(watch, testing::kControlPlaneToken);
    watch.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    v1::WatchWorkspaceRequest request;
    request.set_workspace_id(id);
    auto reader = v1::PlacementService::NewStub(server_->channel())->WatchWorkspace(&watch, request);
    v1::Workspace got;
    while (reader->Read(&got) && !done(got)) {
    }
    watch.TryCancel();
    return got;
  }

  testing::TestDatabase db_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::InventoryService::Stub> inventory_;
};

TEST_F(RelayoutTest, PendingThreeGWorkHasAnIdleGpuCutAnewAndTheHeldGpuIsNeverTouched) {
  std::map<std::string, v1::NodeInfo> nodes = {{"node-a", DemandNode("node-a")},
                                               {"node-b", DemandNode("node-b")}};
  for (const auto& [name, node] : nodes) testing::RegisterNode(server_->channel(), node);

  v1::Workspace small;
  ASSERT_TRUE(testing::PlaceAs(server_->channel(), "small", "mig-1g", &small).ok());
  ASSERT_EQ(small.state(), v1::WORKSPACE_STATE_PLACED) << small.pending_reason();
  const std::string held = small.node_name();
  const std::string idle = held == "node-a" ? "node-b" : "node-a";

  // No free slot of either GPU holds a 3g: the idle GPU is cut anew.
  v1::Workspace mid;
  ASSERT_TRUE(testing::PlaceAs(server_->channel(), "mid", "mig-3g", &mid).ok());
  ASSERT_EQ(mid.state(), v1::WORKSPACE_STATE_PENDING);
  mid = WatchUntil("mid", [](const v1::Workspace& w) {
    return w.pending().code() == v1::PENDING_REASON_CODE_MIG_RELAYOUT;
  });
  ASSERT_EQ(mid.pending().code(), v1::PENDING_REASON_CODE_MIG_RELAYOUT) << mid.pending_reason();
  EXPECT_THAT(mid.pending_reason(),
              HasSubstr(absl::StrCat("re-laying out GPU 0 on ", idle, " for 3g.71gb")));

  std::optional<v1::MigWork> work = HeartbeatUntilWork(idle);
  ASSERT_TRUE(work.has_value()) << "no MIG work handed to " << idle;
  EXPECT_EQ(work->gpu_index(), 0);
  EXPECT_EQ(work->gpu_uuid(), absl::StrCat("GPU-", idle, "-0"));
  EXPECT_EQ(work->for_profile(), "3g.71gb");
  std::vector<std::string> profiles;
  for (const auto& slice : work->slices()) profiles.push_back(slice.profile());
  EXPECT_THAT(profiles, ::testing::Contains("3g.71gb"));
  // The GPU holding a slice is never handed the order.
  EXPECT_FALSE(Heartbeat(held).has_value());
  EXPECT_EQ(db_.Query("SELECT node || '/' || gpu_index FROM mig_relayouts"),
            absl::StrCat(idle, "/0"));

  // The agent cuts the GPU and registers its slices: the 3g is placed there.
  CarryOut(*work, nodes[idle]);
  testing::RegisterNode(server_->channel(), nodes[idle]);
  mid = WatchUntil("mid", [](const v1::Workspace& w) {
    return w.state() == v1::WORKSPACE_STATE_PLACED;
  });
  ASSERT_EQ(mid.state(), v1::WORKSPACE_STATE_PLACED) << mid.pending_reason();
  EXPECT_EQ(mid.node_name(), idle);
  EXPECT_EQ(mid.slice().profile(), "3g.71gb");
  EXPECT_THAT(mid.slice().uuid(), HasSubstr("-new-"));
  // The 1g stayed where it was, on the GPU nobody cut.
  EXPECT_EQ(db_.Query("SELECT string_agg(workspace_id || '@' || node_name, ',' ORDER BY "
                      "workspace_id) FROM gpu_holds"),
            absl::StrCat("mid@", idle, ",small@", held));
  // Its GPU holds the 3g now: the order, done, is never handed out again.
  EXPECT_FALSE(Heartbeat(idle).has_value());
}

}  // namespace
}  // namespace wsched
