#include "server/usage/usage_accounting.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::usage {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

MATCHER_P2(SecondsAre, held, busy, "") { return arg.held == held && arg.busy == busy; }

class UsageAccountingTest : public ::testing::Test {
 protected:
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  UsageAccounting usage_{[this] { return now_; }};
  const GpuHolders held_a_{{"GPU-a", {"ws-1", "gpu-1x", 7}}};
};

TEST_F(UsageAccountingTest, HeldTimeGoesToThePoolAndHoldersClassBusyTimeByUtilization) {
  // GPU-a is held by a "gpu-1x" workspace, GPU-b is free.
  usage_.Record("n1", "gpu-h100", {{"GPU-a", 50, 1000}, {"GPU-b", 90, 0}}, held_a_);
  EXPECT_TRUE(usage_.SecondsByPoolClass().empty());  // The first sample starts the clock.
  now_ += absl::Seconds(10);
  usage_.Record("n1", "gpu-h100", {{"GPU-a", 100, 2000}}, held_a_);
  EXPECT_THAT(usage_.SecondsByPoolClass(),
              ElementsAre(Pair(PoolClass{"gpu-h100", "gpu-1x"}, SecondsAre(10.0, 5.0))));
  now_ += absl::Seconds(4);
  usage_.Record("n1", "gpu-h100", {}, held_a_);
  EXPECT_THAT(usage_.SecondsByPoolClass(),
              ElementsAre(Pair(PoolClass{"gpu-h100", "gpu-1x"}, SecondsAre(14.0, 9.0))));
}

TEST_F(UsageAccountingTest, TheLatestSamplesAreSummedByPoolAndHolderClass) {
  usage_.Record("n1", "gpu-h100", {{"GPU-a", 10, 1}, {"GPU-b", 20, 5}}, held_a_);
  usage_.Record("n2", "gpu-h100", {{"GPU-c", 20, 2}}, {{"GPU-c", {"ws-2", "gpu-1x", 3}}});
  usage_.Record("n3", "gpu-a100", {{"GPU-d", 40, 4}}, {});
  usage_.Record("n1", "gpu-h100", {{"GPU-a", 30, 3}, {"GPU-b", 60, 5}}, held_a_);  // Replaces n1's.
  auto latest = usage_.LatestByPoolClass();
  ASSERT_EQ(latest.size(), 3u);
  const auto& held = latest[{"gpu-h100", "gpu-1x"}];
  EXPECT_EQ(held.gpus, 2);
  EXPECT_DOUBLE_EQ(held.ratio_sum, 0.5);
  EXPECT_EQ(held.memory_used_bytes, 5);
  EXPECT_EQ(latest[PoolClass("gpu-h100", "")].gpus, 1);  // GPU-b, held by nobody.
  EXPECT_DOUBLE_EQ(latest[PoolClass("gpu-a100", "")].ratio_sum, 0.4);
  usage_.ForgetNode("n3");
  EXPECT_EQ(usage_.node_count(), 2u);
  EXPECT_FALSE(usage_.LatestByPoolClass().contains(PoolClass("gpu-a100", "")));
}

TEST_F(UsageAccountingTest, TheObserverHearsEachHeartbeatAsRecorded) {
  std::vector<std::string> heard;
  usage_.SetObserver([&](const UsageAccounting::Report& report) {
    heard.push_back(report.node + "/" + report.pool + "/" + std::to_string(report.samples.size()) +
                    "/" + std::to_string(report.holders.size()));
    EXPECT_EQ(report.at, now_);
  });
  usage_.Record("n1", "gpu-h100", {{"GPU-a", 10, 1}}, held_a_);
  EXPECT_THAT(heard, ElementsAre("n1/gpu-h100/1/1"));
}

// What a replica charges one placement adds up to exactly its placed_at ..
// end, whatever the samples in between: the usage ledger's figure.
TEST_F(UsageAccountingTest, APlacementIsChargedFromItsPlacementToItsEndNotSampleToSample) {
  const absl::Time start = now_;
  usage_.Record("n1", "gpu-h100", {}, {});  // The node's clock starts.
  now_ += absl::Seconds(10);
  const absl::Time placed = start + absl::Seconds(7);  // Between two samples.
  const GpuHolders two = {{"GPU-a", {"ws-1", "gpu-2x", 3, placed}},
                          {"GPU-b", {"ws-1", "gpu-2x", 3, placed}}};
  usage_.Record("n1", "gpu-h100", {{"GPU-a", 100, 0}, {"GPU-b", 0, 0}}, two);
  EXPECT_THAT(usage_.SecondsByPoolClass(),
              ElementsAre(Pair(PoolClass{"gpu-h100", "gpu-2x"}, SecondsAre(6.0, 0.0))))
      << "3 s since it was placed, two GPUs; not the 10 s since the node's sample";
  now_ += absl::Seconds(10);
  usage_.Record("n1", "gpu-h100", {{"GPU-a", 100, 0}, {"GPU-b", 0, 0}}, two);
  // Stopped 4 s after that sample: the last stretch is charged at the end,
  // with the last sample's utilization (one GPU of two busy).
  usage_.EndPlacement("ws-1", placed, now_ + absl::Seconds(4));
  EXPECT_THAT(usage_.SecondsByPoolClass(),
              ElementsAre(Pair(PoolClass{"gpu-h100", "gpu-2x"}, SecondsAre(34.0, 14.0))));
  const PoolClass key{"gpu-h100", "gpu-2x"};
  EXPECT_DOUBLE_EQ(usage_.SecondsByPoolClass()[key].held,
                   2 * absl::ToDoubleSeconds(now_ + absl::Seconds(4) - placed));
  // A sample whose holders were read before the stop charges nothing more.
  now_ += absl::Seconds(10);
  usage_.Record("n1", "gpu-h100", {}, two);
  EXPECT_DOUBLE_EQ(usage_.SecondsByPoolClass()[key].held, 34.0);
}

TEST_F(UsageAccountingTest, AnEndThisReplicaNeverChargedAddsNothing) {
  usage_.EndPlacement("elsewhere", now_ - absl::Hours(1), now_);
  EXPECT_TRUE(usage_.SecondsByPoolClass().empty());
  // The same id placed again is a new placement, charged as one.
  usage_.Record("n1", "gpu-h100", {}, {});
  now_ += absl::Seconds(5);
  usage_.Record("n1", "gpu-h100", {}, {{"GPU-a", {"elsewhere", "gpu-1x", 9, now_ - absl::Seconds(2)}}});
  EXPECT_THAT(usage_.SecondsByPoolClass(),
              ElementsAre(Pair(PoolClass{"gpu-h100", "gpu-1x"}, SecondsAre(2.0, 0.0))));
}

}  // namespace
}  // namespace wsched::usage
