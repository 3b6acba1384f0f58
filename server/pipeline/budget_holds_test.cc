#include "server/pipeline/budget_holds.h"

#include "gtest/gtest.h"

namespace wsched::pipeline {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1800000000);
constexpr BudgetHolds::Versions kSettings{3, 7};

TEST(BudgetHoldsTest, ARefusedWorkspaceIsSetAsideWhileNothingChanged) {
  BudgetHolds holds;
  holds.Refused("w-1", kSettings, kNow, absl::Hours(30));
  EXPECT_TRUE(holds.Holds("w-1", kSettings, kNow + absl::Seconds(59)));
  EXPECT_FALSE(holds.Holds("w-2", kSettings, kNow));
}

TEST(BudgetHoldsTest, ChangedSettingsLetItBeTriedAtOnce) {
  BudgetHolds holds;
  holds.Refused("w-1", kSettings, kNow, absl::Hours(30));
  EXPECT_FALSE(holds.Holds("w-1", {3, 8}, kNow));
  // The hold is gone, not only passed over: the old versions do not bring it back.
  EXPECT_FALSE(holds.Holds("w-1", kSettings, kNow));
  EXPECT_EQ(holds.size(), 0u);
}

TEST(BudgetHoldsTest, TriedAgainAfterTheRecheckOrThePeriodsResetWhicheverIsFirst) {
  BudgetHolds holds;
  holds.Refused("w-1", kSettings, kNow, absl::Hours(30));
  EXPECT_FALSE(holds.Holds("w-1", kSettings, kNow + kBudgetRecheck));
  holds.Refused("w-2", kSettings, kNow, absl::Seconds(5));
  EXPECT_TRUE(holds.Holds("w-2", kSettings, kNow + absl::Seconds(4)));
  EXPECT_FALSE(holds.Holds("w-2", kSettings, kNow + absl::Seconds(5)));
}

TEST(BudgetHoldsTest, KeepDropsWorkspacesThatLeftTheQueue) {
  BudgetHolds holds;
  holds.Refused("w-1", kSettings, kNow, std::nullopt);
  holds.Refused("w-2", kSettings, kNow, std::nullopt);
  holds.Keep([](const std::string& id) { return id == "w-2"; });
  EXPECT_EQ(holds.size(), 1u);
  EXPECT_TRUE(holds.Holds("w-2", kSettings, kNow));
}

}  // namespace
}  // namespace wsched::pipeline
