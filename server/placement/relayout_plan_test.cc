// Layouts by demand: which idle GPU is cut anew for pending slice work, into
// what, and what becomes of an order.
#include "server/placement/relayout_plan.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/mig_profiles.h"
#include "server/placement/decide.h"
#include "server/placement/mig_packing.h"
#include "server/placement/test_nodes.h"

namespace wsched::placement {
namespace {

using ::testing::ElementsAre;
using testing::FakeGpuNode;
using testing::GpuPool;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::LayOutSlices;
using ::testing::SizeIs;
using testing::SliceClass;

constexpr auto kReady = core::NodeState::kReady;
constexpr auto kDriverReady = core::DriverState::kReady;
const std::vector<std::string> kSevenSmall(7, "1g.18gb");
const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

// Every slice at a legal start of the H200's table, none overlapping, within
// the seven compute slices.
void ExpectLegal(const std::vector<PlannedSlice>& layout) {
  const std::vector<core::MigProfile>& table = *core::KnownMigProfiles("h200");
  SlotMask used = 0;
  int compute = 0;
  for (const PlannedSlice& slice : layout) {
    const core::MigProfile* profile = core::FindProfile(table, slice.profile);
    ASSERT_NE(profile, nullptr) << slice.profile;
    EXPECT_TRUE(CanPlaceAt(*profile, slice.start, used)) << slice.profile << "@" << slice.start;
    used |= Footprint(*profile, slice.start);
    compute += profile->compute_slices;
  }
  EXPECT_LE(compute, core::kMigComputeSlices);
}

class RelayoutPlanTest : public ::testing::Test {
 protected:
  RelayoutPlanTest() { pools_[0].mig.kind = core::MigLayoutKind::kByDemand; }

  // A ready node of the H200 pool, every GPU laid out as `layout`.
  core::NodeInfo AddNode(const std::string& name, const std::vector<std::string>& layout,
                         int gpus = 1, core::DriverState driver = kDriverReady) {
    core::NodeInfo node = FakeGpuNode(name, "gpu-h200", "h200", gpus);
    LayOutSlices(node, layout);
    EXPECT_TRUE(snapshot_.UpsertNode(node, kReady, driver).ok());
    return node;
  }

  std::vector<RelayoutOrder> Plan(const std::vector<const core::WorkspaceClass*>& pending,
                                  const std::vector<RelayoutOrder>& under_way = {},
                                  RelayoutLimits limits = {}) {
    RelayoutInputs in;
    in.snapshot = &snapshot_;
    in.pools = &pools_;
    in.pending = pending;
    in.under_way = under_way;
    in.now = kNow;
    in.limits = limits;
    return PlanRelayouts(in);
  }

  // An order of the pool for a 3g, given at kNow.
  static RelayoutOrder Order(const std::string& node, int gpu, std::vector<PlannedSlice> layout) {
    return {.node = node,
            .pool = "gpu-h200",
            .gpu_index = gpu,
            .layout = std::move(layout),
            .for_profile = "3g.71gb",
            .ordered_at = kNow};
  }

