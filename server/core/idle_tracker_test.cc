#include "server/core/idle_tracker.h"

#include <optional>
#include <vector>

#include "gtest/gtest.h"

namespace wsched::core {
namespace {

using Phase = IdleTracker::Phase;

const absl::Time kStart = absl::FromUnixSeconds(1700000000);

absl::Time At(absl::Duration offset) { return kStart + offset; }

IdlePolicy Notify(int below = 5, absl::Duration idle_for = absl::Minutes(30)) {
  IdlePolicy policy;
  policy.utilization_below_percent = below;
  policy.idle_for = idle_for;
  return policy;
}

IdlePolicy Stop(absl::Duration idle_for, absl::Duration warn_before) {
  IdlePolicy policy = Notify(5, idle_for);
  policy.action = IdleAction::kStop;
  policy.warn_before = warn_before;
  return policy;
}

using Samples = std::vector<std::optional<int>>;

// A heartbeat every 10 s from `from` to `to` (inclusive) with `samples`.
void Every10s(IdleTracker& tracker, const IdlePolicy& policy, const Samples& samples,
              absl::Duration from, absl::Duration to) {
  for (absl::Duration t = from; t <= to; t += absl::Seconds(10)) {
    tracker.Observe("ws", policy, samples, At(t));
  }
}

TEST(IdleTrackerTest, IdleAfterEverySampleStayedBelowForTheWholeDuration) {
  IdleTracker tracker(absl::Seconds(30));
  const IdlePolicy policy = Notify();
  Every10s(tracker, policy, {0, 4}, absl::ZeroDuration(), absl::Minutes(29) + absl::Seconds(50));
  EXPECT_EQ(tracker.At("ws", At(absl::Minutes(29) + absl::Seconds(50))).phase, Phase::kCounting);
  tracker.Observe("ws", policy, {0, 4}, At(absl::Minutes(30)));
  IdleTracker::Verdict verdict = tracker.At("ws", At(absl::Minutes(30)));
  EXPECT_EQ(verdict.phase, Phase::kIdle);
  EXPECT_EQ(verdict.idle_since, kStart);  // The clock starts at the first idle sample.
  EXPECT_EQ(verdict.stops_at, std::nullopt);  // Notify never stops.
  // Notify stays idle; it never becomes a stop.
  EXPECT_EQ(tracker.At("ws", At(absl::Minutes(30) + absl::Seconds(20))).phase, Phase::kIdle);
}

TEST(IdleTrackerTest, OneActiveSampleStartsTheClockAgain) {
  IdleTracker tracker(absl::Seconds(30));
  const IdlePolicy policy = Notify();
  Every10s(tracker, policy, {0}, absl::ZeroDuration(), absl::Minutes(20));
  tracker.Observe("ws", policy, {37}, At(absl::Minutes(20) + absl::Seconds(10)));
  EXPECT_EQ(tracker.At("ws", At(absl::Minutes(20) + absl::Seconds(10))).phase, Phase::kActive);
  Every10s(tracker, policy, {0}, absl::Minutes(20) + absl::Seconds(20), absl::Minutes(35));
  IdleTracker::Verdict verdict = tracker.At("ws", At(absl::Minutes(35)));
  EXPECT_EQ(verdict.phase, Phase::kCounting);  // 14m40s since the activity, not 35m.
  EXPECT_EQ(verdict.idle_since, At(absl::Minutes(20) + absl::Seconds(20)));
}

TEST(IdleTrackerTest, ASampleAtTheThresholdIsActivityAndOneBelowIsIdle) {
  IdleTracker tracker(absl::Seconds(30));
  const IdlePolicy policy = Notify(/*below=*/5, absl::Minutes(1));
  tracker.Observe("ws", policy, {4}, At(absl::ZeroDuration()));
  tracker.Observe("ws", policy, {4}, At(absl::Seconds(20)));
  EXPECT_EQ(tracker.At("ws", At(absl::Seconds(20))).phase, Phase::kCounting);
  tracker.Observe("ws", policy, {5}, At(absl::Seconds(40)));  // At the threshold: in use.
  EXPECT_EQ(tracker.At("ws", At(absl::Seconds(40))).phase, Phase::kActive);
  tracker.Observe("ws", policy, {4}, At(absl::Seconds(60)));
  tracker.Observe("ws", policy, {4}, At(absl::Seconds(80)));
  tracker.Observe("ws", policy, {4}, At(absl::Seconds(100)));
  tracker.Observe("ws", policy, {4}, At(absl::Seconds(120)));
  IdleTracker::Verdict verdict = tracker.At("ws", At(absl::Seconds(120)));
  EXPECT_EQ(verdict.phase, Phase::kIdle);
  EXPECT_EQ(verdict.idle_since, At(absl::Seconds(60)));
}

TEST(IdleTrackerTest, EveryGpuMustBeIdleAndOneBusyGpuKeepsTheWorkspaceActive) {
  IdleTracker tracker(absl::Seconds(30));
  const IdlePolicy policy = Notify(5, absl::Minutes(1));
  Every10s(tracker, policy, {0, 0, 0, 80}, absl::ZeroDuration(), absl::Minutes(5));
  EXPECT_EQ(tracker.At("ws", At(absl::Minutes(5))).phase, Phase::kActive);
  // The busy GPU falls silent too: now all four are idle, counted from here.
  Every10s(tracker, policy, {0, 0, 0, 0}, absl::Minutes(5) + absl::Seconds(10), absl::Minutes(6));
  EXPECT_EQ(tracker.At("ws", At(absl::Minutes(6))).phase, Phase::kCounting);
  tracker.Observe("ws", policy, {0, 0, 0, 0}, At(absl::Minutes(6) + absl::Seconds(10)));
  EXPECT_EQ(tracker.At("ws", At(absl::Minutes(6) + absl::Seconds(10))).phase, Phase::kIdle);
}

TEST(IdleTrackerTest, AGpuTheAgentDidNotReportIsNeverIdle) {
  IdleTracker tracker(absl::Seconds(30));
  const IdlePolicy policy = Notify(5, absl::Minutes(1));
  // One of two GPUs has no utilisation (bound to vfio-pci, nvidia-smi failed).
  Every10s(tracker, policy, {0, std::nullopt}, absl::ZeroDuration(), absl::Minutes(10));
  EXPECT_EQ(tracker.At("ws", At(absl::Minutes(10))).phase, Phase::kActive);
  // A heartbeat without any usage for the workspace's GPUs.
  Every10s(tracker, policy, {}, absl::Minutes(10), absl::Minutes(20));
  EXPECT_EQ(tracker.At("ws", At(absl::Minutes(20))).phase, Phase::kActive);
}

TEST(IdleTrackerTest, NoRecentSampleIsNotIdleAndAGapStartsTheClockAgain) {
  IdleTracker tracker(absl::Seconds(30));
  const IdlePolicy policy = Notify(5, absl::Minutes(1));
  Every10s(tracker, policy, {0}, absl::ZeroDuration(), absl::Seconds(50));
  EXPECT_EQ(tracker.At("ws", At(absl::Seconds(50))).phase, Phase::kCounting);
  // The agent stops reporting: the clock alone never makes it idle.
  EXPECT_EQ(tracker.At("ws", At(absl::Seconds(90))).phase, Phase::kActive);
  // Samples resume after the gap: counted from the first new one.
  tracker.Observe("ws", policy, {0}, At(absl::Seconds(120)));
  EXPECT_EQ(tracker.At("ws", At(absl::Seconds(120))).idle_since, At(absl::Seconds(120)));
  // Untracked workspaces are never idle.
  EXPECT_EQ(tracker.At("other", At(absl::Seconds(120))).phase, Phase::kActive);
}

TEST(IdleTrackerTest, StopWarnsWarnBeforeAheadThenFallsDueAtFor) {
  IdleTracker tracker(absl::Seconds(30));
  const IdlePolicy policy = Stop(absl::Minutes(30), absl::Minutes(5));
  Every10s(tracker, policy, {1}, absl::ZeroDuration(), absl::Minutes(31));
  IdleTracker::Verdict counting = tracker.At("ws", At(absl::Minutes(24) + absl::Seconds(59)));
  EXPECT_EQ(counting.phase, Phase::kCounting);
  EXPECT_EQ(counting.stops_at, At(absl::Minutes(30)));
  IdleTracker::Verdict warned = tracker.At("ws", At(absl::Minutes(25)));
  EXPECT_EQ(warned.phase, Phase::kIdle);
  EXPECT_EQ(warned.stops_at, At(absl::Minutes(30)));
  EXPECT_EQ(tracker.At("ws", At(absl::Minutes(29) + absl::Seconds(59))).phase, Phase::kIdle);
  EXPECT_EQ(tracker.At("ws", At(absl::Minutes(30))).phase, Phase::kStopDue);
}

TEST(IdleTrackerTest, ActivityAfterTheWarningCancelsTheStop) {
  IdleTracker tracker(absl::Seconds(30));
  const IdlePolicy policy = Stop(absl::Minutes(30), absl::Minutes(5));
  Every10s(tracker, policy, {0}, absl::ZeroDuration(), absl::Minutes(27));
  EXPECT_EQ(tracker.At("ws", At(absl::Minutes(27))).phase, Phase::kIdle);
  tracker.Observe("ws", policy, {12}, At(absl::Minutes(27) + absl::Seconds(10)));
  Every10s(tracker, policy, {0}, absl::Minutes(27) + absl::Seconds(20), absl::Minutes(31));
  IdleTracker::Verdict verdict = tracker.At("ws", At(absl::Minutes(31)));
  EXPECT_EQ(verdict.phase, Phase::kCounting);
  EXPECT_EQ(verdict.stops_at, At(absl::Minutes(57) + absl::Seconds(20)));
}

TEST(IdleTrackerTest, StopWithoutWarnBeforeWarnsAndFallsDueAtOnce) {
  IdleTracker tracker(absl::Seconds(30));
  const IdlePolicy policy = Stop(absl::Minutes(10), absl::ZeroDuration());
  Every10s(tracker, policy, {0}, absl::ZeroDuration(), absl::Minutes(10));
  EXPECT_EQ(tracker.At("ws", At(absl::Minutes(9) + absl::Seconds(59))).phase, Phase::kCounting);
  EXPECT_EQ(tracker.At("ws", At(absl::Minutes(10))).phase, Phase::kStopDue);
}

TEST(IdleTrackerTest, AChangedPolicyStartsTheClockAgain) {
  IdleTracker tracker(absl::Seconds(30));
  Every10s(tracker, Notify(5, absl::Minutes(1)), {3}, absl::ZeroDuration(), absl::Seconds(50));
  Every10s(tracker, Notify(10, absl::Minutes(1)), {3}, absl::Seconds(60), absl::Seconds(100));
  IdleTracker::Verdict verdict = tracker.At("ws", At(absl::Seconds(100)));
  EXPECT_EQ(verdict.phase, Phase::kCounting);
  EXPECT_EQ(verdict.idle_since, At(absl::Seconds(60)));
  EXPECT_EQ(tracker.PolicyOf("ws")->utilization_below_percent, 10);
}

TEST(IdleTrackerTest, ALateOlderHeartbeatChangesNothing) {
  IdleTracker tracker(absl::Seconds(30));
  const IdlePolicy policy = Notify(5, absl::Minutes(1));
  Every10s(tracker, policy, {0}, absl::ZeroDuration(), absl::Minutes(1));
  tracker.Observe("ws", policy, {90}, At(absl::Seconds(30)));  // Delivered after later ones.
  EXPECT_EQ(tracker.At("ws", At(absl::Minutes(1))).phase, Phase::kIdle);
}

TEST(IdleTrackerTest, PruneDropsWorkspacesWithoutRecentSamples) {
  IdleTracker tracker(absl::Seconds(30));
  tracker.Observe("old", Notify(), {0}, At(absl::ZeroDuration()));
  tracker.Observe("new", Notify(), {0}, At(absl::Seconds(40)));
  EXPECT_EQ(tracker.Prune(At(absl::Seconds(45))), std::vector<std::string>{"old"});
  EXPECT_EQ(tracker.Tracked(), std::vector<std::string>{"new"});
  tracker.Forget("new");
  EXPECT_TRUE(tracker.Tracked().empty());
  EXPECT_EQ(tracker.PolicyOf("new"), nullptr);
}

TEST(IdleActionTest, NamesParseBack) {
  for (IdleAction action : {IdleAction::kNotify, IdleAction::kStop}) {
    EXPECT_EQ(ParseIdleAction(IdleActionName(action)), action);
  }
  EXPECT_EQ(ParseIdleAction("Stop"), std::nullopt);
}

}  // namespace
}  // namespace wsched::core
