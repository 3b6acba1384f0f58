#include "server/simulate/org_budgets.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/test_nodes.h"
#include "server/simulate/engine.h"

namespace wsched::simulate {
namespace {

using ::testing::SizeIs;

const absl::TimeZone kUtc = absl::UTCTimeZone();
// An hour of one whole GPU, in sevenths.
constexpr int64_t kOneGpu = 7;

absl::Time At(int month, int day, int hour, int minute = 0) {
  return absl::FromCivil(absl::CivilSecond(2026, month, day, hour, minute, 0), kUtc);
}

core::SpendingLimit Hours(double gpu_hours,
                          core::SpendingAction action = core::SpendingAction::kBlockNew) {
  return {.gpu_hours = gpu_hours, .action = action};
}

TEST(OrgBudgets, AdmitsWhileSpentAndTheFirstIntervalFitAndCountsEachMonthAnew) {
  OrgBudgets budgets({{"o", Hours(1)}}, absl::Minutes(1));
  EXPECT_TRUE(budgets.Admits("o", kOneGpu, At(3, 31, 22)));
  budgets.Started("o", "w1", kOneGpu, At(3, 31, 22));
  // 59 minutes spent and one committed: the hour is full, not past.
  EXPECT_TRUE(budgets.Admits("o", kOneGpu, At(3, 31, 22, 59)));
  const absl::Time later = At(3, 31, 22, 59) + absl::Seconds(30);
  EXPECT_FALSE(budgets.Admits("o", kOneGpu, later));
  EXPECT_TRUE(budgets.Admits("o", 0, later)) << "no GPU: not judged";
  EXPECT_TRUE(budgets.Admits("other", kOneGpu, later)) << "no limit";
  // April counts from its midnight: half an hour of w1 so far.
  EXPECT_TRUE(budgets.Admits("o", kOneGpu, At(4, 1, 0, 30)));
  budgets.Ended("o", "w1", At(4, 1, 1));
  std::vector<BudgetResult> results = budgets.Finish(At(4, 1, 2));
  ASSERT_THAT(results, SizeIs(1));
  // March saw 2 GPU-hours of w1 (22:00 to midnight), April one.
  EXPECT_EQ(results[0].most_spent, 2 * core::kGpuMicrosPerGpuHour);
}

TEST(OrgBudgets, ARunningWorkspaceCountsItsFirstIntervalForAdmission) {
  OrgBudgets budgets({{"o", Hours(1.0 / 60)}}, absl::Minutes(1));  // One GPU-minute.
  budgets.Started("o", "w1", kOneGpu, At(3, 2, 8));
  // Ten seconds in, w1 has committed its whole first minute.
  EXPECT_FALSE(budgets.Admits("o", 1, At(3, 2, 8) + absl::Seconds(10)));
}

TEST(OrgBudgets, BlockAndStopIsReachedAtTheRateOfSpending) {
  OrgBudgets budgets({{"o", Hours(2, core::SpendingAction::kBlockAndStop)}}, absl::Minutes(1));
  budgets.Started("o", "w1", kOneGpu, At(3, 2, 8));
  budgets.Started("o", "w2", 2 * kOneGpu, At(3, 2, 8));
  // Three GPUs spend two GPU-hours in 40 minutes.
  ASSERT_EQ(budgets.NextReach("o", At(3, 2, 8)), At(3, 2, 8, 40));
  EXPECT_FALSE(budgets.Reached("o", At(3, 2, 8, 39)));
  EXPECT_TRUE(budgets.Reached("o", At(3, 2, 8, 40)));
  budgets.Warn("o");
  EXPECT_EQ(budgets.NextReach("o", At(3, 2, 8, 40)), std::nullopt) << "warned once";
  EXPECT_TRUE(budgets.StopDue("o", At(3, 2, 8, 50)));
  EXPECT_FALSE(budgets.StopDue("o", At(3, 2, 8, 50))) << "the warning is over";
}

TEST(OrgBudgets, NoStopWhenThePeriodEndedDuringTheWarning) {
  OrgBudgets budgets({{"o", Hours(1, core::SpendingAction::kBlockAndStop)}}, absl::Minutes(1));
  budgets.Started("o", "w1", kOneGpu, At(3, 31, 22, 50));
  ASSERT_EQ(budgets.NextReach("o", At(3, 31, 22, 50)), At(3, 31, 23, 50));
  budgets.Warn("o");
  EXPECT_FALSE(budgets.StopDue("o", At(4, 1, 0, 0))) << "April: 0 spent";
}

// The replay through the engine: the server's placement, a warm node.
class BudgetReplayTest : public ::testing::Test {
 protected:
  BudgetReplayTest() {
    core::NodePool gpu = placement::testing::GpuPool("gpu", "h100");
    gpu.min_size = 1;
    gpu.max_size = 1;
    input_.catalog.pools = {gpu};
    input_.catalog.classes = {placement::testing::GpuClass("gpu-1x", 1),
                              placement::testing::GpuClass("gpu-8x", 8)};
    input_.timings["gpu"] = {.node_start = absl::Minutes(3)};
  }
  Arrival At(absl::Time when, const std::string& class_id, absl::Duration duration) {
    Arrival a;
    a.id = absl::StrCat("w-", ++line_);
    a.time = when;
    a.org = "o";
    a.class_id = class_id;
    a.duration = duration;
    a.line = line_;
    return a;
  }
  SimulationResult Run(const std::vector<Arrival>& trace) {
    absl::StatusOr<SimulationResult> result = Simulate(input_, trace);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *std::move(result) : SimulationResult{};
  }