  const core::WorkspaceClass mid_ = SliceClass("mid", {"3g.71gb"});
  const core::WorkspaceClass small_ = SliceClass("small", {"1g.18gb"});
  std::vector<core::NodePool> pools_ = {GpuPool("gpu-h200", "h200")};
  Snapshot snapshot_;
};

TEST_F(RelayoutPlanTest, CutsAnIdleGpuForAProfileNoFreeSliceHolds) {
  AddNode("node-a", kSevenSmall);
  std::vector<RelayoutOrder> orders = Plan({&mid_});
  ASSERT_THAT(orders, SizeIs(1));
  const RelayoutOrder& order = orders[0];
  EXPECT_EQ(order.node, "node-a");
  EXPECT_EQ(order.pool, "gpu-h200");
  EXPECT_EQ(order.gpu_index, 0);
  EXPECT_EQ(order.for_profile, "3g.71gb");
  EXPECT_EQ(order.ordered_at, kNow);
  // The 3g where it overlaps the fewest 1g slices (three at 4, not four at
  // 0); the 1g slices beside it are kept.
  EXPECT_THAT(order.layout, ElementsAre(PlannedSlice{"1g.18gb", 0}, PlannedSlice{"1g.18gb", 1},
                                        PlannedSlice{"1g.18gb", 2}, PlannedSlice{"1g.18gb", 3},
                                        PlannedSlice{"3g.71gb", 4}));
  ExpectLegal(order.layout);
  EXPECT_EQ(DescribeOrder(order),
            "GPU 0 on node node-a: 1g.18gb@0, 1g.18gb@1, 1g.18gb@2, 1g.18gb@3, 3g.71gb@4");
}

TEST_F(RelayoutPlanTest, OnlyByDemandPools) {
  pools_[0].mig.kind = core::MigLayoutKind::kFixed;
  AddNode("node-a", kSevenSmall);
  EXPECT_THAT(Plan({&mid_}), IsEmpty());
}

TEST_F(RelayoutPlanTest, NothingWhileAFreeSliceServesTheWork) {
  AddNode("node-a", {"3g.71gb", "3g.71gb"});
  AddNode("node-b", kSevenSmall);
  EXPECT_THAT(Plan({&mid_, &small_, &mid_}), IsEmpty());
}

TEST_F(RelayoutPlanTest, TheWorkspacesAheadTakeTheFreeSlicesFirst) {
  AddNode("node-a", {"3g.71gb", "1g.18gb"});
  AddNode("node-b", kSevenSmall);
  // The first 3g takes node-a's; the second is unmet.
  std::vector<RelayoutOrder> orders = Plan({&mid_, &mid_});
  ASSERT_THAT(orders, SizeIs(1));
  EXPECT_EQ(orders[0].node, "node-b");
}

TEST_F(RelayoutPlanTest, AGpuHoldingOneSliceIsNeverTouched) {
  AddNode("node-a", kSevenSmall);
  ASSERT_TRUE(snapshot_.HoldSlice("w1", "node-a", {0, 7}, {}).ok());  // The 1g at slot 6.
  EXPECT_THAT(Plan({&mid_}), IsEmpty());

  // Its neighbour that holds nothing is cut instead.
  AddNode("node-b", kSevenSmall, 2);
  ASSERT_TRUE(snapshot_.HoldSlice("w2", "node-b", {0, 1}, {}).ok());
  std::vector<RelayoutOrder> orders = Plan({&mid_});
  ASSERT_THAT(orders, SizeIs(1));
  EXPECT_EQ(orders[0].node, "node-b");
  EXPECT_EQ(orders[0].gpu_index, 1);
}

TEST_F(RelayoutPlanTest, AGpuHeldWholeUnhealthyOrOutOfMigModeIsNotTouched) {
  core::NodeInfo node = FakeGpuNode("node-a", "gpu-h200", "h200", 4);
  LayOutSlices(node, kSevenSmall);
  node.gpus[1].healthy = false;
  node.gpus[2].mig->enabled = false;
  node.gpus[3].mig->pending_enabled = false;  // A mode change waits for a reset.
  ASSERT_TRUE(snapshot_.UpsertNode(node, kReady, kDriverReady).ok());
  ASSERT_TRUE(snapshot_.Hold("whole", "node-a", {0}, {}).ok());
  EXPECT_THAT(Plan({&mid_}), IsEmpty());
}

TEST_F(RelayoutPlanTest, ANodeNotTakingWorkIsNotTouched) {
  AddNode("node-a", kSevenSmall, 1, core::DriverState::kNeedsDriver);
  EXPECT_THAT(Plan({&mid_}), IsEmpty());
}

TEST_F(RelayoutPlanTest, OneGpuServesSeveralWorkspacesOfThePool) {
  AddNode("node-a", kSevenSmall, 2);
  std::vector<RelayoutOrder> orders = Plan({&mid_, &mid_});
  ASSERT_THAT(orders, SizeIs(1));
  EXPECT_THAT(orders[0].layout,
              ElementsAre(PlannedSlice{"3g.71gb", 0}, PlannedSlice{"3g.71gb", 4}));
}

TEST_F(RelayoutPlanTest, NeverTwoGpusOfOneNodeAtOnce) {
  AddNode("node-a", kSevenSmall, 8);
  // Three 3g: one GPU takes two, the third would need a second GPU of node-a.
  EXPECT_THAT(Plan({&mid_, &mid_, &mid_}), SizeIs(1));

  AddNode("node-b", kSevenSmall, 8);
  std::vector<RelayoutOrder> orders = Plan({&mid_, &mid_, &mid_});
  ASSERT_THAT(orders, SizeIs(2));
  EXPECT_NE(orders[0].node, orders[1].node);
}

TEST_F(RelayoutPlanTest, ANodeWithAReLayoutUnderWayGetsNoOther) {
  AddNode("node-a", kSevenSmall, 8);
  const RelayoutOrder under_way = Order("node-a", 0, {{"3g.71gb", 0}, {"3g.71gb", 4}});
  snapshot_.SetRelayouts({{"node-a", 0}});
  // The two 3g of the order under way serve the first two; the third waits
  // for another node.
  EXPECT_THAT(Plan({&mid_, &mid_, &mid_}, {under_way}), IsEmpty());
  AddNode("node-b", kSevenSmall);
  std::vector<RelayoutOrder> orders = Plan({&mid_, &mid_, &mid_}, {under_way});
  ASSERT_THAT(orders, SizeIs(1));
  EXPECT_EQ(orders[0].node, "node-b");
}

TEST_F(RelayoutPlanTest, WorkServedByAReLayoutUnderWayAsksForNoOther) {
  AddNode("node-a", kSevenSmall);
  AddNode("node-b", kSevenSmall);
  const RelayoutOrder under_way = Order("node-a", 0, {{"3g.71gb", 0}, {"1g.18gb", 4}});
  snapshot_.SetRelayouts({{"node-a", 0}});
  EXPECT_THAT(Plan({&mid_}, {under_way}), IsEmpty());
}

TEST_F(RelayoutPlanTest, PrefersTheGpuThatLosesTheFewestSlices) {
  AddNode("node-a", kSevenSmall);
  AddNode("node-b", {});  // In MIG mode, no slices yet.
  std::vector<RelayoutOrder> orders = Plan({&mid_});
  ASSERT_THAT(orders, SizeIs(1));
  EXPECT_EQ(orders[0].node, "node-b");
}

TEST_F(RelayoutPlanTest, FillsWithThePoolsStartingProfilesThenTheSmallest) {
  pools_[0].mig.profiles = {"2g.35gb"};
  AddNode("node-a", {});
  std::vector<RelayoutOrder> orders = Plan({&mid_});
  ASSERT_THAT(orders, SizeIs(1));
  const std::vector<PlannedSlice>& layout = orders[0].layout;
  ExpectLegal(layout);
  auto count = [&](const std::string& profile) {
    return std::count_if(layout.begin(), layout.end(),
                         [&](const PlannedSlice& s) { return s.profile == profile; });
  };
  EXPECT_EQ(count("3g.71gb"), 1);
  EXPECT_EQ(count("2g.35gb"), 1);
  EXPECT_EQ(count("1g.18gb"), 2) << "the smallest fills the rest";
}

TEST_F(RelayoutPlanTest, TheClasssProfilesInOrder) {
  // 4g first, 3g as the fallback: the GPU is cut for the 4g.
  const core::WorkspaceClass big = SliceClass("big", {"4g.71gb", "3g.71gb"});
  AddNode("node-a", kSevenSmall);
  std::vector<RelayoutOrder> orders = Plan({&big});
  ASSERT_THAT(orders, SizeIs(1));
  EXPECT_EQ(orders[0].for_profile, "4g.71gb");
  EXPECT_EQ(orders[0].layout.front(), (PlannedSlice{"4g.71gb", 0}));
  ExpectLegal(orders[0].layout);
}

TEST_F(RelayoutPlanTest, ANodeWithoutRoomForTheWorkspaceIsNotCut) {
  core::NodeInfo node = FakeGpuNode("node-a", "gpu-h200", "h200", 1);
  LayOutSlices(node, kSevenSmall);
  node.cpu_millis = 1000;  // The class asks for 2 CPU.
  ASSERT_TRUE(snapshot_.UpsertNode(node, kReady, kDriverReady).ok());
  EXPECT_THAT(Plan({&mid_}), IsEmpty());
}

TEST_F(RelayoutPlanTest, BoundedWork) {
  for (int i = 0; i < 6; ++i) AddNode(absl::StrCat("node-", i), kSevenSmall);
  std::vector<const core::WorkspaceClass*> pending(12, &mid_);
  EXPECT_THAT(Plan(pending, {}, {.max_orders = 2}), SizeIs(2));
  EXPECT_THAT(Plan(pending, {}, {.max_orders = 10}), SizeIs(6));
  EXPECT_THAT(Plan(pending, {}, {.max_orders = 10, .max_gpus = 3}), SizeIs(3));
}

TEST_F(RelayoutPlanTest, NoOrderForWholeGpuOrCpuWork) {
  AddNode("node-a", kSevenSmall);
  const core::WorkspaceClass whole = testing::GpuClass("whole", 1, {"h200"});
  EXPECT_THAT(Plan({&whole, nullptr}), IsEmpty());
}

// Snapshot marks: placement keeps off a GPU under re-layout.
TEST_F(RelayoutPlanTest, AMarkedGpuHandsOutNothing) {
  AddNode("node-a", kSevenSmall, 2);
  EXPECT_EQ(snapshot_.ReadySlices("gpu-h200")->TotalFree("1g.18gb"), 14);
  snapshot_.SetRelayouts({{"node-a", 1}});
  EXPECT_EQ(snapshot_.ReadySlices("gpu-h200")->TotalFree("1g.18gb"), 7);
  for (int i = 0; i < 7; ++i) {
    Decision decision = Decide(small_, pools_, snapshot_);
    const Placed* placed = std::get_if<Placed>(&decision);
    ASSERT_NE(placed, nullptr);
    EXPECT_EQ(placed->slice->gpu_index, 0);
    ASSERT_TRUE(snapshot_.HoldSlice(absl::StrCat("w", i), "node-a", *placed->slice, {}).ok());
  }
  EXPECT_TRUE(std::holds_alternative<NotNow>(Decide(small_, pools_, snapshot_)));

  // The mark outlives the node reporting again, and goes when lifted.
  core::NodeInfo again = FakeGpuNode("node-a", "gpu-h200", "h200", 2);
  LayOutSlices(again, kSevenSmall);
  again.driver_version = "560.35.03";
  ASSERT_TRUE(snapshot_.UpsertNode(again, kReady, kDriverReady).ok());
  EXPECT_TRUE(snapshot_.FindNode("node-a")->gpus[1].relayout);
  snapshot_.SetRelayouts({});
  EXPECT_FALSE(snapshot_.FindNode("node-a")->gpus[1].relayout);
  EXPECT_EQ(snapshot_.ReadySlices("gpu-h200")->TotalFree("1g.18gb"), 7);
}

class RelayoutProgressTest : public RelayoutPlanTest {
 protected:
  RelayoutProgressTest() {
    node_ = AddNode("node-a", kSevenSmall, 2);
    order_ = Order("node-a", 1, {{"3g.71gb", 0}, {"3g.71gb", 4}});
    snapshot_.SetRelayouts({{"node-a", 1}});
  }
  RelayoutStatus Progress(absl::Time now = kNow + absl::Seconds(10)) {
    return ProgressOf(order_, snapshot_, pools_, now, absl::Minutes(5));
  }
  // GPU 1 of node-a reports `layout` (slot order, as LayOutSlices does).
  void Report(const std::vector<std::string>& layout) {
    core::NodeInfo cut = node_;
    core::NodeInfo one = FakeGpuNode("node-a", "gpu-h200", "h200", 2);
    LayOutSlices(one, layout);
    cut.gpus[1].mig = one.gpus[1].mig;
    ASSERT_TRUE(snapshot_.UpsertNode(cut, kReady, kDriverReady).ok());
  }

