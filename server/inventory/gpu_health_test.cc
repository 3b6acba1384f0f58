#include "server/inventory/gpu_health.h"

#include "gtest/gtest.h"

namespace wsched::inventory {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1700000000);
const absl::Duration kHealthyFor = absl::Minutes(10);

core::Gpu HealthyGpu() {
  core::Gpu gpu;
  gpu.uuid = "GPU-0";
  return gpu;
}

TEST(GpuHealth, UnhealthyReportTakesTheGpuOutWithItsReason) {
  core::Gpu gpu = HealthyGpu();
  EXPECT_TRUE(ApplyGpuHealthReport(gpu, {false, "XID 79: GPU has fallen off the bus"}, kStart,
                                   kHealthyFor));
  EXPECT_FALSE(gpu.healthy);
  EXPECT_EQ(gpu.health_reason, "XID 79: GPU has fallen off the bus");
  EXPECT_EQ(gpu.unhealthy_since, kStart);
  EXPECT_EQ(gpu.reported_healthy_since, absl::InfinitePast());
  // The same report again changes nothing (a liveness-only heartbeat).
  EXPECT_FALSE(ApplyGpuHealthReport(gpu, {false, "XID 79: GPU has fallen off the bus"},
                                    kStart + absl::Seconds(10), kHealthyFor));
  EXPECT_EQ(gpu.unhealthy_since, kStart);
}

TEST(GpuHealth, UnhealthyWithoutReasonGetsAGenericOne) {
  core::Gpu gpu = HealthyGpu();
  ApplyGpuHealthReport(gpu, {false, ""}, kStart, kHealthyFor);
  EXPECT_EQ(gpu.health_reason, kUnhealthyWithoutReason);
}

TEST(GpuHealth, ReturnsOnlyAfterReportingHealthyForTheWholeTime) {
  core::Gpu gpu = HealthyGpu();
  ApplyGpuHealthReport(gpu, {false, "XID 48"}, kStart, kHealthyFor);
  const absl::Time healthy_at = kStart + absl::Minutes(1);
  EXPECT_TRUE(ApplyGpuHealthReport(gpu, {true, ""}, healthy_at, kHealthyFor));
  EXPECT_FALSE(gpu.healthy);
  EXPECT_EQ(gpu.reported_healthy_since, healthy_at);
  EXPECT_EQ(gpu.health_reason, "XID 48");  // Still says why it is out.
  EXPECT_FALSE(ApplyGpuHealthReport(gpu, {true, ""}, healthy_at + kHealthyFor - absl::Seconds(1),
                                    kHealthyFor));
  EXPECT_FALSE(gpu.healthy);
  EXPECT_TRUE(ApplyGpuHealthReport(gpu, {true, ""}, healthy_at + kHealthyFor, kHealthyFor));
  EXPECT_TRUE(gpu.healthy);
  EXPECT_EQ(gpu, HealthyGpu());
}

TEST(GpuHealth, ARelapseRestartsTheWait) {
  core::Gpu gpu = HealthyGpu();
  ApplyGpuHealthReport(gpu, {false, "XID 92"}, kStart, kHealthyFor);
  ApplyGpuHealthReport(gpu, {true, ""}, kStart + absl::Minutes(1), kHealthyFor);
  ApplyGpuHealthReport(gpu, {false, "XID 92"}, kStart + absl::Minutes(9), kHealthyFor);
  EXPECT_EQ(gpu.unhealthy_since, kStart);  // Out since the first failure.
  EXPECT_EQ(gpu.reported_healthy_since, absl::InfinitePast());
  ApplyGpuHealthReport(gpu, {true, ""}, kStart + absl::Minutes(10), kHealthyFor);
  ApplyGpuHealthReport(gpu, {true, ""}, kStart + absl::Minutes(19), kHealthyFor);
  EXPECT_FALSE(gpu.healthy);
  ApplyGpuHealthReport(gpu, {true, ""}, kStart + absl::Minutes(20), kHealthyFor);
  EXPECT_TRUE(gpu.healthy);
}

TEST(GpuHealth, ZeroWaitReturnsAtTheFirstHealthyReport) {
  core::Gpu gpu = HealthyGpu();
  ApplyGpuHealthReport(gpu, {false, "XID 79"}, kStart, absl::ZeroDuration());
  ApplyGpuHealthReport(gpu, {true, ""}, kStart + absl::Seconds(10), absl::ZeroDuration());
  EXPECT_TRUE(gpu.healthy);
}

TEST(GpuHealth, ClearReturnsAtOnce) {
  core::Gpu gpu = HealthyGpu();
  EXPECT_FALSE(ClearGpuHealth(gpu));
  ApplyGpuHealthReport(gpu, {false, "XID 79"}, kStart, kHealthyFor);
  EXPECT_TRUE(ClearGpuHealth(gpu));
  EXPECT_EQ(gpu, HealthyGpu());
}

TEST(GpuHealth, RegisteringAgainKeepsTheWaitAndIgnoresAgentTimes) {
  core::Gpu stored = HealthyGpu();
  ApplyGpuHealthReport(stored, {false, "XID 79"}, kStart, kHealthyFor);
  ApplyGpuHealthReport(stored, {true, ""}, kStart + absl::Minutes(1), kHealthyFor);

  core::Gpu registered = HealthyGpu();  // The agent says healthy...
  registered.unhealthy_since = kStart + absl::Hours(5);  // ...with a time of its own.
  HealthOnRegister(&stored, registered, kStart + absl::Minutes(2), kHealthyFor);
  EXPECT_FALSE(registered.healthy);
  EXPECT_EQ(registered.unhealthy_since, kStart);
  EXPECT_EQ(registered.reported_healthy_since, kStart + absl::Minutes(1));

  core::Gpu fresh = HealthyGpu();
  fresh.healthy = false;
  fresh.health_reason = "GPU is lost";
  HealthOnRegister(nullptr, fresh, kStart, kHealthyFor);
  EXPECT_FALSE(fresh.healthy);
  EXPECT_EQ(fresh.unhealthy_since, kStart);
  EXPECT_EQ(fresh.health_reason, "GPU is lost");

  core::Gpu new_healthy = HealthyGpu();
  new_healthy.health_reason = "stray";
  HealthOnRegister(nullptr, new_healthy, kStart, kHealthyFor);
  EXPECT_EQ(new_healthy, HealthyGpu());
}

}  // namespace
}  // namespace wsched::inventory
