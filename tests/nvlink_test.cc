// Linked GPUs through the real server and PostgreSQL: a node reports its
// NVLink pairs, single-GPU workspaces keep free pairs whole, a class that
// requires NVLink gets a linked pair (and says so) or waits with a reason
// that names the node, and is placed once a pair is free again.
#include <chrono>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::ElementsAre;

// GPUs 0-1 and 2-3 joined by NVLink (NV4), every other pair through the
// host, as `nvidia-smi topo -m` shows a PCIe node with two NVLink bridges.
v1::NodeInfo BridgedNode(const std::string& name) {
  testing::FakeNodeOptions options;
  options.gpus = 4;
  options.cpu_cores = 32;
  options.memory_gib = 256;
  v1::NodeInfo node = testing::FakeGpuNode(name, "h100-pairs", options);
  for (v1::Gpu& gpu : *node.mutable_gpus()) {
    for (int peer = 0; peer < 4; ++peer) {
      if (peer == gpu.index()) continue;
      v1::GpuLink* link = gpu.add_links();
      link->set_peer(peer);
      bool paired = peer / 2 == gpu.index() / 2;
      link->set_kind(paired ? v1::GPU_LINK_KIND_NVLINK : v1::GPU_LINK_KIND_SYS);
      link->set_nvlinks(paired ? 4 : 0);
    }
  }
  return node;
}

class NvlinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<testing::ServerProcess>(testing::ServerConfig{
        db_.url(), testing::SourcePath("tests/fixtures/nvlink-catalog.yaml")});
    ASSERT_TRUE(server_->started());
    stub_ = v1::PlacementService::NewStub(server_->channel());
    testing::RegisterNode(server_->channel(), BridgedNode("b1"));
  }

  v1::Workspace Place(const std::string& id, const std::string& cls) {
    v1::Workspace out;
    grpc::Status status = testing::PlaceAs(server_->channel(), id, cls, &out);
    EXPECT_TRUE(status.ok()) << id << ": " << status.error_message();
    return out;
  }

  void Stop(const std::string& id) {
    v1::Workspace out;
    EXPECT_TRUE(testing::StopAs(server_->channel(), id, &out).ok()) << id;
  }

  static std::vector<int> Indices(const v1::Workspace& w) {
    std::vector<int> out;
    for (const auto& gpu : w.gpus()) out.push_back(gpu.index());
    return out;
  }

  testing::TestDatabase db_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::PlacementService::Stub> stub_;
};

TEST_F(NvlinkTest, PairsStayWholeAndARequiredPairWaitsForOne) {
  EXPECT_EQ(db_.Query("SELECT info->'gpus'->0->'links'->0->>'kind' FROM nodes WHERE name = 'b1'"),
            "GPU_LINK_KIND_NVLINK")
      << "the links are stored with the node";

  // The second single GPU goes to the first one's peer: pair 2-3 stays whole.
  EXPECT_THAT(Indices(Place("one-a", "one")), ElementsAre(0));
  EXPECT_THAT(Indices(Place("one-b", "one")), ElementsAre(1));
  v1::Workspace pair = Place("pair-a", "pair");
  ASSERT_EQ(pair.state(), v1::WORKSPACE_STATE_PLACED) << pair.pending_reason();
  EXPECT_THAT(Indices(pair), ElementsAre(2, 3));
  EXPECT_EQ(pair.gpu_link(), v1::GPU_LINK_KIND_NVLINK);
  EXPECT_EQ(Place("one-a", "one").gpu_link(), v1::GPU_LINK_KIND_UNSPECIFIED) << "one GPU";

  // Leave GPUs 0 and 3 free: two GPUs, no linked pair.
  Stop("pair-a");
  EXPECT_THAT(Indices(Place("one-c", "one")), ElementsAre(2));
  Stop("one-a");
  v1::Workspace waiting = Place("pair-b", "pair");
  ASSERT_EQ(waiting.state(), v1::WORKSPACE_STATE_PENDING);
  EXPECT_EQ(waiting.pending().code(), v1::PENDING_REASON_CODE_GPUS_NOT_LINKED);
  EXPECT_EQ(waiting.pending().node(), "b1");
  EXPECT_EQ(waiting.pending_reason(),
            "2 GPUs free on node b1 but no NVLink-connected set of 2 (the class has gpu.links: "
            "nvlink_required)");

  // GPU 2 is freed: 2-3 is a pair again and the waiting workspace gets it.
  grpc::ClientContext watch;
  testing::Authorize(watch, testing::kControlPlaneToken);
  watch.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  v1::WatchWorkspaceRequest request;
  request.set_workspace_id("pair-b");
  auto reader = stub_->WatchWorkspace(&watch, request);
  v1::Workspace placed;
  ASSERT_TRUE(reader->Read(&placed)) << "the watch starts with the workspace as it is";
  Stop("one-c");
  while (placed.state() != v1::WORKSPACE_STATE_PLACED && reader->Read(&placed)) {
  }
  ASSERT_EQ(placed.state(), v1::WORKSPACE_STATE_PLACED) << placed.pending_reason();
  EXPECT_THAT(Indices(placed), ElementsAre(2, 3));
  watch.TryCancel();
  EXPECT_EQ(db_.Query("SELECT string_agg(gpu_index::text, ',' ORDER BY gpu_index) FROM gpu_holds "
                      "WHERE workspace_id = 'pair-b'"),
            "2,3");
}

}  // namespace
}  // namespace wsched
