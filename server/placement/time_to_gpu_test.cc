#include "server/placement/time_to_gpu.h"

#include "gmock/gmock.h"
#include "server/placement/estimate_inputs.h"
#include "gtest/gtest.h"

namespace wsched::placement {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1800000000);

TimeToGpuInputs Inputs(PendingCode code) {
  TimeToGpuInputs in;
  in.reason.code = code;
  in.reason.pool = "gpu-h100";
  in.reason.kernel = "6.1.0-18-amd64";
  in.now = kNow;
  return in;
}

TEST(TimeToGpuTest, ProvisioningUsesTheMeasuredMedianMinusElapsed) {
  TimeToGpuInputs in = Inputs(PendingCode::kNodeProvisioning);
  in.reason.since = kNow - absl::Minutes(1);
  in.node_start = MeasuredTime{absl::Minutes(4), 5};
  TimeToGpu t = EstimateTimeToGpu(in);
  EXPECT_EQ(t.estimate, absl::Minutes(3));
  EXPECT_EQ(t.basis, "node start median 4m (5 samples) - 1m elapsed");
}

TEST(TimeToGpuTest, WithoutHistoryItNamesTheDefaultItUsed) {
  TimeToGpuInputs in = Inputs(PendingCode::kScaleUpRequested);
  TimeToGpu t = EstimateTimeToGpu(in);
  EXPECT_EQ(t.estimate, absl::Minutes(5));
  EXPECT_THAT(t.basis, HasSubstr("default node start time 5m (--default_node_start_time"));
}

TEST(TimeToGpuTest, DriverInstallUsesTheKernelsMedian) {
  TimeToGpuInputs in = Inputs(PendingCode::kDriverInstalling);
  in.reason.since = kNow - absl::Minutes(2);
  in.driver_install = MeasuredTime{absl::Minutes(7), 3};
  TimeToGpu t = EstimateTimeToGpu(in);
  EXPECT_EQ(t.estimate, absl::Minutes(5));
  EXPECT_THAT(t.basis, HasSubstr("driver install median on kernel 6.1.0-18-amd64 7m (3 samples)"));

  in.driver_install.reset();
  t = EstimateTimeToGpu(in);
  EXPECT_EQ(t.estimate, absl::Minutes(8));
  EXPECT_THAT(t.basis, HasSubstr("--default_driver_install_time"));
}

TEST(TimeToGpuTest, AMigReLayoutIsSecondsNotANodeStart) {
  TimeToGpuInputs in = Inputs(PendingCode::kMigRelayout);
  in.node_start = MeasuredTime{absl::Minutes(4), 5};
  TimeToGpu t = EstimateTimeToGpu(in);
  EXPECT_EQ(t.estimate, absl::ZeroDuration());
  EXPECT_THAT(t.basis, HasSubstr("MIG re-layout"));
}

TEST(TimeToGpuTest, OverdueIsZeroNotNegative) {
  TimeToGpuInputs in = Inputs(PendingCode::kNodeProvisioning);
  in.reason.since = kNow - absl::Minutes(30);
  in.node_start = MeasuredTime{absl::Minutes(4), 5};
  EXPECT_EQ(EstimateTimeToGpu(in).estimate, absl::ZeroDuration());
}

TEST(TimeToGpuTest, BackoffAddsTheRemainingBackoff) {
  TimeToGpuInputs in = Inputs(PendingCode::kPoolBackingOff);
  in.reason.until = kNow + absl::Minutes(2);
  in.node_start = MeasuredTime{absl::Minutes(4), 1};
  TimeToGpu t = EstimateTimeToGpu(in);
  EXPECT_EQ(t.estimate, absl::Minutes(6));
  EXPECT_THAT(t.basis, HasSubstr("backoff ends in 2m"));
}

TEST(TimeToGpuTest, NoEstimateWhereAPersonMustAct) {
  for (PendingCode code :
       {PendingCode::kPoolAtMaxSize, PendingCode::kOrgGpuQuota, PendingCode::kDriverInstallFailed,
        PendingCode::kGpusUnhealthy, PendingCode::kBudgetExhausted}) {
    TimeToGpu t = EstimateTimeToGpu(Inputs(code));
    EXPECT_FALSE(t.estimate.has_value()) << PendingCodeName(code);
    EXPECT_THAT(t.basis, HasSubstr("no estimate: ")) << PendingCodeName(code);
    EXPECT_FALSE(t.estimate_p90.has_value()) << PendingCodeName(code);
    EXPECT_TRUE(t.phases.empty()) << PendingCodeName(code);
  }
}