  SimulationInput input_;
  int line_ = 0;
};

TEST_F(BudgetReplayTest, BlockNewRefusesPastTheLimitAndTheNextMonthOpensAgain) {
  input_.org_limits["o"] = Hours(1);
  SimulationResult result = Run({At(::wsched::simulate::At(3, 31, 22), "gpu-1x", absl::Hours(3)),
                                 At(::wsched::simulate::At(3, 31, 23, 30), "gpu-1x", absl::Hours(1)),
                                 At(::wsched::simulate::At(4, 1, 0, 30), "gpu-1x", absl::Hours(1))});
  ASSERT_THAT(result.workspaces, SizeIs(3));
  EXPECT_EQ(result.workspaces[0].placed_at, ::wsched::simulate::At(3, 31, 22));
  EXPECT_EQ(result.workspaces[1].placed_at, std::nullopt) << "1.5 of 1 GPU-hours spent";
  EXPECT_EQ(result.workspaces[2].placed_at, ::wsched::simulate::At(4, 1, 0, 30));
  ASSERT_THAT(result.budgets, SizeIs(1));
  EXPECT_EQ(result.budgets[0].refused, 1);
  EXPECT_EQ(result.budgets[0].stopped, 0) << "block_new: w1 runs on";
  EXPECT_EQ(result.budgets[0].most_spent, 2 * core::kGpuMicrosPerGpuHour);
}

TEST_F(BudgetReplayTest, BlockAndStopStopsTheOrgsWorkspacesAfterTheWarning) {
  input_.org_limits["o"] = Hours(1, core::SpendingAction::kBlockAndStop);
  input_.org_limits["o"].stop_warning = absl::Minutes(10);
  const absl::Time t0 = ::wsched::simulate::At(3, 2, 8);
  SimulationResult result = Run({At(t0, "gpu-1x", absl::Hours(5))});
  ASSERT_THAT(result.budgets, SizeIs(1));
  EXPECT_EQ(result.budgets[0].stopped, 1);
  // Reached after an hour, stopped ten minutes later.
  // (The reach is found at the rate in floating point: within microseconds.)
  EXPECT_NEAR(result.budgets[0].most_spent, core::GpuMicrosOf(Hours(70.0 / 60)), 10);
  EXPECT_NEAR(result.pools[0].gpu_hours_used, 70.0 / 60, 1e-9);
}

TEST_F(BudgetReplayTest, AQueuedWorkspaceAtTheLimitWaitsForTheNextPeriod) {
  input_.org_limits["o"] = Hours(10);
  // w1 fills the one node (8 GPUs, 16 GPU-hours in two hours); w2 queues
  // behind it, and when w1 ends the limit holds it back until April.
  SimulationResult result =
      Run({At(::wsched::simulate::At(3, 31, 20), "gpu-8x", absl::Hours(2)),
           At(::wsched::simulate::At(3, 31, 20, 30), "gpu-8x", absl::Hours(1))});
  ASSERT_THAT(result.workspaces, SizeIs(2));
  EXPECT_EQ(result.workspaces[1].placed_at, ::wsched::simulate::At(4, 1, 0));
  EXPECT_EQ(result.budgets[0].held_back, 1);
  EXPECT_EQ(result.budgets[0].refused, 0) << "queued, not refused";
}

}  // namespace
}  // namespace wsched::simulate
