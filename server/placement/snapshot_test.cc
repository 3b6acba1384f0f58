#include "server/placement/snapshot.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/test_nodes.h"

namespace wsched::placement {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::FakeCpuNode;
using testing::FakeGpuNode;
using testing::kGi;

constexpr auto kReady = core::NodeState::kReady;
constexpr auto kDriverReady = core::DriverState::kReady;

Resources Small() { return {8000, 64 * kGi, 0, 0}; }

class SnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(snapshot_.UpsertNode(FakeGpuNode("g1", "gpu"), kReady, kDriverReady).ok());
  }
  int FreeGpus() const { return snapshot_.FindNode("g1")->free_gpus[0]; }
  Snapshot snapshot_;
};

TEST_F(SnapshotTest, TracksNodeAndIndex) {
  const SnapshotNode* node = snapshot_.FindNode("g1");
  ASSERT_NE(node, nullptr);
  EXPECT_TRUE(node->schedulable);
  EXPECT_EQ(FreeGpus(), 8);
  EXPECT_TRUE(node->gpus[0].passthrough_safe) << node->gpus[0].passthrough_reason;
  ASSERT_NE(snapshot_.ReadyIndex("gpu"), nullptr);
  EXPECT_EQ(snapshot_.ReadyIndex("gpu")->size(), 1u);
  EXPECT_EQ(snapshot_.ReadyIndex("gpu")->MaxFreeGpus(GpuView::kContainer), 8);
  EXPECT_EQ(snapshot_.ReadyIndex("cpu"), nullptr);
}

// Pending reasons read it from a reader's copy, without the scheduler.
TEST_F(SnapshotTest, StateSinceIsKeptPerNodeAndTravelsWithAReadersCopy) {
  EXPECT_EQ(snapshot_.FindNode("g1")->state_since, absl::InfinitePast());
  const absl::Time since = absl::FromUnixSeconds(1700000000);
  ASSERT_TRUE(snapshot_.UpsertNode(FakeGpuNode("g1", "gpu"), kReady, kDriverReady, since).ok());
  EXPECT_EQ(snapshot_.FindNode("g1")->state_since, since);
  Snapshot view = snapshot_.NodesOnly();
  // A later change reaches the live snapshot, not the copy already taken.
  ASSERT_TRUE(snapshot_.UpsertNode(FakeGpuNode("g1", "gpu"), kReady, kDriverReady,
                                   since + absl::Minutes(4)).ok());
  EXPECT_EQ(view.FindNode("g1")->state_since, since);
  EXPECT_EQ(snapshot_.FindNode("g1")->state_since, since + absl::Minutes(4));
}

TEST_F(SnapshotTest, HoldAndReleaseAreIdempotent) {
  ASSERT_TRUE(snapshot_.Hold("w1", "g1", {3, 2}, Small()).ok());
  ASSERT_TRUE(snapshot_.Hold("w1", "g1", {2, 3}, Small()).ok());  // Same again: fine.
  EXPECT_EQ(FreeGpus(), 6);
  EXPECT_EQ(snapshot_.FindNode("g1")->free.cpu_millis, 120000);
  EXPECT_EQ(snapshot_.FindNode("g1")->gpus[2].holder, "w1");
  EXPECT_EQ(snapshot_.ReadyIndex("gpu")->TotalFreeGpus(GpuView::kContainer), 6);

  std::optional<HoldRecord> released = snapshot_.Release("w1");
  ASSERT_TRUE(released.has_value());
  EXPECT_EQ(released->node, "g1");
  EXPECT_THAT(released->gpu_indices, ElementsAre(2, 3));
  EXPECT_EQ(released->resources, Small());
  EXPECT_EQ(snapshot_.Release("w1"), std::nullopt);
  EXPECT_EQ(FreeGpus(), 8);
  EXPECT_EQ(snapshot_.FindNode("g1")->free.cpu_millis, 128000);
  EXPECT_EQ(snapshot_.hold_count(), 0u);
}

TEST_F(SnapshotTest, HoldsSurviveTheirNodeLeavingAndComingBackWithTheRulesKept) {
  ASSERT_TRUE(snapshot_.UpsertNode(FakeGpuNode("g2", "gpu"), kReady, kDriverReady).ok());
  ASSERT_TRUE(snapshot_.Hold("w1", "g1", {0, 1}, Small()).ok());
  ASSERT_TRUE(snapshot_.Hold("w2", "g2", {5}, Small()).ok());
  EXPECT_TRUE(snapshot_.CheckInvariants().ok()) << snapshot_.CheckInvariants();
  ASSERT_TRUE(snapshot_.RemoveNode("g1"));
  EXPECT_TRUE(snapshot_.CheckInvariants().ok()) << snapshot_.CheckInvariants();
  ASSERT_TRUE(snapshot_.UpsertNode(FakeGpuNode("g1", "gpu"), kReady, kDriverReady).ok());
  EXPECT_TRUE(snapshot_.CheckInvariants().ok()) << snapshot_.CheckInvariants();
  EXPECT_EQ(snapshot_.FindNode("g1")->gpus[0].holder, "w1");
  ASSERT_TRUE(snapshot_.Release("w1").has_value());
  ASSERT_TRUE(snapshot_.Release("w2").has_value());
  EXPECT_TRUE(snapshot_.CheckInvariants().ok()) << snapshot_.CheckInvariants();
  EXPECT_EQ(snapshot_.FindNode("g1")->held, Resources());
}

