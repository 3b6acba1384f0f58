// NodeInventory's in-memory paths against a fake mirror and a fake clock:
// what a heartbeat that changes nothing costs, and how the agents' GPU
// samples and the mirror's holders come together. The paths that write go
// through PostgreSQL and are tested through the server (tests/inventory_test.cc).
#include "server/inventory/node_inventory.h"

#include "gtest/gtest.h"
#include "server/core/driver_readiness.h"
#include "server/placement/test_nodes.h"

namespace wsched::inventory {
namespace {

using placement::testing::FakeGpuNode;

class FakeMirror : public NodeInventory::Mirror {
 public:
  std::shared_ptr<const core::Catalog> CurrentCatalog() const override { return catalog; }
  std::shared_ptr<const replica::ClusterView> View() const override {
    views++;
    return view;
  }
  Node MirroredNode(const std::string& name) const override {
    Node out;
    auto it = nodes.find(name);
    if (it == nodes.end()) return out;
    out.stored = it->second;
    out.holders = holders;
    return out;
  }

  std::shared_ptr<const core::Catalog> catalog = std::make_shared<const core::Catalog>();
  std::shared_ptr<const replica::ClusterView> view = std::make_shared<const replica::ClusterView>();
  std::map<std::string, std::shared_ptr<const store::StoredNode>> nodes;
  usage::GpuHolders holders;
  mutable int views = 0;  // View() calls: a heartbeat must make none.
};

// A ready node as the mirror holds it, its driver judged as a heartbeat
// would judge it (no policy), so an empty report changes nothing.
std::shared_ptr<const store::StoredNode> Mirrored(const core::NodeInfo& info,
                                                  const core::Catalog& catalog) {
  auto node = std::make_shared<store::StoredNode>();
  node->info = info;
  node->state = core::NodeState::kReady;
  node->driver_history = core::HistoryOnReport(catalog.driver_policy, info, {}, false);
  core::DriverReadiness readiness =
      core::EvaluateDriver(catalog.driver_policy, info, node->driver_history);
  node->driver_state = readiness.state;
  node->driver_detail = readiness.detail;
  return node;
}

class NodeInventoryTest : public ::testing::Test {
 protected:
  NodeInventoryTest()
      : usage_([this] { return now_; }),
        inventory_({.mirror = &mirror_, .usage = &usage_, .metrics = &metrics_}, {},
                   [this] { return now_; }) {}

  FakeMirror mirror_;
  metrics::Metrics metrics_;
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  usage::UsageAccounting usage_;
  // No database, feed or drains: a path that would catch up or drain
  // fails with FAILED_PRECONDITION instead.
  NodeInventory inventory_;
};

TEST_F(NodeInventoryTest, AHeartbeatThatChangesNothingIsLivenessOnlyAndChargesItsHolder) {
  mirror_.nodes["g1"] = Mirrored(FakeGpuNode("g1", "gpu-h100", "h100", 2), *mirror_.catalog);
  mirror_.holders["GPU-g1-0"] = {"w1", "gpu-1x", 5};
  HeartbeatInput beat;
  beat.node_name = "g1";
  beat.usage = {{"GPU-g1-0", 100, 1 << 20}};
  absl::StatusOr<HeartbeatResult> result = inventory_.Heartbeat(beat);
  // No database touched and no catch-up: nothing to write.
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->reregister);
  EXPECT_EQ(result->pool, "gpu-h100");
  // A minute of full use of a held GPU is charged to its holder's class.
  now_ += absl::Minutes(1);
  beat.usage = {{"GPU-g1-0", 100, 1 << 20}};
  ASSERT_TRUE(inventory_.Heartbeat(beat).ok());
  auto seconds = usage_.SecondsByPoolClass();
  ASSERT_TRUE(seconds.contains(usage::PoolClass("gpu-h100", "gpu-1x")));
  EXPECT_DOUBLE_EQ(seconds[usage::PoolClass("gpu-h100", "gpu-1x")].held, 60);
  EXPECT_DOUBLE_EQ(seconds[usage::PoolClass("gpu-h100", "gpu-1x")].busy, 60);
  // New samples alone touch neither the database nor the cluster view.
  EXPECT_EQ(mirror_.views, 0);
}

TEST_F(NodeInventoryTest, GpuHealthAndUsageComeFromTheMirrorAndTheAgentsSamples) {
  core::NodeInfo info = FakeGpuNode("g1", "gpu-h100", "h100", 2);
  info.gpus[1].healthy = false;
  info.gpus[1].health_reason = "XID 79";
  mirror_.nodes["g1"] = Mirrored(info, *mirror_.catalog);
  auto view = std::make_shared<replica::ClusterView>();
  ASSERT_TRUE(view->snapshot.UpsertNode(info, core::NodeState::kReady, core::DriverState::kReady).ok());
  ASSERT_TRUE(view->snapshot.Hold("w1", "g1", {0}, {}).ok());
  mirror_.view = view;

  auto health = inventory_.GpuHealthOn("g1");
  EXPECT_TRUE(health["GPU-g1-0"].healthy);
  EXPECT_FALSE(health["GPU-g1-1"].healthy);
  EXPECT_EQ(health["GPU-g1-1"].reason, "XID 79");
  EXPECT_TRUE(inventory_.GpuHealthOn("unknown").empty());

  mirror_.holders["GPU-g1-0"] = {"w1", "gpu-1x", 5};
  HeartbeatInput beat;
  beat.node_name = "g1";
  // A UUID the node does not have is nobody's sample.
  beat.usage = {{"GPU-g1-0", 40, 2 << 20}, {"GPU-g1-1", 0, 0}, {"GPU-elsewhere", 99, 0}};
  ASSERT_TRUE(inventory_.Heartbeat(beat).ok());
  auto latest = usage_.LatestByPoolClass();
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest[usage::PoolClass("gpu-h100", "gpu-1x")].gpus, 1);
  EXPECT_DOUBLE_EQ(latest[usage::PoolClass("gpu-h100", "gpu-1x")].ratio_sum, 0.4);
  EXPECT_EQ(latest[usage::PoolClass("gpu-h100", "gpu-1x")].memory_used_bytes, 2 << 20);
  EXPECT_EQ(latest[usage::PoolClass("gpu-h100", "")].gpus, 1);
}

TEST_F(NodeInventoryTest, ANodeTheMirrorDoesNotKnowGoesToTheDatabase) {
  HeartbeatInput beat;
  beat.node_name = "never-seen";
  // Without a database the write path says so instead of guessing.
  absl::StatusOr<HeartbeatResult> result = inventory_.Heartbeat(beat);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace wsched::inventory
