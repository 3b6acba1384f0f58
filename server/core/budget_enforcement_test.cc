#include "server/core/budget_enforcement.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::core {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const absl::Time kNow = absl::FromUnixSeconds(1'780'000'000);
const absl::Time kPlaced = kNow - absl::Hours(1);

// A scope limited to 10 GPU-seconds a UTC month, `spent` GPU-seconds spent.
ScopeSpending Spending(double spent_gpu_seconds,
                       SpendingAction action = SpendingAction::kBlockAndStop) {
  ScopeSpending spending;
  spending.scope = "org:o-1";
  spending.limit.gpu_hours = 10.0 / 3600;
  spending.limit.action = action;
  spending.limit.warn_at_percent = {50, 80, 100};
  spending.period = {kNow - absl::Hours(24), kNow + absl::Hours(24)};
  spending.spent = static_cast<int64_t>(spent_gpu_seconds * kGpuMicrosPerGpuSecond);
  return spending;
}

BudgetedWorkspace Running(std::string id, std::optional<BudgetMark> mark = std::nullopt) {
  return {std::move(id), 7, kPlaced, std::move(mark)};
}

BudgetMark Warning(std::string scope, absl::Time stops_at, absl::Time placed_at = kPlaced) {
  BudgetMark mark;
  mark.scope = std::move(scope);
  mark.placed_at = placed_at;
  mark.stops_at = stops_at;
  return mark;
}

std::vector<BudgetStep::Kind> Kinds(const std::vector<BudgetStep>& steps) {
  std::vector<BudgetStep::Kind> kinds;
  for (const BudgetStep& step : steps) kinds.push_back(step.kind);
  return kinds;
}

TEST(DecideBudgetStops, UnderTheLimitNothingHappens) {
  EXPECT_THAT(DecideBudgetStops(Spending(9.999999), {Running("w-1")}, kNow), IsEmpty());
}

TEST(DecideBudgetStops, AtTheLimitWarnsWithTheLimitsWarningPeriod) {
  ScopeSpending spending = Spending(10);
  spending.limit.stop_warning = absl::Minutes(3);
  const std::vector<BudgetStep> steps = DecideBudgetStops(spending, {Running("w-1")}, kNow);
  ASSERT_THAT(Kinds(steps), ElementsAre(BudgetStep::Kind::kWarn));
  EXPECT_EQ(steps[0].workspace, "w-1");
  EXPECT_EQ(steps[0].version, 7);
  ASSERT_TRUE(steps[0].mark.has_value());
  const BudgetMark& mark = *steps[0].mark;
  EXPECT_EQ(mark.kind, BudgetMark::Kind::kWarning);
  EXPECT_EQ(mark.scope, "org:o-1");
  EXPECT_EQ(mark.placed_at, kPlaced);
  EXPECT_EQ(mark.stops_at, kNow + absl::Minutes(3));
  EXPECT_EQ(mark.spent, 10 * kGpuMicrosPerGpuSecond);
  EXPECT_EQ(mark.limit, 10 * kGpuMicrosPerGpuSecond);
  EXPECT_EQ(mark.period_end, kNow + absl::Hours(24));
}

TEST(DecideBudgetStops, UnsetWarningPeriodIsTheDefault) {
  const auto steps = DecideBudgetStops(Spending(11), {Running("w-1")}, kNow);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].mark->stops_at, kNow + kDefaultStopWarning);
}

TEST(DecideBudgetStops, WarnedWorkspaceWaitsUntilStopsAtThenStops) {
  const auto warned = Running("w-1", Warning("org:o-1", kNow + absl::Seconds(1)));
  EXPECT_THAT(DecideBudgetStops(Spending(12), {warned}, kNow), IsEmpty());
  EXPECT_THAT(Kinds(DecideBudgetStops(Spending(12), {warned}, kNow + absl::Seconds(1))),
              ElementsAre(BudgetStep::Kind::kStop));
}