TEST(TimeToGpuTest, ADriverInstallIsOnePhaseWithItsP50AndP90LessElapsed) {
  TimeToGpuInputs in = Inputs(PendingCode::kDriverInstalling);
  in.reason.since = kNow - absl::Minutes(2);
  in.driver_install = MeasuredTime{absl::Minutes(7), 3, absl::Minutes(11)};
  TimeToGpu t = EstimateTimeToGpu(in);
  EstimatePhase want{.kind = PhaseKind::kDriverInstall,
                     .p50 = absl::Minutes(7),
                     .p90 = absl::Minutes(11),
                     .samples = 3,
                     .elapsed = absl::Minutes(2),
                     .remaining_p50 = absl::Minutes(5),
                     .remaining_p90 = absl::Minutes(9)};
  EXPECT_THAT(t.phases, ElementsAre(want));
  EXPECT_EQ(t.estimate, absl::Minutes(5));
  EXPECT_EQ(t.estimate_p90, absl::Minutes(9));
}

TEST(TimeToGpuTest, PastTheP50ThePhaseStillHasItsP90Left) {
  TimeToGpuInputs in = Inputs(PendingCode::kNodeProvisioning);
  in.reason.since = kNow - absl::Minutes(6);
  in.node_start = MeasuredTime{absl::Minutes(4), 20, absl::Minutes(10)};
  TimeToGpu t = EstimateTimeToGpu(in);
  EXPECT_EQ(t.estimate, absl::ZeroDuration());
  EXPECT_EQ(t.estimate_p90, absl::Minutes(4));
  ASSERT_EQ(t.phases.size(), 1u);
  EXPECT_EQ(t.phases[0].kind, PhaseKind::kNodeBoot);
  EXPECT_EQ(t.phases[0].remaining_p90, absl::Minutes(4));
}

TEST(TimeToGpuTest, AMedianWithoutAP90UsesTheMedianForBoth) {
  TimeToGpuInputs in = Inputs(PendingCode::kScaleUpNotYetRequested);
  in.node_start = MeasuredTime{absl::Minutes(4), 1};
  TimeToGpu t = EstimateTimeToGpu(in);
  ASSERT_EQ(t.phases.size(), 1u);
  EXPECT_EQ(t.phases[0].p90, absl::Minutes(4));
  EXPECT_EQ(t.estimate_p90, absl::Minutes(4));
  EXPECT_EQ(t.phases[0].elapsed, absl::ZeroDuration());
}

TEST(TimeToGpuTest, ADefaultStandingInIsMarkedAndHasNoSamples) {
  TimeToGpuInputs in = Inputs(PendingCode::kScaleUpRequested);
  in.default_node_start = absl::Minutes(3);
  TimeToGpu t = EstimateTimeToGpu(in);
  ASSERT_EQ(t.phases.size(), 1u);
  EXPECT_TRUE(t.phases[0].default_used);
  EXPECT_EQ(t.phases[0].samples, 0);
  EXPECT_EQ(t.phases[0].p50, absl::Minutes(3));
  EXPECT_EQ(t.phases[0].p90, absl::Minutes(3));

  in.node_start = MeasuredTime{absl::Minutes(4), 2};
  EXPECT_FALSE(EstimateTimeToGpu(in).phases[0].default_used);
}

TEST(TimeToGpuTest, BeforeTheScaleUpIsAskedForTheBatchingWindowIsAQueuePhase) {
  TimeToGpuInputs in = Inputs(PendingCode::kScaleUpNotYetRequested);
  in.batching_window = absl::Seconds(2);
  in.node_start = MeasuredTime{absl::Minutes(4), 6, absl::Minutes(5)};
  TimeToGpu t = EstimateTimeToGpu(in);
  ASSERT_EQ(t.phases.size(), 2u);
  EXPECT_EQ(t.phases[0].kind, PhaseKind::kQueue);
  EXPECT_EQ(t.phases[0].p90, absl::Seconds(2));
  EXPECT_EQ(t.phases[1].kind, PhaseKind::kNodeBoot);
  EXPECT_EQ(t.estimate, absl::Minutes(4) + absl::Seconds(2));
  EXPECT_EQ(t.estimate_p90, absl::Minutes(5) + absl::Seconds(2));
}

TEST(TimeToGpuTest, BackoffThenNodeBootInThatOrder) {
  TimeToGpuInputs in = Inputs(PendingCode::kPoolBackingOff);
  in.reason.until = kNow + absl::Minutes(2);
  in.node_start = MeasuredTime{absl::Minutes(4), 8, absl::Minutes(6)};
  TimeToGpu t = EstimateTimeToGpu(in);
  ASSERT_EQ(t.phases.size(), 2u);
  EXPECT_EQ(t.phases[0].kind, PhaseKind::kBackoff);
  EXPECT_EQ(t.phases[0].remaining_p90, absl::Minutes(2));
  EXPECT_EQ(t.phases[1].kind, PhaseKind::kNodeBoot);
  EXPECT_EQ(t.estimate, absl::Minutes(6));
  EXPECT_EQ(t.estimate_p90, absl::Minutes(8));
}

