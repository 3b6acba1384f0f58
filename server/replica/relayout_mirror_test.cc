// The replica mirror's MIG re-layouts: the leader's step on the mirror, what
// a follower is told, and what a node's agent is handed.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/test_nodes.h"
#include "server/replica/replica_mirror.h"

namespace wsched::replica {
namespace {

using placement::RelayoutOrder;
using placement::testing::FakeGpuNode;
using placement::testing::GpuPool;
using placement::testing::LayOutSlices;
using placement::testing::SliceClass;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);
const std::vector<std::string> kSevenSmall(7, "1g.18gb");

class RelayoutMirrorTest : public ::testing::Test {
 protected:
  RelayoutMirrorTest()
      : usage_([] { return kNow; }),
        mirror_({&watches_, &settings_, &usage_, &drains_}, {}, [] { return kNow; }) {}

  // The H200 by_demand pool with `nodes` (one GPU each, as `layout`) and a
  // pending 3g workspace per entry of `pending`.
  void Load(const std::vector<std::string>& nodes, const std::vector<std::string>& layout,
            const std::vector<std::string>& pending) {
    StateStore::Everything all;
    all.catalog.pools = {GpuPool("gpu-h200", "h200")};
    all.catalog.pools[0].mig.kind = core::MigLayoutKind::kByDemand;
    all.catalog.classes = {SliceClass("mid", {"3g.71gb"}), SliceClass("small", {"1g.18gb"})};
    for (const std::string& name : nodes) {
      store::StoredNode node;
      node.info = FakeGpuNode(name, "gpu-h200", "h200", 1);
      LayOutSlices(node.info, layout);
      node.state = core::NodeState::kReady;
      node.driver_state = core::DriverState::kReady;
      node.version = 1;
      all.nodes.push_back(std::move(node));
    }
    for (size_t i = 0; i < pending.size(); ++i) {
      store::WorkspaceRow row;
      row.workspace.id = pending[i];
      row.workspace.class_id = "mid";
      row.workspace.created_at = kNow - absl::Minutes(1) + absl::Seconds(i);
      row.version = 1;
      all.active.push_back(std::move(row));
    }
    catalog_ = all.catalog;
    mirror_.Replace(all);
    drains_.Take();
  }

  ReplicaMirror::RelayoutStep Step(absl::Time now = kNow) {
    return mirror_.StepRelayouts(now, absl::Minutes(5), {});
  }

