#include "server/simulate/wake.h"

#include "gtest/gtest.h"
#include "server/scaling/test_pools.h"

namespace wsched::simulate {
namespace {

absl::Time Utc(int month, int day, int hour, int minute = 0) {
  return absl::FromCivil(absl::CivilSecond(2026, month, day, hour, minute, 0), absl::UTCTimeZone());
}

// Weekdays 08:00-18:00 Europe/Berlin: warm buffer 2 and no scale-down.
core::NodePool OfficeHoursPool() {
  core::NodePool pool = scaling::testing::GpuPool();
  core::TimeWindow office{.days = {absl::Weekday::monday, absl::Weekday::tuesday,
                                   absl::Weekday::wednesday, absl::Weekday::thursday,
                                   absl::Weekday::friday},
                          .start_minute = 8 * 60,
                          .end_minute = 18 * 60};
  pool.warm_buffer = {.default_nodes = 0, .time_zone = "Europe/Berlin",
                      .windows = {{.when = office, .nodes = 2}}};
  pool.scale_down.schedule = {.time_zone = "Europe/Berlin",
                              .windows = {{.when = office, .allow = false}}};
  return pool;
}

TEST(NextScheduleEdge, FindsTheWindowsEdgesInLocalTime) {
  core::NodePool pool = OfficeHoursPool();
  ScheduleEdges edges;
  // Monday 2 March (CET, UTC+1): 08:00 local is 07:00 UTC.
  EXPECT_EQ(NextScheduleEdge(pool, Utc(3, 2, 6, 30), edges), Utc(3, 2, 7));
  EXPECT_EQ(NextScheduleEdge(pool, Utc(3, 2, 6, 59), edges), Utc(3, 2, 7)) << "remembered";
  EXPECT_EQ(NextScheduleEdge(pool, Utc(3, 2, 7), edges), Utc(3, 2, 17));
  // After daylight saving starts (29 March), 08:00 local is 06:00 UTC.
  EXPECT_EQ(NextScheduleEdge(pool, Utc(3, 30, 5, 0), edges), Utc(3, 30, 6));
}

TEST(NextScheduleEdge, LooksADayAheadAtMost) {
  core::NodePool pool = OfficeHoursPool();
  ScheduleEdges edges;
  // Friday 18:00 local: nothing changes before Monday; look again tomorrow.
  absl::Time friday_evening = Utc(3, 6, 17, 30);
  EXPECT_EQ(NextScheduleEdge(pool, friday_evening, edges), Utc(3, 7, 17, 31));
}

TEST(NextScheduleEdge, NoWindowsNoEdge) {
  ScheduleEdges edges;
  EXPECT_EQ(NextScheduleEdge(scaling::testing::GpuPool(), Utc(3, 2, 6), edges),
            absl::InfiniteFuture());
}

class NextWakeTest : public ::testing::Test {
 protected:
  absl::Time Wake() {
    WakeInputs in{.observation = &obs_,
                  .unmet_since = unmet_since_,
                  .last_scale_up = last_scale_up_,
                  .backoff_until = backoff_until_,
                  .batching_window = absl::Seconds(2)};
    return NextWake(in, edges_, now_);
  }

  absl::Time now_ = Utc(3, 2, 12);
  scaling::PoolObservation obs_{.pool = scaling::testing::GpuPool()};
  std::optional<absl::Time> unmet_since_;
  absl::Time last_scale_up_ = absl::InfinitePast();
  std::optional<absl::Time> backoff_until_;
  ScheduleEdges edges_;
};

TEST_F(NextWakeTest, NothingPendingNothingIdle) {
  obs_.nodes.push_back({.name = "busy", .workspaces = 2, .requested_at = absl::InfinitePast()});
  EXPECT_EQ(Wake(), absl::InfiniteFuture());
}

TEST_F(NextWakeTest, TheBatchingWindowOfUnmetWork) {
  unmet_since_ = now_ - absl::Milliseconds(500);
  EXPECT_EQ(Wake(), now_ + absl::Milliseconds(1500));
  unmet_since_ = now_ - absl::Seconds(5);  // Passed: nothing more to wait for.
  EXPECT_EQ(Wake(), absl::InfiniteFuture());
}

TEST_F(NextWakeTest, AnIdleNodeFromItsLatestEmptyOrReadyTime) {
  obs_.nodes.push_back({.name = "idle",
                        .workspaces = 0,
                        .requested_at = absl::InfinitePast(),
                        .ready_at = now_ - absl::Minutes(2),
                        .empty_since = now_ - absl::Minutes(4)});
  EXPECT_EQ(Wake(), now_ - absl::Minutes(2) + obs_.pool.scale_down.unneeded);
}

TEST_F(NextWakeTest, TheDelayAfterAScaleUpAndTheProvisioningDeadline) {
  obs_.in_flight.push_back({.requested_at = now_ - absl::Minutes(1), .count = 1});
  // delay_after_add (10 min) ends before max_node_provision_time (15 min).
  EXPECT_EQ(Wake(), now_ + absl::Minutes(9));
  last_scale_up_ = now_ - absl::Seconds(10);
  EXPECT_EQ(Wake(), now_ + absl::Minutes(10) - absl::Seconds(10));
  obs_.pool.scale_down.delay_after_add = absl::Hours(1);
  EXPECT_EQ(Wake(), now_ + absl::Minutes(14) + absl::Nanoseconds(1));
}

TEST_F(NextWakeTest, TheEndOfABackoff) {
  backoff_until_ = now_ + absl::Seconds(30);
  EXPECT_EQ(Wake(), now_ + absl::Seconds(30));
}

TEST_F(NextWakeTest, AScheduleEdge) {
  obs_.pool = OfficeHoursPool();
  EXPECT_EQ(Wake(), Utc(3, 2, 17));
}

}  // namespace
}  // namespace wsched::simulate
