#include "server/core/driver_rollout.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::core {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

RolloutNode Outdated(const std::string& name, int workspaces = 0) {
  return {name, DriverState::kOutdated, false, workspaces, ""};
}
RolloutNode Released(const std::string& name, DriverState state, int workspaces = 0) {
  return {name, state, true, workspaces, state == DriverState::kInstallFailed ? "exit status 1" : ""};
}

TEST(PlanRolloutTest, NothingOutdatedIsNoRollout) {
  RolloutStep step = PlanRollout({}, {{"a", DriverState::kReady, false, 0, ""}}, std::nullopt);
  EXPECT_THAT(step.release, IsEmpty());
  EXPECT_FALSE(step.record.has_value());
}

TEST(PlanRolloutTest, TheFirstReleaseIsAnIdleCanaryAlone) {
  DriverRollout settings{.max_unavailable = 3};
  RolloutStep step =
      PlanRollout(settings, {Outdated("a", 2), Outdated("b", 0), Outdated("c", 0)}, std::nullopt);
  EXPECT_THAT(step.release, ElementsAre("b"));
  ASSERT_TRUE(step.record.has_value());
  EXPECT_EQ(step.record->canary, "b");
  EXPECT_EQ(step.counts.in_flight, 1);
  EXPECT_EQ(step.counts.waiting, 2);
}

TEST(PlanRolloutTest, NothingMoreIsReleasedWhileTheCanaryInstalls) {
  RolloutRecord record{.canary = "b"};
  for (DriverState state : {DriverState::kNeedsDriver, DriverState::kInstalling}) {
    RolloutStep step = PlanRollout({.max_unavailable = 3},
                                   {Outdated("a"), Released("b", state), Outdated("c")}, record);
    EXPECT_THAT(step.release, IsEmpty()) << DriverStateName(state);
  }
}

TEST(PlanRolloutTest, AReadyCanaryReleasesTheRestAtMostNAtATimeIdleFirst) {
  RolloutRecord record{.canary = "b"};
  std::vector<RolloutNode> nodes = {Outdated("a", 1), {"b", DriverState::kReady, true, 0, ""},
                                    Outdated("c", 0), Outdated("d", 0), Outdated("e", 4)};
  RolloutStep step = PlanRollout({.max_unavailable = 2}, nodes, record);
  EXPECT_THAT(step.release, ElementsAre("c", "d"));
  // Two in flight: nothing more until one is ready.
  nodes[2] = Released("c", DriverState::kInstalling);
  nodes[3] = Released("d", DriverState::kNeedsDriver);
  EXPECT_THAT(PlanRollout({.max_unavailable = 2}, nodes, record).release, IsEmpty());
  nodes[2].state = DriverState::kReady;
  EXPECT_THAT(PlanRollout({.max_unavailable = 2}, nodes, record).release, ElementsAre("a"));
}

TEST(PlanRolloutTest, AFailedCanaryStopsTheRolloutOnceAndAResumeWaitsForItsRetry) {
  std::vector<RolloutNode> nodes = {Outdated("a"), Released("b", DriverState::kInstallFailed),
                                    Outdated("c")};
  RolloutStep step = PlanRollout({.max_unavailable = 2}, nodes, RolloutRecord{.canary = "b"});
  EXPECT_TRUE(step.stopped_now);
  ASSERT_TRUE(step.record.has_value());
  EXPECT_TRUE(step.record->paused);
  EXPECT_EQ(step.record->reason, "canary b failed: exit status 1");
  EXPECT_THAT(step.release, IsEmpty());
  EXPECT_EQ(step.counts.failed, 1);

  // An admin resumes: the same failure does not stop it again, and the
  // canary still goes alone until it is ready.
  RolloutRecord resumed = *step.record;
  resumed.paused = false;
  resumed.reason.clear();
  step = PlanRollout({.max_unavailable = 2}, nodes, resumed);
  EXPECT_FALSE(step.stopped_now);
  EXPECT_FALSE(step.record->paused);
  EXPECT_THAT(step.release, IsEmpty());

  // Its retry runs (a new chance to fail), and fails again: stopped again.
  nodes[1].state = DriverState::kInstalling;
  step = PlanRollout({.max_unavailable = 2}, nodes, *step.record);
  EXPECT_FALSE(step.record->canary_failure_seen);
  nodes[1].state = DriverState::kInstallFailed;
  step = PlanRollout({.max_unavailable = 2}, nodes, *step.record);
  EXPECT_TRUE(step.stopped_now);
}

TEST(PlanRolloutTest, APausedRolloutReleasesNothing) {
  RolloutRecord record{.canary = "b", .paused = true, .reason = "paused by admin"};
  RolloutStep step = PlanRollout(
      {}, {Outdated("a"), {"b", DriverState::kReady, true, 0, ""}}, record);
  EXPECT_THAT(step.release, IsEmpty());
  EXPECT_EQ(step.record->reason, "paused by admin");
}

TEST(PlanRolloutTest, APauseBeforeAPolicyChangeIsKept) {
  RolloutRecord paused{.paused = true, .reason = "maintenance window"};
  RolloutStep step = PlanRollout({}, {{"a", DriverState::kReady, false, 0, ""}}, paused);
  ASSERT_TRUE(step.record.has_value());
  EXPECT_EQ(*step.record, paused);
  step = PlanRollout({}, {Outdated("a")}, paused);
  EXPECT_THAT(step.release, IsEmpty());
}

TEST(PlanRolloutTest, ACanaryThatLeftThePoolIsReplaced) {
  RolloutStep step = PlanRollout({}, {Outdated("a"), Outdated("c")}, RolloutRecord{.canary = "gone"});
  EXPECT_THAT(step.release, ElementsAre("a"));
  EXPECT_EQ(step.record->canary, "a");
}

TEST(PlanRolloutTest, TheRolloutEndsWhenEveryNodeIsReady) {
  RolloutStep step = PlanRollout({}, {{"a", DriverState::kReady, true, 0, ""}},
                                 RolloutRecord{.canary = "a"});
  EXPECT_FALSE(step.record.has_value());
}

TEST(InstallMayStartTest, AReleasedNodeWaitsForItsWorkspacesOrTheDeadline) {
  NodeInfo node;
  node.kernel_version = "6.1.0-18-amd64";
  node.driver_version = "550.54.15";
  DriverHistory history;
  history.verified_kernel = node.kernel_version;
  history.released_driver = "560.35.03";
  history.released_at = absl::FromUnixSeconds(1000);
  const absl::Time now = absl::FromUnixSeconds(1000) + absl::Minutes(30);
  EXPECT_TRUE(InstallMayStart(history, node, "560.35.03", 0, {}, now));
  EXPECT_FALSE(InstallMayStart(history, node, "560.35.03", 1, {}, now));
  DriverRollout deadline{.drain_deadline = absl::Hours(1)};
  EXPECT_FALSE(InstallMayStart(history, node, "560.35.03", 1, deadline, now));
  EXPECT_TRUE(InstallMayStart(history, node, "560.35.03", 1, deadline, now + absl::Minutes(30)));
}

TEST(InstallMayStartTest, AKernelChangeInstallsAtOnceWhateverRunsOnTheNode) {
  NodeInfo node;
  node.kernel_version = "6.1.0-20-amd64";  // Rebooted into a new kernel.
  DriverHistory history;
  history.verified_kernel = "6.1.0-18-amd64";
  history.released_driver = "560.35.03";
  EXPECT_TRUE(InstallMayStart(history, node, "560.35.03", 3, {}, absl::UnixEpoch()));
}

}  // namespace
}  // namespace wsched::core