TEST(TimeToGpuTest, ANodeThatInstallsItsDriverWaitsTheInstallAfterItsStart) {
  // A new node the scaler asked for, and one registered that is not ready
  // yet and reported it needs its driver: each starts, then installs.
  for (PendingCode code : {PendingCode::kScaleUpRequested, PendingCode::kNodeProvisioning}) {
    SCOPED_TRACE(PendingCodeName(code));
    TimeToGpuInputs in = Inputs(code);
    in.reason.kernel.clear();  // No node yet, or one not ready.
    in.reason.since = kNow - absl::Minutes(1);
    in.node_start = MeasuredTime{absl::Minutes(4), 6, absl::Minutes(5)};
    in.new_node_install_kernel = "5.15.0-91-generic";
    in.driver_install = MeasuredTime{absl::Minutes(7), 3, absl::Minutes(9)};
    TimeToGpu t = EstimateTimeToGpu(in);
    ASSERT_EQ(t.phases.size(), 2u);
    EXPECT_EQ(t.phases[0].kind, PhaseKind::kNodeBoot);
    EXPECT_EQ(t.phases[0].elapsed, absl::Minutes(1));
    const EstimatePhase& install = t.phases[1];
    EXPECT_EQ(install.kind, PhaseKind::kDriverInstall);
    EXPECT_EQ(install.p50, absl::Minutes(7));
    EXPECT_EQ(install.p90, absl::Minutes(9));
    EXPECT_EQ(install.samples, 3);
    EXPECT_EQ(install.elapsed, absl::ZeroDuration()) << "it begins once the node is ready";
    EXPECT_EQ(t.estimate, absl::Minutes(3 + 7));
    EXPECT_EQ(t.estimate_p90, absl::Minutes(4 + 9));
    EXPECT_THAT(t.basis, HasSubstr("then driver install median on kernel 5.15.0-91-generic 7m"));
    EXPECT_TRUE(WaitsForANodeToStart(code));

    // Without the install, as before.
    in.new_node_install_kernel.reset();
    EXPECT_EQ(EstimateTimeToGpu(in).phases.size(), 1u);
  }
  EXPECT_FALSE(WaitsForANodeToStart(PendingCode::kDriverInstalling));
}

TEST(TimeToGpuTest, EveryWaitForANewNodeEndsWithItsInstall) {
  for (PendingCode code : {PendingCode::kScaleUpNotYetRequested, PendingCode::kScaleUpRequested,
                           PendingCode::kPoolBackingOff}) {
    SCOPED_TRACE(PendingCodeName(code));
    TimeToGpuInputs in = Inputs(code);
    in.batching_window = absl::Seconds(2);
    in.reason.until = kNow + absl::Minutes(2);
    in.new_node_install_kernel = "6.1.0-18-amd64";
    in.driver_install = MeasuredTime{absl::Minutes(7), 3};
    EXPECT_TRUE(WaitsForANewNode(code));
    TimeToGpu t = EstimateTimeToGpu(in);
    ASSERT_GE(t.phases.size(), 2u);
    EXPECT_EQ(t.phases[t.phases.size() - 2].kind, PhaseKind::kNodeBoot);
    EXPECT_EQ(t.phases.back().kind, PhaseKind::kDriverInstall);
  }
  // A node that is there already is no new node.
  EXPECT_FALSE(WaitsForANewNode(PendingCode::kNodeProvisioning));
  EXPECT_FALSE(WaitsForANewNode(PendingCode::kDriverInstalling));
}

TEST(TimeToGpuTest, AnInstallOnAKernelNotKnownTakesTheDefaultAndSaysSo) {
  TimeToGpuInputs in = Inputs(PendingCode::kScaleUpNotYetRequested);
  in.node_start = MeasuredTime{absl::Minutes(4), 6};
  in.new_node_install_kernel = "";
  TimeToGpu t = EstimateTimeToGpu(in);
  ASSERT_EQ(t.phases.size(), 2u);
  EXPECT_EQ(t.phases[1].kind, PhaseKind::kDriverInstall);
  EXPECT_TRUE(t.phases[1].default_used);
  EXPECT_EQ(t.phases[1].p90, absl::Minutes(10));
  EXPECT_EQ(t.estimate, absl::Minutes(14));
  EXPECT_THAT(t.basis, HasSubstr("no measured installs in pool gpu-h100 yet"));
}

