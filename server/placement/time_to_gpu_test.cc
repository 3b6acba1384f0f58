#include "server/placement/time_to_gpu.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::placement {
namespace {

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
  for (PendingCode code : {PendingCode::kPoolAtMaxSize, PendingCode::kOrgGpuQuota,
                           PendingCode::kDriverInstallFailed, PendingCode::kGpusUnhealthy}) {
    TimeToGpu t = EstimateTimeToGpu(Inputs(code));
    EXPECT_FALSE(t.estimate.has_value()) << PendingCodeName(code);
    EXPECT_THAT(t.basis, HasSubstr("no estimate: ")) << PendingCodeName(code);
  }
}

}  // namespace
}  // namespace wsched::placement