  core::NodeInfo node_;
  RelayoutOrder order_;
};

TEST_F(RelayoutProgressTest, UnderWayUntilTheGpuReportsTheLayout) {
  EXPECT_EQ(Progress().progress, RelayoutProgress::kUnderWay);
  Report({"3g.71gb", "1g.18gb"});
  EXPECT_EQ(Progress().progress, RelayoutProgress::kUnderWay);
  Report({"3g.71gb", "3g.71gb"});
  EXPECT_EQ(Progress().progress, RelayoutProgress::kDone);
}

TEST_F(RelayoutProgressTest, AnUnusableSliceIsNotDone) {
  Report({"3g.71gb", "3g.71gb"});
  core::NodeInfo cut = snapshot_.FindNode("node-a")->info;
  cut.gpus[1].mig->instances[1].compute_instance = -1;
  ASSERT_TRUE(snapshot_.UpsertNode(cut, kReady, kDriverReady).ok());
  EXPECT_EQ(Progress().progress, RelayoutProgress::kUnderWay);
}

TEST_F(RelayoutProgressTest, DroppedWhenTheGpuFailsOrHoldsWorkOrTimeRunsOut) {
  EXPECT_THAT(Progress(kNow + absl::Minutes(5)).why,
              HasSubstr("GPU 1 on node node-a was not laid out within 5m"));

  ASSERT_TRUE(snapshot_.HoldSlice("w1", "node-a", {1, 2}, {}).ok());
  RelayoutStatus held = Progress();
  EXPECT_EQ(held.progress, RelayoutProgress::kDropped);
  EXPECT_THAT(held.why, HasSubstr("holds work of w1"));
  snapshot_.Release("w1");

  core::NodeInfo failed = node_;
  failed.gpus[1].healthy = false;
  failed.gpus[1].health_reason = "MIG re-layout failed: Insufficient Permissions";
  ASSERT_TRUE(snapshot_.UpsertNode(failed, kReady, kDriverReady).ok());
  EXPECT_EQ(Progress().why,
            "GPU 1 on node node-a is unhealthy: MIG re-layout failed: Insufficient Permissions");

  pools_[0].mig.kind = core::MigLayoutKind::kFixed;
  EXPECT_THAT(Progress().why, HasSubstr("pool gpu-h200 no longer lays out by demand"));
  snapshot_.RemoveNode("node-a");
  EXPECT_EQ(Progress().why, "node node-a is gone");
}

}  // namespace
}  // namespace wsched::placement