TEST(TimeToGpuTest, WithCloudStartsAndBootsMeasuredANewNodeStartsInTwoPhases) {
  TimeToGpuInputs in = Inputs(PendingCode::kScaleUpRequested);
  in.reason.since = kNow - absl::Seconds(40);
  in.node_start = MeasuredTime{absl::Minutes(4), 6, absl::Minutes(5)};
  in.cloud_start = MeasuredTime{absl::Minutes(1), 4, absl::Seconds(90)};
  in.node_boot = MeasuredTime{absl::Minutes(2), 3, absl::Minutes(3)};
  TimeToGpu t = EstimateTimeToGpu(in);
  ASSERT_EQ(t.phases.size(), 2u);
  EXPECT_EQ(t.phases[0].kind, PhaseKind::kCloudStart);
  EXPECT_EQ(t.phases[0].samples, 4);
  // What has gone since the request counts against the cloud's start.
  EXPECT_EQ(t.phases[0].elapsed, absl::Seconds(40));
  EXPECT_EQ(t.phases[0].remaining_p90, absl::Seconds(50));
  EXPECT_EQ(t.phases[1].kind, PhaseKind::kNodeBoot);
  EXPECT_EQ(t.phases[1].p50, absl::Minutes(2));
  EXPECT_EQ(t.phases[1].elapsed, absl::ZeroDuration());
  EXPECT_EQ(t.estimate, absl::Seconds(20) + absl::Minutes(2));
  EXPECT_EQ(t.estimate_p90, absl::Seconds(50) + absl::Minutes(3));
  EXPECT_EQ(
      t.basis,
      "cloud start median 1m (4 samples) - 40s elapsed, then node boot median 2m (3 samples)");

  // Either one missing: one boot from the request, as node starts measure.
  in.node_boot.reset();
  t = EstimateTimeToGpu(in);
  ASSERT_EQ(t.phases.size(), 1u);
  EXPECT_EQ(t.phases[0].kind, PhaseKind::kNodeBoot);
  EXPECT_EQ(t.phases[0].p50, absl::Minutes(4));
}

TEST(TimeToGpuTest, TheCloudStartFollowsTheWindowOrTheBackoffAndPrecedesTheInstall) {
  for (PendingCode code : {PendingCode::kScaleUpNotYetRequested, PendingCode::kPoolBackingOff}) {
    SCOPED_TRACE(PendingCodeName(code));
    TimeToGpuInputs in = Inputs(code);
    in.batching_window = absl::Seconds(2);
    in.reason.until = kNow + absl::Minutes(2);
    in.cloud_start = MeasuredTime{absl::Minutes(1), 4};
    in.node_boot = MeasuredTime{absl::Minutes(2), 3};
    in.new_node_install_kernel = "6.1.0-18-amd64";
    in.driver_install = MeasuredTime{absl::Minutes(7), 3};
    TimeToGpu t = EstimateTimeToGpu(in);
    std::vector<PhaseKind> kinds;
    for (const EstimatePhase& phase : t.phases) kinds.push_back(phase.kind);
    EXPECT_THAT(
        kinds,
        ElementsAre(code == PendingCode::kPoolBackingOff ? PhaseKind::kBackoff : PhaseKind::kQueue,
                    PhaseKind::kCloudStart, PhaseKind::kNodeBoot, PhaseKind::kDriverInstall));
    EXPECT_EQ(t.estimate, t.phases[0].p50 + absl::Minutes(1 + 2 + 7));
  }
}

TEST(TimeToGpuTest, APlacementKeepsItsEstimateWithinItsP90AndASecond) {
  EXPECT_TRUE(WithinEstimate(absl::Minutes(5), absl::Minutes(5)));
  EXPECT_TRUE(WithinEstimate(absl::Milliseconds(300), absl::ZeroDuration()));
  EXPECT_TRUE(WithinEstimate(absl::Minutes(5) + kEstimateGrace, absl::Minutes(5)));
  EXPECT_FALSE(WithinEstimate(absl::Minutes(5) + absl::Milliseconds(1001), absl::Minutes(5)));
}

TEST(TimeToGpuTest, QueuedIsAQueuePhaseOfNothing) {
  TimeToGpuInputs in = Inputs(PendingCode::kQueued);
  in.reason.queue_position = 3;
  TimeToGpu t = EstimateTimeToGpu(in);
  ASSERT_EQ(t.phases.size(), 1u);
  EXPECT_EQ(t.phases[0].kind, PhaseKind::kQueue);
  EXPECT_EQ(t.estimate_p90, absl::ZeroDuration());
}

