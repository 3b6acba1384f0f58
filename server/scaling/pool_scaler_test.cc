#include "server/scaling/pool_scaler.h"

#include <ostream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/time_window.h"
#include "server/scaling/test_pools.h"

namespace wsched::scaling {
namespace {

using ::testing::ElementsAre;
using testing::GpuClass;
using testing::GpuPool;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using Reason = ScalingReason;

}  // namespace

// Readable failure messages.
void PrintTo(ScalingReason reason, std::ostream* out) { *out << ScalingReasonName(reason); }

namespace {

// A fake clock and one pool, observed the way the caller's loop would.
class PoolScalerTest : public ::testing::Test {
 protected:
  PoolSignal Evaluate() { return scaler_.Evaluate(observation_, now_); }
  void Advance(absl::Duration d) { now_ += d; }

  void Pend(int gpus, int64_t count) { observation_.pending.push_back({GpuClass(gpus), count}); }

  // A ready node that came up long ago and has been empty since `empty_since`.
  PoolNode& AddReadyNode(const std::string& name, int workspaces, absl::Time empty_since) {
    PoolNode node{.name = name,
                  .state = core::NodeState::kReady,
                  .workspaces = workspaces,
                  .requested_at = kStart - absl::Hours(2),
                  .ready_at = kStart - absl::Hours(2) + absl::Minutes(3),
                  .empty_since = empty_since};
    observation_.nodes.push_back(node);
    return observation_.nodes.back();
  }

  // Evaluates just past the batching window, so pending work counts.
  PoolSignal EvaluateAfterWindow() {
    Evaluate();
    Advance(absl::Seconds(2));
    return Evaluate();
  }

