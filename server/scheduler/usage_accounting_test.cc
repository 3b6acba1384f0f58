#include "server/scheduler/usage_accounting.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::scheduler {
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

}  // namespace
}  // namespace wsched::scheduler
