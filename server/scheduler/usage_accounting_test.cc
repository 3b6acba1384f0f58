#include "server/scheduler/usage_accounting.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::scheduler {
namespace {

using ::testing::Pair;
using ::testing::UnorderedElementsAre;

class UsageAccountingTest : public ::testing::Test {
 protected:
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  UsageAccounting usage_{[this] { return now_; }};
};

TEST_F(UsageAccountingTest, HeldTimeGoesToTheHoldersClassBusyTimeByUtilization) {
  // GPU-a is held by a "gpu-1x" workspace, GPU-b is free.
  usage_.Record("n1", {{"GPU-a", 50, 1000}, {"GPU-b", 90, 0}}, {{"GPU-a", "gpu-1x"}});
  EXPECT_TRUE(usage_.SecondsByClass().empty());  // The first sample starts the clock.
  now_ += absl::Seconds(10);
  usage_.Record("n1", {{"GPU-a", 100, 2000}}, {{"GPU-a", "gpu-1x"}});
  EXPECT_THAT(usage_.SecondsByClass(), UnorderedElementsAre(Pair("gpu-1x", Pair(10.0, 5.0))));
  now_ += absl::Seconds(4);
  usage_.Record("n1", {}, {{"GPU-a", "gpu-1x"}});
  EXPECT_THAT(usage_.SecondsByClass(), UnorderedElementsAre(Pair("gpu-1x", Pair(14.0, 9.0))));
}

TEST_F(UsageAccountingTest, LatestKeepsTheLastSamplesPerNode) {
  usage_.Record("n1", {{"GPU-a", 10, 1}}, {});
  usage_.Record("n2", {{"GPU-c", 20, 2}}, {});
  usage_.Record("n1", {{"GPU-a", 30, 3}}, {});
  auto latest = usage_.Latest();
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest["n1"][0].utilization_percent, 30);
  EXPECT_EQ(latest["n2"][0].memory_used_bytes, 2);
  EXPECT_TRUE(usage_.SecondsByClass().empty());  // Nothing was held.
}

}  // namespace
}  // namespace wsched::scheduler
