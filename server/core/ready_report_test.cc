#include "server/core/ready_report.h"

#include "gtest/gtest.h"
#include "server/core/error_reason.h"

namespace wsched::core {
namespace {

const absl::Time kPlaced = absl::FromUnixSeconds(1800000000);
const absl::Time kNow = kPlaced + absl::Minutes(3);

Workspace Placed() {
  Workspace w;
  w.id = "ws-1";
  w.state = WorkspaceState::kPlaced;
  w.placed_at = kPlaced;
  return w;
}

ErrorDetails DetailsOrEmpty(const absl::Status& status) {
  return DetailsOf(status).value_or(ErrorDetails());
}

TEST(ReadyReportTest, AReportedTimeSinceThePlacementIsStored) {
  auto judged = JudgeReadyReport(Placed(), kPlaced + absl::Seconds(40), kNow);
  ASSERT_TRUE(judged.ok()) << judged.status();
  EXPECT_EQ(*judged, kPlaced + absl::Seconds(40));
  // The very instant it was placed, and up to a minute ahead of the clock.
  EXPECT_EQ(*JudgeReadyReport(Placed(), kPlaced, kNow), kPlaced);
  EXPECT_EQ(*JudgeReadyReport(Placed(), kNow + absl::Minutes(1), kNow), kNow + absl::Minutes(1));
}

TEST(ReadyReportTest, WithoutATimeItIsNowButNeverBeforeThePlacement) {
  EXPECT_EQ(*JudgeReadyReport(Placed(), std::nullopt, kNow), kNow);
  // The server's clock a moment behind the database's, which dated the placement.
  EXPECT_EQ(*JudgeReadyReport(Placed(), std::nullopt, kPlaced - absl::Milliseconds(5)), kPlaced);
}

TEST(ReadyReportTest, TheFirstReportOfAPlacementWins) {
  Workspace w = Placed();
  w.ready_at = kPlaced + absl::Seconds(10);
  auto judged = JudgeReadyReport(w, kPlaced + absl::Seconds(50), kNow);
  ASSERT_TRUE(judged.ok()) << judged.status();
  EXPECT_EQ(*judged, std::nullopt);
  EXPECT_EQ(*JudgeReadyReport(w, std::nullopt, kNow), std::nullopt);
}

TEST(ReadyReportTest, OnlyAPlacedWorkspaceBecomesReady) {
  for (WorkspaceState state :
       {WorkspaceState::kPending, WorkspaceState::kStopped, WorkspaceState::kLost}) {
    Workspace w = Placed();
    w.state = state;
    absl::Status refused = JudgeReadyReport(w, std::nullopt, kNow).status();
    EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
    ErrorDetails details = DetailsOrEmpty(refused);
    EXPECT_EQ(details.reason, ErrorReason::kWorkspaceNotPlaced);
    EXPECT_EQ(details.metadata["state"], WorkspaceStateName(state));
    EXPECT_EQ(details.metadata["workspace"], "ws-1");
  }
}

TEST(ReadyReportTest, ATimeBeforeThePlacementOrOfTheFutureNamesTheField) {
  for (absl::Time bad : {kPlaced - absl::Seconds(1), kNow + absl::Minutes(1) + absl::Seconds(1)}) {
    absl::Status refused = JudgeReadyReport(Placed(), bad, kNow).status();
    EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << refused;
    ErrorDetails details = DetailsOrEmpty(refused);
    EXPECT_EQ(details.reason, ErrorReason::kInvalidField);
    ASSERT_EQ(details.field_violations.size(), 1u);
    EXPECT_EQ(details.field_violations[0].field, "ready_time");
  }
  // Refused even when it reported ready before: the request itself is wrong.
  Workspace ready = Placed();
  ready.ready_at = kPlaced;
  EXPECT_EQ(JudgeReadyReport(ready, kPlaced - absl::Hours(1), kNow).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace wsched::core