TEST(TimeToGpuTest, AMeasuredFirstReadyIsTheLastPhaseAndNotPartOfTheTimeToPlace) {
  TimeToGpuInputs in = Inputs(PendingCode::kDriverInstalling);
  in.reason.since = kNow - absl::Minutes(2);
  in.driver_install = MeasuredTime{absl::Minutes(7), 3, absl::Minutes(11)};
  const TimeToGpu without = EstimateTimeToGpu(in);
  in.first_ready = MeasuredTime{absl::Seconds(40), 4, absl::Seconds(90)};
  TimeToGpu t = EstimateTimeToGpu(in);
  ASSERT_EQ(t.phases.size(), 2u);
  EXPECT_EQ(t.phases[0], without.phases[0]);
  EstimatePhase ready{.kind = PhaseKind::kFirstReady,
                      .p50 = absl::Seconds(40),
                      .p90 = absl::Seconds(90),
                      .samples = 4,
                      .remaining_p50 = absl::Seconds(40),
                      .remaining_p90 = absl::Seconds(90)};
  EXPECT_EQ(t.phases[1], ready);
  // The time to place (and the p90 a placement is checked against) stay
  // what they were; the time to ready adds the first ready's p50.
  EXPECT_EQ(t.estimate, absl::Minutes(5));
  EXPECT_EQ(t.estimate_p90, absl::Minutes(9));
  EXPECT_EQ(t.estimate_to_ready, absl::Minutes(5) + absl::Seconds(40));
  EXPECT_EQ(t.basis, without.basis);
  EXPECT_EQ(without.estimate_to_ready, std::nullopt);
}

TEST(TimeToGpuTest, WithoutMeasuredFirstReadiesThereIsNoFirstReadyPhase) {
  TimeToGpuInputs in = Inputs(PendingCode::kScaleUpRequested);
  for (std::optional<MeasuredTime> none :
       {std::optional<MeasuredTime>(), std::optional<MeasuredTime>(MeasuredTime{})}) {
    in.first_ready = none;
    TimeToGpu t = EstimateTimeToGpu(in);
    ASSERT_FALSE(t.phases.empty());
    EXPECT_NE(t.phases.back().kind, PhaseKind::kFirstReady);
    EXPECT_EQ(t.estimate_to_ready, std::nullopt);
  }
}

TEST(TimeToGpuTest, NoEstimateHasNoFirstReadyEither) {
  TimeToGpuInputs in = Inputs(PendingCode::kPoolAtMaxSize);
  in.first_ready = MeasuredTime{absl::Seconds(40), 4, absl::Seconds(90)};
  TimeToGpu t = EstimateTimeToGpu(in);
  EXPECT_EQ(t.estimate, std::nullopt);
  EXPECT_TRUE(t.phases.empty());
  EXPECT_EQ(t.estimate_to_ready, std::nullopt);
}

TEST(TimeToGpuTest, AQueuedWorkspaceIsReadyInItsPoolsFirstReady) {
  TimeToGpuInputs in = Inputs(PendingCode::kQueued);
  in.first_ready = MeasuredTime{absl::Seconds(40), 4};
  TimeToGpu t = EstimateTimeToGpu(in);
  ASSERT_EQ(t.phases.size(), 2u);
  EXPECT_EQ(t.phases[0].kind, PhaseKind::kQueue);
  EXPECT_EQ(t.phases[1].kind, PhaseKind::kFirstReady);
  EXPECT_EQ(t.phases[1].p90, absl::Seconds(40)) << "without a p90 the median stands in";
  EXPECT_EQ(t.estimate, absl::ZeroDuration());
  EXPECT_EQ(t.estimate_to_ready, absl::Seconds(40));
}

TEST(TimeToGpuTest, TheInputsTakeTheFirstReadiesOfTheReasonsPool) {
  MeasuredTimes times;
  times.first_ready["gpu-h100"] = MeasuredTime{absl::Seconds(40), 4};
  times.first_ready["gpu-a100"] = MeasuredTime{absl::Seconds(99), 1};
  PendingReason reason;
  reason.code = PendingCode::kQueued;
  reason.pool = "gpu-h100";
  TimeToGpuInputs in = EstimateInputs(reason, times, {}, kNow);
  ASSERT_TRUE(in.first_ready.has_value());
  EXPECT_EQ(in.first_ready->median, absl::Seconds(40));
  reason.pool = "gpu-l4";
  EXPECT_FALSE(EstimateInputs(reason, times, {}, kNow).first_ready.has_value());
}

}  // namespace
}  // namespace wsched::placement
