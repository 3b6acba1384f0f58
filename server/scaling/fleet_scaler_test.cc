#include "server/scaling/fleet_scaler.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "server/scaling/pool_room.h"
#include "gtest/gtest.h"
#include "server/placement/test_nodes.h"

namespace wsched::scaling {
namespace {

using placement::testing::FakeGpuNode;
using placement::testing::GpuClass;
using placement::testing::GpuPool;
using placement::testing::kGi;

constexpr auto kReady = core::NodeState::kReady;
constexpr auto kDriverReady = core::DriverState::kReady;
const absl::Time kStart = absl::FromUnixSeconds(1'800'000'000);

class FleetScalerTest : public ::testing::Test {
 protected:
  FleetScalerTest() {
    catalog_.pools = {GpuPool("gpu-h100", "h100"), GpuPool("gpu-a100", "a100")};
    catalog_.pools[0].max_size = 1;
    for (core::NodePool& pool : catalog_.pools) pool.scale_down.delay_after_add = absl::ZeroDuration();
    catalog_.classes = {GpuClass("gpu-1x", 1, {"h100", "a100"})};
  }

  void Register(const std::string& name, const std::string& pool) {
    ASSERT_TRUE(snapshot_.UpsertNode(FakeGpuNode(name, pool), kReady, kDriverReady).ok());
  }
  // A node whose eight GPUs one workspace holds.
  void RegisterFull(const std::string& name, const std::string& pool) {
    Register(name, pool);
    ASSERT_TRUE(snapshot_.Hold("busy-" + name, name, {0, 1, 2, 3, 4, 5, 6, 7}, {}).ok());
  }
  void Pend(const std::string& id) {
    pending_.push_back({.workspace = id, .class_id = "gpu-1x", .pools = {"gpu-h100", "gpu-a100"},
                        .since = now_});
  }
  std::vector<PoolObservation> Observe() {
    return fleet_.Observe(catalog_, snapshot_, pending_, now_);
  }
  const PoolObservation& Of(const std::vector<PoolObservation>& all, const std::string& pool) {
    for (const PoolObservation& obs : all) {
      if (obs.pool.id == pool) return obs;
    }
    ADD_FAILURE() << "no observation of " << pool;
    return all.front();
  }
  // One workspace waits past the batching window and the h100 pool's
  // scale-up for it is handed on as `generation`: how many nodes it asked.
  int HandOnAScaleUp(int64_t generation) {
    Pend("w1");
    Observe();
    now_ += absl::Seconds(2);
    std::vector<PoolObservation> all = Observe();
    PoolSignal signal = fleet_.Evaluate(Of(all, "gpu-h100"), now_);
    signal.generation = generation;  // As published.
    return fleet_.RecordHandedOn(Of(all, "gpu-h100"), signal, now_);
  }

  core::Catalog catalog_;
  placement::Snapshot snapshot_;
  std::vector<PendingDemand> pending_;
  absl::Time now_ = kStart;
  FleetScaler fleet_{ScalerOptions{.batching_window = absl::Seconds(2)}};
};

TEST_F(FleetScalerTest, ObservesEveryCatalogPoolInOrderWithItsSpec) {
  std::vector<PoolObservation> all = Observe();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].pool, catalog_.pools[0]);
  EXPECT_EQ(all[1].pool.id, "gpu-a100");
  EXPECT_TRUE(all[0].nodes.empty());
  EXPECT_NE(fleet_.scaler("gpu-a100"), nullptr);
  EXPECT_EQ(fleet_.scaler("gpu-v100"), nullptr);
}

TEST_F(FleetScalerTest, PendingWorkCarriesItsLongestWaitToItsPool) {
  Pend("w1");
  now_ += absl::Seconds(3);
  Pend("w2");
  PoolObservation h100 = Of(Observe(), "gpu-h100");
  ASSERT_EQ(h100.pending.size(), 1u);
  EXPECT_EQ(h100.pending[0].count, 2);
  EXPECT_EQ(h100.pending[0].waiting_since, kStart);
  // A fleet that had never seen the pool (a new leader's) asks at once.
  EXPECT_EQ(fleet_.Evaluate(h100, now_).target_size, 1);
}

// The h100 pool (max_size 1) holds eight 1-GPU workspaces; the pending
// walk hands the rest to the a100 fallback, and so does the scaler, at once.
TEST_F(FleetScalerTest, WhatThePreferredPoolCannotHoldCountsOnTheFallback) {
  for (int i = 0; i < 10; ++i) Pend(absl::StrCat("w", i));
  now_ += absl::Seconds(3);  // Past the batching window.
  std::vector<PoolObservation> all = Observe();
  ASSERT_EQ(Of(all, "gpu-h100").pending.size(), 1u);
  EXPECT_EQ(Of(all, "gpu-h100").pending[0].count, 8);
  ASSERT_EQ(Of(all, "gpu-a100").pending.size(), 1u);
  EXPECT_EQ(Of(all, "gpu-a100").pending[0].count, 2);
  EXPECT_EQ(Of(all, "gpu-a100").pending[0].waiting_since, kStart);
  EXPECT_EQ(fleet_.Evaluate(Of(all, "gpu-a100"), now_).target_size, 1);

  // At max_size, the h100 pool still holds what its node's free room does.
  Register("h-1", "gpu-h100");
  all = Observe();
  EXPECT_EQ(Of(all, "gpu-h100").pending[0].count, 8);
  EXPECT_EQ(Of(all, "gpu-a100").pending[0].count, 2);
}

// With no room anywhere, the preferred pool counts what nobody holds, so its
// signal says it is at max_size.
TEST_F(FleetScalerTest, WhatNoPoolHoldsCountsOnThePreferredPool) {
  catalog_.pools[1].max_size = 0;
  for (int i = 0; i < 10; ++i) Pend(absl::StrCat("w", i));
  now_ += absl::Seconds(3);  // Past the batching window.
  std::vector<PoolObservation> all = Observe();
  EXPECT_EQ(Of(all, "gpu-h100").pending[0].count, 10);
  EXPECT_TRUE(Of(all, "gpu-a100").pending.empty());
  const PoolSignal signal = fleet_.Evaluate(Of(all, "gpu-h100"), now_);
  EXPECT_EQ(signal.target_size, 1);
  EXPECT_THAT(signal.reasons, ::testing::Contains(ScalingReason::kMaxSize));
}

TEST_F(FleetScalerTest, AskedForNodeTakesTheRequestTimeAndLeavesTheFlight) {
  Pend("w1");
  std::vector<PoolObservation> all = Observe();
  PoolSignal signal = fleet_.Evaluate(Of(all, "gpu-h100"), now_);
  ASSERT_EQ(signal.target_size, 0) << "the work has not waited out the batching window";
  now_ += absl::Seconds(2);
  all = Observe();
  signal = fleet_.Evaluate(Of(all, "gpu-h100"), now_);
  ASSERT_EQ(signal.target_size, 1) << signal.detail;
  const absl::Time asked_at = now_;
  EXPECT_EQ(fleet_.RecordHandedOn(Of(all, "gpu-h100"), signal, now_), 1);
  // Handing the same signal on again asks for nothing more: it is in flight.
  EXPECT_EQ(fleet_.RecordHandedOn(Of(all, "gpu-h100"), signal, now_), 0);
  EXPECT_EQ(Of(Observe(), "gpu-h100").in_flight.size(), 1u);

  now_ += absl::Minutes(3);
  Register("h-1", "gpu-h100");
  all = Observe();
  const PoolObservation& h100 = Of(all, "gpu-h100");
  ASSERT_EQ(h100.nodes.size(), 1u);
  EXPECT_EQ(h100.nodes[0].requested_at, asked_at);
  EXPECT_EQ(h100.nodes[0].ready_at, now_);
  EXPECT_TRUE(h100.in_flight.empty());
}

TEST_F(FleetScalerTest, TheFirstRunningReportOfARequestDatesTheCloudStartAndTheBoot) {
  ASSERT_EQ(HandOnAScaleUp(7), 1);

  // A report for another generation, or not RUNNING, dates nothing.
  fleet_.OnActuatorEvent("gpu-h100", {.kind = ActuatorEventKind::kRunning, .generation = 6},
                         now_ + absl::Seconds(10));
  fleet_.OnActuatorEvent("gpu-h100", {.kind = ActuatorEventKind::kCreating, .generation = 7},
                         now_ + absl::Seconds(20));
  EXPECT_TRUE(fleet_.TakeNewStartPhaseSamples("gpu-h100").cloud_start.empty());
  // The first RUNNING of generation 7 does; a second one does not again.
  fleet_.OnActuatorEvent("gpu-h100", {.kind = ActuatorEventKind::kRunning, .generation = 7},
                         now_ + absl::Seconds(45));
  fleet_.OnActuatorEvent("gpu-h100", {.kind = ActuatorEventKind::kRunning, .generation = 7},
                         now_ + absl::Seconds(50));
  FleetScaler::StartPhaseSamples samples = fleet_.TakeNewStartPhaseSamples("gpu-h100");
  EXPECT_THAT(samples.cloud_start, ::testing::ElementsAre(absl::Seconds(45)));
  EXPECT_TRUE(samples.node_boot.empty());

  // The node registers 2 minutes after it ran: its boot.
  now_ += absl::Seconds(45) + absl::Minutes(2);
  Register("h-1", "gpu-h100");
  Observe();
  samples = fleet_.TakeNewStartPhaseSamples("gpu-h100");
  EXPECT_TRUE(samples.cloud_start.empty()) << "taken once";
  EXPECT_THAT(samples.node_boot, ::testing::ElementsAre(absl::Minutes(2)));
}

TEST_F(FleetScalerTest, ANodeWhoseRequestNeverRanBootsNoSample) {
  ASSERT_EQ(HandOnAScaleUp(1), 1);
  now_ += absl::Minutes(3);
  Register("h-1", "gpu-h100");
  Observe();
  FleetScaler::StartPhaseSamples samples = fleet_.TakeNewStartPhaseSamples("gpu-h100");
  EXPECT_TRUE(samples.cloud_start.empty());
  EXPECT_TRUE(samples.node_boot.empty());
}

TEST_F(FleetScalerTest, NodeUpBeforeTheFirstLookHasNoRequestTime) {
  Register("h-1", "gpu-h100");
  const PoolNode& node = Of(Observe(), "gpu-h100").nodes.at(0);
  EXPECT_EQ(node.requested_at, absl::InfinitePast());
  EXPECT_EQ(node.ready_at, kStart);
}

TEST_F(FleetScalerTest, EmptyTimerStartsAtTheFirstEmptyLookAndStopsWhileBusy) {
  Register("h-1", "gpu-h100");
  Observe();
  now_ += absl::Minutes(1);
  EXPECT_EQ(Of(Observe(), "gpu-h100").nodes.at(0).empty_since, kStart);

  ASSERT_TRUE(snapshot_.Hold("w1", "h-1", {0}, {8000, 64 * kGi, 0, 0}).ok());
  const PoolNode busy = Of(Observe(), "gpu-h100").nodes.at(0);
  EXPECT_EQ(busy.workspaces, 1);
  EXPECT_EQ(busy.free->gpus, 7);
  snapshot_.Release("w1");
  now_ += absl::Minutes(1);
  EXPECT_EQ(Of(Observe(), "gpu-h100").nodes.at(0).empty_since, now_);
}

TEST_F(FleetScalerTest, RemovedNodesAreForgotten) {
  Register("h-1", "gpu-h100");
  Observe();
  snapshot_.RemoveNode("h-1");
  now_ += absl::Minutes(1);
  Observe();
  // Seen again: a new node, up before this look.
  Register("h-1", "gpu-h100");
  const PoolNode& node = Of(Observe(), "gpu-h100").nodes.at(0);
  EXPECT_EQ(node.empty_since, now_);
  EXPECT_EQ(node.ready_at, now_);
  EXPECT_EQ(node.requested_at, absl::InfinitePast());
}

TEST_F(FleetScalerTest, DemandMovesToTheFallbackPoolWhileThePreferredIsFull) {
  Pend("w1");
  std::vector<PoolObservation> all = Observe();
  EXPECT_EQ(Of(all, "gpu-h100").pending.size(), 1u);
  EXPECT_TRUE(Of(all, "gpu-a100").pending.empty());

  RegisterFull("h-1", "gpu-h100");  // At max_size 1 now, every GPU held.
  all = Observe();
  EXPECT_TRUE(Of(all, "gpu-h100").pending.empty());
  ASSERT_EQ(Of(all, "gpu-a100").pending.size(), 1u);
  EXPECT_EQ(Of(all, "gpu-a100").pending[0].workspace_class.id, "gpu-1x");
  EXPECT_EQ(Of(all, "gpu-a100").pending[0].count, 1);
}

TEST_F(FleetScalerTest, AFilterLeavesPoolsOutButDemandStillSeesTheirSize) {
  Pend("w1");
  RegisterFull("h-1", "gpu-h100");  // The preferred pool is at max_size 1, full.
  std::vector<PoolObservation> only_a100 =
      fleet_.Observe(catalog_, snapshot_, pending_, now_,
                     [](const core::NodePool& pool) { return pool.id == "gpu-a100"; });
  ASSERT_EQ(only_a100.size(), 1u);
  EXPECT_EQ(only_a100[0].pool.id, "gpu-a100");
  ASSERT_EQ(only_a100[0].pending.size(), 1u) << "routed past the full pool it did not observe";
  EXPECT_EQ(fleet_.scaler("gpu-h100"), nullptr) << "never observed";
}

TEST_F(FleetScalerTest, APoolLeftOutKeepsItsTimersWhileOthersForgetTheirVanishedNodes) {
  Register("h-1", "gpu-h100");
  Register("a-1", "gpu-a100");
  Observe();
  auto only_a100 = [](const core::NodePool& pool) { return pool.id == "gpu-a100"; };
  snapshot_.RemoveNode("a-1");
  for (int tick = 0; tick < 3; ++tick) {
    now_ += absl::Minutes(1);
    fleet_.Observe(catalog_, snapshot_, pending_, now_, only_a100);
  }
  Register("a-1", "gpu-a100");
  now_ += absl::Minutes(1);
  const std::vector<PoolObservation> all = Observe();
  // Left out for three ticks: h-1 is still empty since the first look.
  EXPECT_EQ(Of(all, "gpu-h100").nodes.at(0).empty_since, kStart);
  // Vanished from an observed pool, then back: a new node.
  EXPECT_EQ(Of(all, "gpu-a100").nodes.at(0).empty_since, now_);
  EXPECT_EQ(Of(all, "gpu-a100").nodes.at(0).ready_at, now_);
}

TEST(ObservedNode, CountsEachHolderOnceAndOnlyHealthyFreeGpus) {
  placement::Snapshot snapshot;
  core::NodeInfo info = FakeGpuNode("g", "gpu");
  info.gpus[7].healthy = false;
  ASSERT_TRUE(snapshot.UpsertNode(info, kReady, kDriverReady).ok());
  ASSERT_TRUE(snapshot.Hold("w1", "g", {0, 1}, {8000, 64 * kGi, 0, 0}).ok());
  ASSERT_TRUE(snapshot.Hold("w2", "g", {2}, {8000, 64 * kGi, 0, 0}).ok());
  PoolNode node = ObservedNode(*snapshot.FindNode("g"));
  EXPECT_EQ(node.name, "g");
  EXPECT_EQ(node.workspaces, 2);
  EXPECT_EQ(node.free->gpus, 4);
  EXPECT_EQ(node.free->cpu_millis, 128000 - 16000);
}

}  // namespace
}  // namespace wsched::scaling