  WatchHub watches_;
  SettingsCache settings_;
  usage::UsageAccounting usage_;
  DrainRequests drains_;
  ReplicaMirror mirror_;
  core::Catalog catalog_;
};

TEST_F(RelayoutMirrorTest, TheLeadersStepOrdersMarksAndHandsOut) {
  Load({"node-a"}, kSevenSmall, {"w1"});
  ReplicaMirror::RelayoutStep step = Step();
  ASSERT_THAT(step.orders, SizeIs(1));
  EXPECT_EQ(step.planned, 1u);
  EXPECT_EQ(step.orders[0].node, "node-a");
  EXPECT_EQ(mirror_.Relayouts(), step.orders);
  EXPECT_EQ(mirror_.View()->relayouts, step.orders) << "reads explain with them too";
  EXPECT_TRUE(drains_.Take().pools.contains("gpu-h200"));

  // Handed to the agent only once the publish stored it.
  EXPECT_FALSE(mirror_.MigWorkFor("node-a").has_value());
  mirror_.MarkPublished(step.orders);
  std::optional<ReplicaMirror::MigWork> work = mirror_.MigWorkFor("node-a");
  ASSERT_TRUE(work.has_value());
  EXPECT_EQ(work->gpu_uuid, "GPU-node-a-0");
  EXPECT_EQ(work->order, step.orders[0]);
  EXPECT_FALSE(mirror_.MigWorkFor("node-b").has_value());

  // The pending workspace is told, and no 1g of the GPU is handed out.
  mirror_.ExplainQueue({.now = kNow});
  EXPECT_THAT(mirror_.FindQueued("w1")->entry.reason,
              HasSubstr("re-laying out GPU 0 on node-a for 3g.71gb"));
  ReplicaMirror::HeldDecision held =
      mirror_.DecideAndHold(*catalog_.FindClass("small"), catalog_, "w2");
  EXPECT_TRUE(std::holds_alternative<placement::NotNow>(held.decision));

  // A second step changes nothing: the order serves the demand.
  step = Step(kNow + absl::Seconds(1));
  EXPECT_THAT(step.ended, IsEmpty());
  EXPECT_EQ(step.planned, 0u);
  EXPECT_THAT(step.orders, SizeIs(1));
}

TEST_F(RelayoutMirrorTest, ADoneOrderEndsAndItsSlicesServe) {
  Load({"node-a"}, kSevenSmall, {"w1"});
  ASSERT_THAT(Step().orders, SizeIs(1));
  // The node reports the layout (a full reload here; the feed in life).
  Load({"node-a"}, {"1g.18gb", "1g.18gb", "1g.18gb", "1g.18gb", "3g.71gb"}, {"w1"});
  ReplicaMirror::RelayoutStep step = Step(kNow + absl::Seconds(3));
  ASSERT_THAT(step.ended, SizeIs(1));
  EXPECT_EQ(step.ended[0].second, "done");
  EXPECT_THAT(step.orders, IsEmpty()) << "its 3g serves w1: no other order";
  EXPECT_FALSE(mirror_.MigWorkFor("node-a").has_value());
  ReplicaMirror::HeldDecision held =
      mirror_.DecideAndHold(*catalog_.FindClass("mid"), catalog_, "w1");
  EXPECT_TRUE(std::holds_alternative<placement::Placed>(held.decision));
}

TEST_F(RelayoutMirrorTest, AGpuThisReplicaSeesHeldIsNeverHandedOut) {
  Load({"node-a"}, kSevenSmall, {});
  ReplicaMirror::HeldDecision held =
      mirror_.DecideAndHold(*catalog_.FindClass("small"), catalog_, "w-small");
  ASSERT_TRUE(std::holds_alternative<placement::Placed>(held.decision));
  // An order the leader published before it saw this replica's hold.
  mirror_.SetRelayouts({{.node = "node-a",
                         .pool = "gpu-h200",
                         .gpu_index = 0,
                         .layout = {{"3g.71gb", 0}, {"3g.71gb", 4}},
                         .for_profile = "3g.71gb",
                         .ordered_at = kNow}});
  EXPECT_THAT(mirror_.Relayouts(), SizeIs(1));
  EXPECT_FALSE(mirror_.MigWorkFor("node-a").has_value());
  // And a leader's step drops it.
  ReplicaMirror::RelayoutStep step = Step();
  ASSERT_THAT(step.ended, SizeIs(1));
  EXPECT_THAT(step.ended[0].second, HasSubstr("holds work of w-small"));
  EXPECT_THAT(mirror_.Relayouts(), IsEmpty());
}

TEST_F(RelayoutMirrorTest, AFollowerTakesThePublishedOrdersAndTheLeaderDropsStaleOnes) {
  Load({"node-a", "node-b"}, kSevenSmall, {});
  const RelayoutOrder published{.node = "node-a",
                                .pool = "gpu-h200",
                                .gpu_index = 0,
                                .layout = {{"3g.71gb", 0}, {"3g.71gb", 4}},
                                .for_profile = "3g.71gb",
                                .ordered_at = kNow};
  mirror_.SetRelayouts({published});
  EXPECT_TRUE(drains_.Take().pools.contains("gpu-h200"));
  ASSERT_TRUE(mirror_.MigWorkFor("node-a").has_value());
  // Its 1g slices are out of play: the first 1g goes to node-b.
  ReplicaMirror::HeldDecision held =
      mirror_.DecideAndHold(*catalog_.FindClass("small"), catalog_, "w-small");
  ASSERT_TRUE(std::holds_alternative<placement::Placed>(held.decision));
  EXPECT_EQ(std::get<placement::Placed>(held.decision).node, "node-b");

  // node-a leaves: the leader's next step drops the order.
  Load({"node-b"}, kSevenSmall, {});
  ReplicaMirror::RelayoutStep step = Step();
  ASSERT_THAT(step.ended, SizeIs(1));
  EXPECT_EQ(step.ended[0].second, "node node-a is gone");
  EXPECT_THAT(mirror_.Relayouts(), IsEmpty());
  EXPECT_FALSE(mirror_.MigWorkFor("node-a").has_value());
}

}  // namespace
}  // namespace wsched::replica