TEST_F(SnapshotTest, RefusesInconsistentHolds) {
  ASSERT_TRUE(snapshot_.Hold("w1", "g1", {0}, Small()).ok());
  absl::Status taken = snapshot_.Hold("w2", "g1", {1, 0}, Small());
  EXPECT_EQ(taken.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(taken.message(), HasSubstr("held by workspace w1"));
  EXPECT_EQ(FreeGpus(), 7);  // Nothing of the refused hold applied.
  EXPECT_EQ(snapshot_.Hold("w1", "g1", {1}, Small()).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(snapshot_.Hold("w3", "nope", {}, Small()).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(snapshot_.Hold("w3", "g1", {9}, Small()).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(snapshot_.Hold("w3", "g1", {4, 4}, Small()).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(SnapshotTest, StateChangesLeaveAndRejoinTheIndex) {
  ASSERT_TRUE(snapshot_.SetNodeState("g1", core::NodeState::kCordoned).ok());
  EXPECT_TRUE(snapshot_.ReadyIndex("gpu")->empty());
  EXPECT_EQ(snapshot_.PoolNodeCount("gpu"), 1);
  ASSERT_TRUE(snapshot_.SetNodeState("g1", kReady).ok());
  EXPECT_EQ(snapshot_.ReadyIndex("gpu")->size(), 1u);
  ASSERT_TRUE(snapshot_.SetDriverState("g1", core::DriverState::kNeedsDriver).ok());
  EXPECT_TRUE(snapshot_.ReadyIndex("gpu")->empty());
  EXPECT_EQ(snapshot_.SetNodeState("nope", kReady).code(), absl::StatusCode::kNotFound);
}

TEST_F(SnapshotTest, HoldsSurviveHeartbeatsAndNodeReadd) {
  ASSERT_TRUE(snapshot_.Hold("w1", "g1", {5}, Small()).ok());
  core::NodeInfo changed = FakeGpuNode("g1", "gpu");
  changed.kernel_version = "6.1.0-20-amd64";
  ASSERT_TRUE(snapshot_.UpsertNode(changed, kReady, kDriverReady).ok());
  EXPECT_EQ(snapshot_.FindNode("g1")->gpus[5].holder, "w1");
  EXPECT_EQ(FreeGpus(), 7);

  EXPECT_TRUE(snapshot_.RemoveNode("g1"));
  EXPECT_FALSE(snapshot_.RemoveNode("g1"));
  EXPECT_EQ(snapshot_.ReadyIndex("gpu"), nullptr);
  EXPECT_NE(snapshot_.FindHold("w1"), nullptr);
  ASSERT_TRUE(snapshot_.UpsertNode(FakeGpuNode("g1", "gpu"), kReady, kDriverReady).ok());
  EXPECT_EQ(snapshot_.FindNode("g1")->gpus[5].holder, "w1");
  EXPECT_EQ(snapshot_.FindNode("g1")->free.cpu_millis, 120000);
  EXPECT_TRUE(snapshot_.Release("w1").has_value());
  EXPECT_EQ(FreeGpus(), 8);
}

TEST_F(SnapshotTest, MovingPoolsMovesTheIndexEntry) {
  ASSERT_TRUE(snapshot_.UpsertNode(FakeGpuNode("g1", "gpu2"), kReady, kDriverReady).ok());
  EXPECT_EQ(snapshot_.ReadyIndex("gpu"), nullptr);
  EXPECT_EQ(snapshot_.ReadyIndex("gpu2")->size(), 1u);
}

TEST_F(SnapshotTest, CopiesAreIndependent) {
  Snapshot copy = snapshot_;
  ASSERT_TRUE(copy.Hold("w1", "g1", {0}, Small()).ok());
  EXPECT_EQ(FreeGpus(), 8);
  EXPECT_EQ(copy.FindNode("g1")->free_gpus[0], 7);
  EXPECT_EQ(copy.ReadyIndex("gpu")->TotalFreeGpus(GpuView::kContainer), 7);
}

// Copies share nodes and indexes until one side changes them; every kind
// of change on either side leaves the other as it was.
TEST_F(SnapshotTest, CopiesStayIndependentThroughEveryKindOfChange) {
  ASSERT_TRUE(snapshot_.UpsertNode(FakeCpuNode("c1", "cpu"), kReady, kDriverReady).ok());
  ASSERT_TRUE(snapshot_.Hold("w1", "g1", {0}, Small()).ok());
  const Snapshot before = snapshot_;
  const SnapshotNode* shared_c1 = before.FindNode("c1");
  ASSERT_TRUE(snapshot_.Hold("w2", "g1", {1}, Small()).ok());
  ASSERT_TRUE(snapshot_.Release("w1").has_value());
  ASSERT_TRUE(snapshot_.SetNodeState("c1", core::NodeState::kCordoned).ok());
  ASSERT_TRUE(snapshot_.UpsertNode(FakeGpuNode("g2", "gpu"), kReady, kDriverReady).ok());
  ASSERT_TRUE(snapshot_.UpsertNode(FakeGpuNode("g1", "gpu2"), kReady, kDriverReady).ok());
  EXPECT_TRUE(snapshot_.RemoveNode("c1"));

  EXPECT_EQ(before.FindNode("g1")->gpus[0].holder, "w1");
  EXPECT_EQ(before.FindNode("g1")->gpus[1].holder, "");
  EXPECT_EQ(before.FindNode("g1")->free_gpus[0], 7);
  EXPECT_EQ(before.FindNode("g1")->info.pool, "gpu");
  EXPECT_EQ(before.FindNode("c1"), shared_c1) << "a node the copy never changed is not copied";
  EXPECT_TRUE(before.FindNode("c1")->schedulable);
  EXPECT_EQ(before.FindNode("g2"), nullptr);
  EXPECT_EQ(before.node_count(), 2u);
  EXPECT_EQ(before.ReadyIndex("gpu")->TotalFreeGpus(GpuView::kContainer), 7);
  EXPECT_EQ(before.ReadyIndex("cpu")->size(), 1u);
  EXPECT_EQ(before.ReadyIndex("gpu2"), nullptr);
  ASSERT_NE(before.FindHold("w1"), nullptr);
  EXPECT_EQ(before.FindHold("w2"), nullptr);

  EXPECT_EQ(snapshot_.FindNode("g1")->gpus[0].holder, "");
  EXPECT_EQ(snapshot_.FindNode("g1")->gpus[1].holder, "w2");
  EXPECT_EQ(snapshot_.ReadyIndex("gpu")->TotalFreeGpus(GpuView::kContainer), 8);
  EXPECT_EQ(snapshot_.ReadyIndex("gpu2")->TotalFreeGpus(GpuView::kContainer), 7);
  EXPECT_EQ(snapshot_.FindNode("c1"), nullptr);
}

// A pool's members follow nodes coming, going and moving pool, on the live
// snapshot only: a copy taken before keeps the members it had.
TEST_F(SnapshotTest, PoolMembersFollowNodesAndCopiesKeepTheirOwn) {
  auto members = [](const Snapshot& snapshot, const std::string& pool) {
    std::vector<std::string> names;
    snapshot.ForEachNodeOf(pool, [&](const SnapshotNode& node) { names.push_back(node.info.name); });
    std::sort(names.begin(), names.end());
    return names;
  };
  ASSERT_TRUE(snapshot_.UpsertNode(FakeGpuNode("g2", "gpu"), kReady, kDriverReady).ok());
  ASSERT_TRUE(snapshot_.UpsertNode(FakeCpuNode("c1", "cpu"), kReady, kDriverReady).ok());
  ASSERT_TRUE(snapshot_.SetNodeState("g2", core::NodeState::kCordoned).ok());
  const Snapshot before = snapshot_.NodesOnly();
  EXPECT_THAT(members(snapshot_, "gpu"), ElementsAre("g1", "g2")) << "any state";

  ASSERT_TRUE(snapshot_.UpsertNode(FakeGpuNode("g1", "gpu2"), kReady, kDriverReady).ok());
  EXPECT_TRUE(snapshot_.RemoveNode("c1"));
  EXPECT_THAT(members(snapshot_, "gpu"), ElementsAre("g2"));
  EXPECT_THAT(members(snapshot_, "gpu2"), ElementsAre("g1"));
  EXPECT_THAT(members(snapshot_, "cpu"), ElementsAre());
  EXPECT_EQ(snapshot_.PoolNodeCount("cpu"), 0);
  EXPECT_EQ(snapshot_.ReadyIndex("cpu"), nullptr) << "the last node takes its pool's entries";
  EXPECT_THAT(members(before, "gpu"), ElementsAre("g1", "g2"));
  EXPECT_THAT(members(before, "cpu"), ElementsAre("c1"));
  EXPECT_THAT(members(before, "gpu2"), ElementsAre());

  // A freed id taken by a new node of another pool.
  ASSERT_TRUE(snapshot_.UpsertNode(FakeCpuNode("c2", "cpu2"), kReady, kDriverReady).ok());
  EXPECT_THAT(members(snapshot_, "cpu2"), ElementsAre("c2"));
  EXPECT_THAT(members(before, "cpu"), ElementsAre("c1"));
  EXPECT_TRUE(snapshot_.CheckInvariants().ok());
}

TEST_F(SnapshotTest, NodesOnlyKeepsNodesButNoHoldRecordsOrPoolIndexes) {
  ASSERT_TRUE(snapshot_.Hold("w1", "g1", {2}, Small()).ok());
  const Snapshot nodes = snapshot_.NodesOnly();
  EXPECT_EQ(nodes.FindNode("g1")->gpus[2].holder, "w1");
  EXPECT_EQ(nodes.FindNode("g1")->held, Small());
  int walked = 0;
  nodes.ForEachNode([&](const SnapshotNode&) { ++walked; });
  EXPECT_EQ(walked, 1);
  EXPECT_EQ(nodes.FindHold("w1"), nullptr);
  EXPECT_EQ(nodes.hold_count(), 0u);
  // No reader decides; a shared index would be copied whole by the next
  // placement in its pool.
  EXPECT_EQ(nodes.ReadyIndex("gpu"), nullptr);
  // Which nodes a pool has is kept: a reader walks the pools it needs.
  EXPECT_EQ(nodes.PoolNodeCount("gpu"), 1);
  int in_pool = 0;
  nodes.ForEachNodeOf("gpu", [&](const SnapshotNode& node) { in_pool += node.info.name == "g1"; });
  EXPECT_EQ(in_pool, 1);
  ASSERT_TRUE(snapshot_.Release("w1").has_value());
  EXPECT_EQ(nodes.FindNode("g1")->gpus[2].holder, "w1") << "the live snapshot copied before changing";
  EXPECT_EQ(snapshot_.ReadyIndex("gpu")->TotalFreeGpus(GpuView::kContainer), 8);
}

TEST_F(SnapshotTest, ForDecidingKeepsPoolIndexesButNoHoldRecords) {
  ASSERT_TRUE(snapshot_.Hold("w1", "g1", {2}, Small()).ok());
  const Snapshot deciding = snapshot_.ForDeciding();
  EXPECT_EQ(deciding.FindHold("w1"), nullptr);
  EXPECT_EQ(deciding.hold_count(), 0u);
  ASSERT_NE(deciding.ReadyIndex("gpu"), nullptr);
  EXPECT_EQ(deciding.ReadyIndex("gpu")->TotalFreeGpus(GpuView::kContainer), 7);
  // The live snapshot's next change copies the index it shares.
  ASSERT_TRUE(snapshot_.Release("w1").has_value());
  EXPECT_EQ(snapshot_.ReadyIndex("gpu")->TotalFreeGpus(GpuView::kContainer), 8);
  EXPECT_EQ(deciding.ReadyIndex("gpu")->TotalFreeGpus(GpuView::kContainer), 7);
  EXPECT_EQ(deciding.FindNode("g1")->gpus[2].holder, "w1");
}

TEST_F(SnapshotTest, RejectsBadNodes) {
  core::NodeInfo dup = FakeGpuNode("g2", "gpu");
  dup.gpus[1].index = 0;
  EXPECT_EQ(snapshot_.UpsertNode(dup, kReady, kDriverReady).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(snapshot_.FindNode("g2"), nullptr);
  EXPECT_EQ(snapshot_.UpsertNode(core::NodeInfo{}, kReady, kDriverReady).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(SnapshotTest, CpuNodeNeedsNoDriver) {
  ASSERT_TRUE(
      snapshot_.UpsertNode(FakeCpuNode("c1", "cpu"), kReady, core::DriverState::kNotNeeded).ok());
  EXPECT_TRUE(snapshot_.FindNode("c1")->schedulable);
  // A GPU node is told "not needed" only when its GPUs pass through to VMs
  // (gpu_binding vfio): its guests load the driver, the host takes work.
  ASSERT_TRUE(snapshot_.SetDriverState("g1", core::DriverState::kNotNeeded).ok());
  EXPECT_TRUE(snapshot_.FindNode("g1")->schedulable);
  ASSERT_TRUE(snapshot_.SetDriverState("g1", core::DriverState::kNeedsDriver).ok());
  EXPECT_FALSE(snapshot_.FindNode("g1")->schedulable);
}

}  // namespace
}  // namespace wsched::placement