  static inline const absl::Time kStart = absl::FromUnixSeconds(1'700'000'000);
  absl::Time now_ = kStart;
  PoolObservation observation_{.pool = GpuPool()};
  PoolScaler scaler_;
};

TEST_F(PoolScalerTest, EmptyPoolAtZeroStaysThere) {
  PoolSignal signal = Evaluate();
  EXPECT_EQ(signal.pool, "gpu-a100");
  EXPECT_EQ(signal.target_size, 0);
  EXPECT_EQ(signal.generation, 1);
  EXPECT_THAT(signal.reasons, ElementsAre(Reason::kSteady));
  EXPECT_EQ(signal.detail, "warm buffer 0");
}

TEST_F(PoolScalerTest, ScalesUpFromZeroAfterTheBatchingWindowNotBefore) {
  Pend(1, 1);
  PoolSignal signal = Evaluate();
  EXPECT_EQ(signal.target_size, 0);
  EXPECT_THAT(signal.detail, HasSubstr("asking after the batching window, 2s left"));
  Advance(absl::Milliseconds(1999));
  EXPECT_EQ(Evaluate().target_size, 0);
  Advance(absl::Milliseconds(1));
  signal = Evaluate();
  EXPECT_EQ(signal.target_size, 1);
  EXPECT_EQ(signal.current_size, 0);
  EXPECT_THAT(signal.reasons, ElementsAre(Reason::kPendingWorkspaces));
  EXPECT_EQ(signal.detail, "1 pending gpu-1x workspace needs 1 more node; warm buffer 0");
}

TEST_F(PoolScalerTest, AScalerNewToThePoolCountsTheWindowFromWhenTheWorkStartedWaiting) {
  // A new leader's scaler: the work has waited 5 s under the old leader.
  observation_.pending.push_back({GpuClass(1), 1, now_ - absl::Seconds(5)});
  EXPECT_EQ(Evaluate().target_size, 1) << "a failover neither restarts the window nor lowers the target";
}

TEST_F(PoolScalerTest, AScalerNewToThePoolStillWaitsOutWhatIsLeftOfTheWindow) {
  observation_.pending.push_back({GpuClass(1), 1, now_ - absl::Milliseconds(500)});
  PoolSignal signal = Evaluate();
  EXPECT_EQ(signal.target_size, 0);
  EXPECT_THAT(signal.detail, HasSubstr("1.5s left"));
  Advance(absl::Milliseconds(1500));
  EXPECT_EQ(Evaluate().target_size, 1);
}

TEST_F(PoolScalerTest, LaterWorkWaitsItsOwnWindowFromWhenTheScalerSawItUnmet) {
  EXPECT_EQ(Evaluate().target_size, 0);  // The scaler has looked at the pool.
  observation_.pending.push_back({GpuClass(1), 1, now_ - absl::Seconds(5)});
  EXPECT_EQ(Evaluate().target_size, 0);
  Advance(absl::Seconds(2));
  EXPECT_EQ(Evaluate().target_size, 1);
}

TEST_F(PoolScalerTest, BatchingWindowIsConfigurable) {
  PoolScaler scaler({.batching_window = absl::ZeroDuration()});
  Pend(1, 1);
  EXPECT_EQ(scaler.Evaluate(observation_, now_).target_size, 1);
}

TEST_F(PoolScalerTest, NineOneGpuWorkspacesOnEightGpuNodesNeedTwoNodes) {
  Pend(1, 9);
  PoolSignal signal = EvaluateAfterWindow();
  EXPECT_EQ(signal.target_size, 2);
  EXPECT_THAT(signal.detail, HasSubstr("9 pending gpu-1x workspaces need 2 more nodes"));
}

TEST_F(PoolScalerTest, ThreeEightGpuWorkspacesNeedThreeNodes) {
  Pend(8, 3);
  EXPECT_EQ(EvaluateAfterWindow().target_size, 3);
}

TEST_F(PoolScalerTest, PendingWorkOnBusyNodesRoomAsksForNothing) {
  PoolNode& node = AddReadyNode("n1", 4, kStart);
  node.free = Capacity::OfShape(observation_.pool.shape);
  node.free->gpus = 4;
  Pend(1, 4);
  PoolSignal signal = EvaluateAfterWindow();
  EXPECT_EQ(signal.target_size, 1);
  EXPECT_THAT(signal.reasons, ElementsAre(Reason::kSteady));
  EXPECT_THAT(signal.detail, HasSubstr("fit on ready or provisioning nodes"));
}

TEST_F(PoolScalerTest, BusyNodeWithoutKnownRoomCountsAsFull) {
  AddReadyNode("n1", 1, kStart);
  Pend(1, 1);
  EXPECT_EQ(EvaluateAfterWindow().target_size, 2);
}

TEST_F(PoolScalerTest, PendingThatFitsOnAProvisioningNodeAsksForNothingMore) {
  observation_.nodes.push_back({.name = "booting",
                                .state = core::NodeState::kProvisioning,
                                .requested_at = kStart - absl::Minutes(1),
                                .empty_since = kStart});
  Pend(1, 8);
  PoolSignal signal = EvaluateAfterWindow();
  EXPECT_EQ(signal.target_size, 1);
  EXPECT_THAT(signal.reasons, ElementsAre(Reason::kPendingWorkspaces));
  Pend(1, 1);  // The ninth does not fit any more.
  EXPECT_EQ(EvaluateAfterWindow().target_size, 2);
}

TEST_F(PoolScalerTest, ABurstDoesNotAskTwiceForRequestedNodes) {
  Pend(1, 3);
  ASSERT_EQ(EvaluateAfterWindow().target_size, 1);
  // The caller passes the request on; more of the burst arrives.
  observation_.in_flight.push_back({.requested_at = now_, .count = 1});
  Pend(1, 5);
  Advance(absl::Seconds(5));
  PoolSignal signal = Evaluate();
  EXPECT_EQ(signal.target_size, 1);
  EXPECT_THAT(signal.reasons, ElementsAre(Reason::kPendingWorkspaces));
}

TEST_F(PoolScalerTest, NoScaleDownBeforeTheIdleTime) {
  AddReadyNode("n1", 0, kStart);
  Advance(absl::Minutes(10) - absl::Seconds(1));
  PoolSignal signal = Evaluate();
  EXPECT_EQ(signal.target_size, 1);
  EXPECT_THAT(signal.nodes_to_remove, IsEmpty());
  EXPECT_THAT(signal.detail, HasSubstr("1 empty node not idle for 10m yet"));
}

TEST_F(PoolScalerTest, ScalesToZeroNamingTheIdleNode) {
  AddReadyNode("n1", 0, kStart);
  Advance(absl::Minutes(10));
  PoolSignal signal = Evaluate();
  EXPECT_EQ(signal.target_size, 0);
  EXPECT_EQ(signal.current_size, 1);
  EXPECT_THAT(signal.nodes_to_remove, ElementsAre("n1"));
  EXPECT_THAT(signal.reasons, ElementsAre(Reason::kIdleTimeout));
  EXPECT_THAT(signal.detail, HasSubstr("removing idle node n1 (empty for 10m or more)"));
  // Once it is gone the pool rests at zero.
  observation_.nodes.clear();
  signal = Evaluate();
  EXPECT_EQ(signal.target_size, 0);
  EXPECT_THAT(signal.nodes_to_remove, IsEmpty());
}

TEST_F(PoolScalerTest, MinSizeKeepsNodes) {
  observation_.pool.min_size = 1;
  AddReadyNode("n1", 0, kStart - absl::Hours(1));
  PoolSignal signal = Evaluate();
  EXPECT_EQ(signal.target_size, 1);
  EXPECT_THAT(signal.nodes_to_remove, IsEmpty());
  EXPECT_THAT(signal.reasons, ElementsAre(Reason::kMinSize));
}

TEST_F(PoolScalerTest, MinSizeScalesUpAtOnce) {
  observation_.pool.min_size = 2;
  EXPECT_EQ(Evaluate().target_size, 2);
}

TEST_F(PoolScalerTest, NeverNamesANodeHoldingAWorkspace) {
  // The busy node's empty timer is stale on purpose: workspaces decide.
  AddReadyNode("busy", 1, kStart - absl::Hours(1));
  AddReadyNode("idle", 0, kStart - absl::Hours(1));
  PoolSignal signal = Evaluate();
  EXPECT_EQ(signal.target_size, 1);
  EXPECT_THAT(signal.nodes_to_remove, ElementsAre("idle"));
  // Lost, it is still never named; the idle node now stands in for it.
  observation_.nodes[0].state = core::NodeState::kLost;
  signal = Evaluate();
  EXPECT_THAT(signal.nodes_to_remove, IsEmpty());
  EXPECT_THAT(signal.lost_nodes, ElementsAre("busy"));
  EXPECT_EQ(signal.target_size, 1);
}

TEST_F(PoolScalerTest, RemovesTheLongestEmptyFirst) {
  observation_.pool.warm_buffer = core::WarmBuffer::Constant(1);
  AddReadyNode("recent", 0, kStart - absl::Minutes(20));
  AddReadyNode("oldest", 0, kStart - absl::Minutes(40));
  AddReadyNode("older", 0, kStart - absl::Minutes(30));
  PoolSignal signal = Evaluate();
  EXPECT_EQ(signal.target_size, 1);
  EXPECT_THAT(signal.nodes_to_remove, ElementsAre("oldest", "older"));
  EXPECT_THAT(signal.reasons, ElementsAre(Reason::kWarmBuffer, Reason::kIdleTimeout));
}

TEST_F(PoolScalerTest, BrokenNodesGoFirstAndDoNotCountAsCapacity) {
  AddReadyNode("idle", 0, kStart - absl::Hours(1));
  AddReadyNode("busy", 2, kStart);
  observation_.nodes.push_back({.name = "lost", .state = core::NodeState::kLost});
  observation_.nodes.push_back({.name = "stuck",
                                .state = core::NodeState::kProvisioning,
                                .requested_at = kStart - absl::Minutes(16)});
  PoolSignal signal = Evaluate();
  EXPECT_THAT(signal.nodes_to_remove, ElementsAre("stuck", "lost", "idle"));
  EXPECT_EQ(signal.target_size, 1);
  EXPECT_EQ(signal.current_size, 4);
  EXPECT_THAT(signal.reasons, ElementsAre(Reason::kIdleTimeout, Reason::kProvisioningFailed));
  EXPECT_THAT(signal.detail, HasSubstr("removing node stuck: not ready within 15m"));
  EXPECT_THAT(signal.detail, HasSubstr("removing lost node lost"));
}

TEST_F(PoolScalerTest, CordonedNodesTakeNoPendingWorkButGoWhenIdle) {
  AddReadyNode("cordoned", 0, kStart - absl::Hours(1)).state = core::NodeState::kCordoned;
  Pend(1, 1);
  PoolSignal signal = EvaluateAfterWindow();
  EXPECT_EQ(signal.target_size, 1) << signal.detail;             // A new node for the work ...
  EXPECT_THAT(signal.nodes_to_remove, ElementsAre("cordoned"));  // ... and the cordoned one goes.
}

TEST_F(PoolScalerTest, PoolAboveMaxSizeShedsOnlyEmptyNodes) {
  observation_.pool.max_size = 1;
  AddReadyNode("busy-1", 1, kStart);
  AddReadyNode("busy-2", 1, kStart);
  AddReadyNode("idle", 0, kStart - absl::Hours(1));
  PoolSignal signal = Evaluate();
  EXPECT_THAT(signal.nodes_to_remove, ElementsAre("idle"));
  EXPECT_EQ(signal.target_size, 1);
  EXPECT_THAT(signal.reasons, ElementsAre(Reason::kIdleTimeout, Reason::kMaxSize));
}

TEST_F(PoolScalerTest, ANodeThatBecomesBusyAgainRestartsItsEmptyTimer) {
  // The caller's empty_since stays stale; the scaler's own sighting counts.
  AddReadyNode("n1", 0, kStart);
  Advance(absl::Minutes(9));
  observation_.nodes[0].workspaces = 1;
  EXPECT_EQ(Evaluate().target_size, 1);
  Advance(absl::Seconds(30));
  observation_.nodes[0].workspaces = 0;
  Advance(absl::Seconds(30));  // 10 min after the stale timer started.
  PoolSignal signal = Evaluate();
  EXPECT_EQ(signal.target_size, 1);
  EXPECT_THAT(signal.nodes_to_remove, IsEmpty());
  Advance(absl::Minutes(9));  // 10 min after it was last seen busy.
  EXPECT_THAT(Evaluate().nodes_to_remove, ElementsAre("n1"));
}

TEST_F(PoolScalerTest, NoFlappingWhenDemandOscillatesInsideTheWindow) {
  AddReadyNode("n1", 1, kStart);
  PoolSignal first = Evaluate();
  for (int i = 0; i < 30; ++i) {
    // Pending work appears for 1.5 s and goes (placed or cancelled).
    if (i % 2 == 0) {
      Pend(1, 1);
      Advance(absl::Milliseconds(1500));
    } else {
      observation_.pending.clear();
      Advance(absl::Milliseconds(500));
    }
    PoolSignal signal = Evaluate();
    EXPECT_EQ(signal.target_size, 1) << i;
    EXPECT_EQ(signal.generation, first.generation) << i;
  }
}

TEST_F(PoolScalerTest, DelayAfterAddHoldsScaleDown) {
  observation_.pool.scale_down.unneeded = absl::Minutes(2);
  Pend(1, 1);
  ASSERT_EQ(EvaluateAfterWindow().target_size, 1);
  absl::Time scaled_up = now_;
  // The node comes up, but the workspace was cancelled meanwhile.
  observation_.pending.clear();
  Advance(absl::Minutes(1));
  observation_.nodes.push_back({.name = "n1",
                                .state = core::NodeState::kReady,
                                .requested_at = scaled_up,
                                .ready_at = now_,
                                .empty_since = now_});
  Advance(absl::Minutes(5));  // Idle 5 min > unneeded, but only 6 min after the add.
  PoolSignal signal = Evaluate();
  EXPECT_THAT(signal.nodes_to_remove, IsEmpty());
  EXPECT_THAT(signal.detail, HasSubstr("scale-down waits until"));
  now_ = scaled_up + absl::Minutes(10);
  EXPECT_THAT(Evaluate().nodes_to_remove, ElementsAre("n1"));
}

TEST_F(PoolScalerTest, ProvisionTimeoutBacksOffLongerEachTimeCappedAndResetBySuccess) {
  Pend(1, 1);
  ASSERT_EQ(EvaluateAfterWindow().target_size, 1);
  std::vector<absl::Duration> pauses;
  for (int i = 0; i < 7; ++i) {
    // The caller passes the request on; the node never registers.
    observation_.in_flight = {{.requested_at = now_, .count = 1}};
    Advance(absl::Minutes(15) + absl::Seconds(1));
    PoolSignal signal = Evaluate();
    ASSERT_TRUE(signal.backoff_until.has_value()) << i;
    EXPECT_EQ(signal.target_size, 0);
    // Pending work still wants a node; the backoff holds it back.
    EXPECT_THAT(signal.reasons,
                ElementsAre(Reason::kPendingWorkspaces, Reason::kProvisioningFailed));
    EXPECT_THAT(signal.detail, HasSubstr("1 requested node did not register within 15m"));
    pauses.push_back(*signal.backoff_until - now_);
    // Still backing off just before the end; asks again right after.
    now_ = *signal.backoff_until - absl::Seconds(1);
    EXPECT_EQ(Evaluate().target_size, 0);
    Advance(absl::Seconds(1));
    signal = Evaluate();
    EXPECT_EQ(signal.target_size, 1) << i;
    EXPECT_FALSE(signal.backoff_until.has_value());
  }
  EXPECT_EQ(pauses, (std::vector<absl::Duration>{
                        absl::Seconds(30), absl::Minutes(1), absl::Minutes(2), absl::Minutes(4),
                        absl::Minutes(8), absl::Minutes(10), absl::Minutes(10)}));

  // A node finally comes up: the next failure starts from 30 s again.
  absl::Time requested = now_;
  observation_.in_flight.clear();
  Advance(absl::Minutes(4));
  observation_.nodes.push_back({.name = "n1",
                                .state = core::NodeState::kReady,
                                .workspaces = 1,
                                .requested_at = requested,
                                .ready_at = now_});
  observation_.pending.clear();
  EXPECT_FALSE(Evaluate().backoff_until.has_value());
  Pend(8, 1);
  ASSERT_EQ(EvaluateAfterWindow().target_size, 2);
  observation_.in_flight = {{.requested_at = now_, .count = 1}};
  Advance(absl::Minutes(16));
  PoolSignal signal = Evaluate();
  EXPECT_EQ(*signal.backoff_until - now_, absl::Seconds(30));
  EXPECT_EQ(signal.target_size, 1);
}

TEST_F(PoolScalerTest, NodeStuckProvisioningCountsAsFailed) {
  observation_.nodes.push_back({.name = "stuck",
                                .state = core::NodeState::kProvisioning,
                                .requested_at = kStart,
                                .empty_since = kStart});
  Pend(1, 1);
  EXPECT_EQ(EvaluateAfterWindow().target_size, 1);  // Fits on the booting node.
  Advance(absl::Minutes(15));
  PoolSignal signal = Evaluate();
  EXPECT_THAT(signal.nodes_to_remove, ElementsAre("stuck"));
  EXPECT_EQ(signal.target_size, 0);  // Backing off: no replacement yet.
  ASSERT_TRUE(signal.backoff_until.has_value());
  EXPECT_EQ(*signal.backoff_until, now_ + absl::Seconds(30));
  // Seeing it again is not a second failure.
  Advance(absl::Seconds(10));
  EXPECT_EQ(*Evaluate().backoff_until, now_ + absl::Seconds(20));
}

TEST_F(PoolScalerTest, OutOfResourcesReportBacksOff) {
  Pend(8, 2);
  scaler_.OnActuatorEvent({.kind = ActuatorEventKind::kOutOfResources, .detail = "no A100 in zone"},
                          now_);
  PoolSignal signal = EvaluateAfterWindow();
  EXPECT_EQ(signal.target_size, 0);
  EXPECT_THAT(signal.reasons, ElementsAre(Reason::kPendingWorkspaces, Reason::kProvisioningFailed));
  EXPECT_EQ(signal.backoff_until, kStart + absl::Seconds(30));
  EXPECT_THAT(signal.detail, HasSubstr("out of resources: no A100 in zone"));
  EXPECT_THAT(signal.detail, HasSubstr("not growing until then"));
  now_ = kStart + absl::Seconds(30);
  EXPECT_EQ(Evaluate().target_size, 2);

  scaler_.OnActuatorEvent({.kind = ActuatorEventKind::kFailed}, now_);
  EXPECT_TRUE(scaler_.BackoffUntil(now_).has_value());
  scaler_.OnActuatorEvent({.kind = ActuatorEventKind::kRunning, .instances = 2}, now_);
  EXPECT_FALSE(scaler_.BackoffUntil(now_).has_value());
}

TEST_F(PoolScalerTest, BackoffNeverRemovesHealthyCapacity) {
  AddReadyNode("busy", 8, kStart);
  scaler_.OnActuatorEvent({.kind = ActuatorEventKind::kOutOfResources}, now_);
  Pend(8, 1);
  EXPECT_EQ(EvaluateAfterWindow().target_size, 1);
}

TEST_F(PoolScalerTest, ConstantWarmBufferNeedsNoWindow) {
  observation_.pool.warm_buffer = core::WarmBuffer::Constant(1);
  PoolSignal signal = Evaluate();
  EXPECT_EQ(signal.target_size, 1);
  EXPECT_THAT(signal.reasons, ElementsAre(Reason::kWarmBuffer));
  EXPECT_EQ(signal.detail, "warm buffer 1");
  // Pending work that fits the warm node does not grow the pool either.
  observation_.nodes.push_back({.name = "warm", .ready_at = now_, .empty_since = now_});
  Pend(1, 1);
  signal = EvaluateAfterWindow();
  EXPECT_EQ(signal.target_size, 2);  // One for the work, one stays warm.
  EXPECT_THAT(signal.reasons, ElementsAre(Reason::kPendingWorkspaces, Reason::kWarmBuffer));
}

// Weekdays 08:00-18:00 in Berlin (core/pool.h windows).
core::TimeWindow BerlinOfficeHours() {
  return {.days = {absl::Weekday::monday, absl::Weekday::tuesday, absl::Weekday::wednesday,
                   absl::Weekday::thursday, absl::Weekday::friday},
          .start_minute = 8 * 60,
          .end_minute = 18 * 60};
}

absl::Time Berlin(int month, int day, int hour, int minute) {
  return absl::FromCivil(absl::CivilMinute(2026, month, day, hour, minute),
                         *core::LoadScheduleTimeZone("Europe/Berlin"));
}

TEST_F(PoolScalerTest, WarmBufferScheduleFollowsTheClock) {
  observation_.pool.scale_down.delay_after_add = absl::ZeroDuration();
  observation_.pool.scale_down.unneeded = absl::ZeroDuration();
  observation_.pool.warm_buffer = {.time_zone = "Europe/Berlin",
                                   .windows = {{.when = BerlinOfficeHours(), .nodes = 2}}};
  now_ = Berlin(3, 27, 7, 59);  // Friday before the spring DST change.
  PoolSignal signal = Evaluate();
  EXPECT_EQ(signal.target_size, 0);
  EXPECT_EQ(signal.detail, "warm buffer 0 (outside every window)");
  now_ = Berlin(3, 27, 8, 0);
  signal = Evaluate();
  EXPECT_EQ(signal.target_size, 2);
  EXPECT_THAT(signal.reasons, ElementsAre(Reason::kWarmBuffer));
  EXPECT_EQ(signal.detail, "warm buffer 2 (windows[0] mon-fri 08:00-18:00 Europe/Berlin)");
  AddReadyNode("w1", 0, now_);
  AddReadyNode("w2", 0, now_);
  now_ = Berlin(3, 27, 18, 0);
  signal = Evaluate();
  EXPECT_EQ(signal.target_size, 0);
  EXPECT_THAT(signal.nodes_to_remove, ElementsAre("w1", "w2"));
  // Monday after the change: 08:00 local is 06:00 UTC now, not 07:00.
  observation_.nodes.clear();
  now_ = absl::FromCivil(absl::CivilMinute(2026, 3, 30, 6, 0), absl::UTCTimeZone());
  EXPECT_EQ(Evaluate().target_size, 2);
  now_ -= absl::Minutes(1);
  EXPECT_EQ(Evaluate().target_size, 0);
}

TEST_F(PoolScalerTest, ScaleDownScheduleKeepsIdleNodesDuringBusinessHours) {
  observation_.pool.scale_down.schedule = {
      .time_zone = "Europe/Berlin", .windows = {{.when = BerlinOfficeHours(), .allow = false}}};
  now_ = Berlin(10, 23, 17, 30);  // Friday before the autumn DST change.
  AddReadyNode("busy", 1, now_);
  AddReadyNode("idle-1", 0, now_ - absl::Hours(1));
  AddReadyNode("idle-2", 0, now_ - absl::Hours(2));
  PoolSignal signal = Evaluate();
  EXPECT_THAT(signal.nodes_to_remove, IsEmpty());
  EXPECT_EQ(signal.target_size, 3);
  EXPECT_THAT(signal.detail,
              HasSubstr("scale-down not allowed now by scale_down.schedule (windows[0] mon-fri "
                        "08:00-18:00 Europe/Berlin); keeping 2 idle nodes"));
  // Broken nodes are no capacity and still go.
  observation_.nodes.push_back({.name = "lost", .state = core::NodeState::kLost});
  EXPECT_THAT(Evaluate().nodes_to_remove, ElementsAre("lost"));
  observation_.nodes.pop_back();
  now_ = Berlin(10, 23, 18, 0);
  signal = Evaluate();
  EXPECT_THAT(signal.nodes_to_remove, ElementsAre("idle-2", "idle-1"));
  EXPECT_EQ(signal.target_size, 1);
  EXPECT_THAT(signal.detail, ::testing::Not(HasSubstr("scale_down.schedule")));
  // Monday after the change the hold starts at 08:00 CET = 07:00 UTC.
  now_ = absl::FromCivil(absl::CivilMinute(2026, 10, 26, 6, 59), absl::UTCTimeZone());
  EXPECT_THAT(Evaluate().nodes_to_remove, ElementsAre("idle-2", "idle-1"));
  now_ += absl::Minutes(1);
  EXPECT_THAT(Evaluate().nodes_to_remove, IsEmpty());
}

TEST_F(PoolScalerTest, ScaleDownScheduleDefaultCanForbidOutsideItsWindows) {
  observation_.pool.scale_down.schedule = {
      .default_allow = false,
      .windows = {{.when = {.start_minute = 22 * 60, .end_minute = 6 * 60}, .allow = true}}};
  now_ = absl::FromCivil(absl::CivilMinute(2026, 3, 27, 12, 0), absl::UTCTimeZone());
  AddReadyNode("idle", 0, now_ - absl::Hours(1));
  PoolSignal signal = Evaluate();
  EXPECT_THAT(signal.nodes_to_remove, IsEmpty());
  EXPECT_THAT(signal.detail, HasSubstr("scale_down.schedule (outside every window); keeping 1 "
                                       "idle node"));
  now_ = absl::FromCivil(absl::CivilMinute(2026, 3, 27, 22, 0), absl::UTCTimeZone());
  EXPECT_THAT(Evaluate().nodes_to_remove, ElementsAre("idle"));
}

TEST_F(PoolScalerTest, LostNodeHoldingWorkspacesNeedsAReplacement) {
  AddReadyNode("busy", 1, kStart);
  observation_.nodes.push_back({.name = "gone", .state = core::NodeState::kLost, .workspaces = 3});
  PoolSignal signal = Evaluate();  // No batching window: the node is already gone.
  EXPECT_EQ(signal.target_size, 2);
  EXPECT_EQ(signal.current_size, 2);
  EXPECT_THAT(signal.lost_nodes, ElementsAre("gone"));
  EXPECT_THAT(signal.nodes_to_remove, IsEmpty());
  EXPECT_THAT(signal.reasons, ElementsAre(Reason::kPendingWorkspaces));
  EXPECT_THAT(signal.detail, HasSubstr("lost node gone still holds 3 workspaces: counted until "
                                       "stopped or moved; replace it"));
  // Once its workspaces are stopped or moved it is an empty lost node: removed.
  observation_.nodes[1].workspaces = 0;
  signal = Evaluate();
  EXPECT_EQ(signal.target_size, 1);
  EXPECT_THAT(signal.lost_nodes, IsEmpty());
  EXPECT_THAT(signal.nodes_to_remove, ElementsAre("gone"));
  EXPECT_EQ(signal.generation, 2);
}

TEST_F(PoolScalerTest, LostNodeDemandUsesEmptyNodesBeforeTheWarmBuffer) {
  observation_.pool.warm_buffer = core::WarmBuffer::Constant(1);
  AddReadyNode("empty", 0, kStart - absl::Hours(1));
  observation_.nodes.push_back({.name = "gone", .state = core::NodeState::kLost, .workspaces = 1});
  PoolSignal signal = Evaluate();
  // The empty node takes the lost node's workspaces; the warm buffer needs one more.
  EXPECT_EQ(signal.target_size, 2);
  EXPECT_THAT(signal.nodes_to_remove, IsEmpty());
  EXPECT_THAT(signal.reasons, ElementsAre(Reason::kPendingWorkspaces, Reason::kWarmBuffer));
  // A replacement that is requested counts: nothing more is asked.
  observation_.in_flight.push_back({.requested_at = now_, .count = 1});
  EXPECT_EQ(Evaluate().target_size, 2);
}

TEST_F(PoolScalerTest, LostNodesAreClampedAndBackedOffLikeOtherDemand) {
  observation_.pool.max_size = 1;
  for (const auto& [name, workspaces] : {std::pair{"gone-1", 1}, std::pair{"gone-2", 2}}) {
    observation_.nodes.push_back(
        {.name = name, .state = core::NodeState::kLost, .workspaces = workspaces});
  }
  PoolSignal signal = Evaluate();
  EXPECT_EQ(signal.target_size, 1);
  EXPECT_THAT(signal.lost_nodes, ElementsAre("gone-1", "gone-2"));
  EXPECT_THAT(signal.reasons, ElementsAre(Reason::kPendingWorkspaces, Reason::kMaxSize));
  scaler_.OnActuatorEvent({.kind = ActuatorEventKind::kOutOfResources}, now_);
  EXPECT_EQ(Evaluate().target_size, 0);  // Backing off: nothing the pool lacks.
}

TEST_F(PoolScalerTest, MaxSizeClamps) {
  observation_.pool.max_size = 2;
  Pend(8, 3);
  PoolSignal signal = EvaluateAfterWindow();
  EXPECT_EQ(signal.target_size, 2);
  EXPECT_THAT(signal.reasons, ElementsAre(Reason::kPendingWorkspaces, Reason::kMaxSize));
  EXPECT_THAT(signal.detail, HasSubstr("capped at max_size 2 (3 needed)"));
  Pend(8, 100);
  EXPECT_THAT(Evaluate().detail, HasSubstr("capped at max_size 2 (more needed)"));
}

TEST_F(PoolScalerTest, WorkThatCanNeverFitIsExplainedAndIgnored) {
  Pend(16, 1);
  PoolSignal signal = EvaluateAfterWindow();
  EXPECT_EQ(signal.target_size, 0);
  EXPECT_THAT(signal.detail,
              HasSubstr("1 pending gpu-16x workspace can never fit a node of pool gpu-a100"));
}

TEST_F(PoolScalerTest, GenerationMovesOnlyWhenTheDecisionChanges) {
  Pend(1, 1);
  PoolSignal waiting = Evaluate();
  EXPECT_EQ(waiting.generation, 1);
  Advance(absl::Seconds(1));
  PoolSignal still_waiting = Evaluate();
  EXPECT_NE(still_waiting.detail, waiting.detail);  // Time left changed ...
  EXPECT_EQ(still_waiting.generation, 1);           // ... the decision did not.
  Advance(absl::Seconds(1));
  EXPECT_EQ(Evaluate().generation, 2);
  // A node registering changes current_size, not the decision.
  observation_.nodes.push_back({.name = "n1",
                                .state = core::NodeState::kProvisioning,
                                .requested_at = now_,
                                .empty_since = now_});
  PoolSignal registered = Evaluate();
  EXPECT_EQ(registered.current_size, 1);
  EXPECT_EQ(registered.generation, 2);
  EXPECT_EQ(scaler_.last_signal(), registered);
  observation_.pending.clear();
  EXPECT_EQ(Evaluate().generation, 3);  // Reason went from pending to steady.
}

TEST_F(PoolScalerTest, EstimatesTimeToReadyFromNodesThatCameUp) {
  PoolScaler scaler({.default_time_to_ready = absl::Minutes(5)});
  EXPECT_EQ(scaler.EstimatePlacementDelay(), absl::Minutes(5));
  scaler.Evaluate(observation_, kStart);  // Watching before the nodes come up.
  for (int minutes : {3, 4, 20}) {
    observation_.nodes.push_back({.name = "n" + std::to_string(minutes),
                                  .state = core::NodeState::kReady,
                                  .requested_at = kStart,
                                  .ready_at = kStart + absl::Minutes(minutes)});
  }
  scaler.Evaluate(observation_, now_ + absl::Hours(1));
  scaler.Evaluate(observation_, now_ + absl::Hours(2));  // Counted once each.
  EXPECT_EQ(scaler.provision_history().samples().size(), 3u);
  EXPECT_EQ(scaler.EstimatePlacementDelay(), absl::Minutes(4));
  EXPECT_EQ(PoolScaler().EstimatePlacementDelay(), std::nullopt);
  // Each measured start is handed out once, for the caller to persist.
  EXPECT_THAT(scaler.TakeNewStartSamples(),
              ::testing::UnorderedElementsAre(absl::Minutes(3), absl::Minutes(4),
                                              absl::Minutes(20)));
  EXPECT_TRUE(scaler.TakeNewStartSamples().empty());
}

TEST_F(PoolScalerTest, NodesAlreadyUpAtTheFirstLookAreNotMeasured) {
  // A new leader finds a node that came up an hour ago: its request was
  // never seen, so "requested" and "ready" say nothing about start time.
  PoolScaler scaler;
  observation_.nodes.push_back({.name = "old",
                                .state = core::NodeState::kReady,
                                .requested_at = kStart,
                                .ready_at = kStart});
  scaler.Evaluate(observation_, kStart + absl::Hours(1));
  EXPECT_TRUE(scaler.provision_history().samples().empty());
  EXPECT_TRUE(scaler.TakeNewStartSamples().empty());
}

}  // namespace
}  // namespace wsched::scaling
