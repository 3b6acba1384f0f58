#include "server/scaling/provision_estimate.h"

#include "gtest/gtest.h"

namespace wsched::scaling {
namespace {

TEST(EstimatePlacementDelayTest, NoSamplesNoDefaultNoEstimate) {
  EXPECT_EQ(EstimatePlacementDelay(ProvisionHistory(), std::nullopt), std::nullopt);
}

TEST(EstimatePlacementDelayTest, NoSamplesUsesTheDefault) {
  EXPECT_EQ(EstimatePlacementDelay(ProvisionHistory(), absl::Minutes(4)), absl::Minutes(4));
}

TEST(EstimatePlacementDelayTest, MedianOfOddAndEvenCounts) {
  ProvisionHistory history;
  for (int minutes : {5, 3, 30}) history.Record(absl::Minutes(minutes));
  EXPECT_EQ(EstimatePlacementDelay(history, absl::Minutes(1)), absl::Minutes(5));
  history.Record(absl::Minutes(4));
  EXPECT_EQ(EstimatePlacementDelay(history, std::nullopt), absl::Seconds(270));
}

TEST(EstimatePlacementDelayTest, OnlyRecentSamplesCount) {
  ProvisionHistory history(20);
  for (int i = 0; i < 20; ++i) history.Record(absl::Hours(1));
  for (int i = 0; i < 11; ++i) history.Record(absl::Minutes(2));
  EXPECT_EQ(history.samples().size(), 20u);
  EXPECT_EQ(EstimatePlacementDelay(history, std::nullopt), absl::Minutes(2));
}

TEST(EstimatePlacementDelayTest, IgnoresNegativeDurations) {
  ProvisionHistory history;
  history.Record(absl::Seconds(-5));
  EXPECT_TRUE(history.samples().empty());
}

}  // namespace
}  // namespace wsched::scaling