TEST(DecideBudgetStops, BackUnderTheLimitClearsTheScopesWarningInsteadOfStopping) {
  const auto warned = Running("w-1", Warning("org:o-1", kNow - absl::Seconds(5)));
  EXPECT_THAT(Kinds(DecideBudgetStops(Spending(9), {warned}, kNow)),
              ElementsAre(BudgetStep::Kind::kClear));
}

TEST(DecideBudgetStops, ABlockNewLimitOnlyClearsItsOwnWarnings) {
  const auto warned = Running("w-1", Warning("org:o-1", kNow - absl::Seconds(5)));
  EXPECT_THAT(Kinds(DecideBudgetStops(Spending(50, SpendingAction::kBlockNew),
                                      {warned, Running("w-2")}, kNow)),
              ElementsAre(BudgetStep::Kind::kClear));
}

TEST(DecideBudgetStops, AnotherScopesWarningIsLeftToThatScope) {
  const auto warned = Running("w-1", Warning("project:p-1", kNow - absl::Seconds(5)));
  EXPECT_THAT(DecideBudgetStops(Spending(12), {warned}, kNow), IsEmpty());
  EXPECT_THAT(DecideBudgetStops(Spending(1), {warned}, kNow), IsEmpty());
}

TEST(DecideBudgetStops, APreviousPlacementsWarningIsStaleAndWarnedOver) {
  // Stopped by its budget, placed again after the limit was raised, and the
  // limit reached again: the old stops_at says nothing about this placement.
  const auto restarted =
      Running("w-1", Warning("org:o-1", kNow - absl::Hours(2), kPlaced - absl::Hours(3)));
  const auto steps = DecideBudgetStops(Spending(12), {restarted}, kNow);
  ASSERT_THAT(Kinds(steps), ElementsAre(BudgetStep::Kind::kWarn));
  EXPECT_EQ(steps[0].mark->placed_at, kPlaced);
  EXPECT_THAT(DecideBudgetStops(Spending(1), {restarted}, kNow), IsEmpty());
}

TEST(ClearOrphanWarnings, ClearsWarningsOfScopesThatNoLongerStop) {
  const std::vector<BudgetedWorkspace> warned = {
      Running("w-1", Warning("org:o-1", kNow)), Running("w-2", Warning("project:p-1", kNow)),
      Running("w-3", Warning("project:p-2", kNow, kPlaced - absl::Hours(1)))};
  const auto steps = ClearOrphanWarnings(warned, {"org:o-1"});
  ASSERT_THAT(Kinds(steps), ElementsAre(BudgetStep::Kind::kClear));
  EXPECT_EQ(steps[0].workspace, "w-2");
}

TEST(ThresholdsToTell, ReachedAndNotToldYet) {
  EXPECT_THAT(ThresholdsToTell(Spending(4.9), {}), IsEmpty());
  EXPECT_THAT(ThresholdsToTell(Spending(8), {}), ElementsAre(50, 80));
  EXPECT_THAT(ThresholdsToTell(Spending(8), {50}), ElementsAre(80));
  EXPECT_THAT(ThresholdsToTell(Spending(10), {50, 80}), ElementsAre(100));
  EXPECT_THAT(ThresholdsToTell(Spending(10), {50, 80, 100}), IsEmpty());
}

TEST(ThresholdMark, CarriesTheFigures) {
  const BudgetMark mark = ThresholdMark(Spending(8), 80, kPlaced);
  EXPECT_EQ(mark.kind, BudgetMark::Kind::kThreshold);
  EXPECT_EQ(mark.percent, 80);
  EXPECT_EQ(mark.scope, "org:o-1");
  EXPECT_EQ(mark.spent, 8 * kGpuMicrosPerGpuSecond);
  EXPECT_EQ(mark.limit, 10 * kGpuMicrosPerGpuSecond);
  EXPECT_EQ(mark.placed_at, kPlaced);
}

TEST(UsedRatio, SpentOverLimit) {
  EXPECT_DOUBLE_EQ(UsedRatio(Spending(5)), 0.5);
  EXPECT_DOUBLE_EQ(UsedRatio(Spending(15)), 1.5);
  EXPECT_EQ(BudgetScope("project", "p-1"), "project:p-1");
}

}  // namespace
}  // namespace wsched::core
