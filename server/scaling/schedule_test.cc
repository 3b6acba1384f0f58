#include "server/scaling/schedule.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/time_window.h"

namespace wsched::scaling {
namespace {

absl::Time Utc(int month, int day, int hour, int minute) {
  return absl::FromCivil(absl::CivilMinute(2026, month, day, hour, minute), absl::UTCTimeZone());
}

core::TimeWindow Weekdays(int from_hour, int to_hour) {
  return {.days = *core::ParseDayRange("mon-fri"),
          .start_minute = from_hour * 60,
          .end_minute = to_hour * 60};
}

// "Keep 2 nodes warm 08:00-18:00 on weekdays" in `zone`.
core::WarmBuffer OfficeHours(std::string zone) {
  return {.default_nodes = 0,
          .time_zone = std::move(zone),
          .windows = {{.when = Weekdays(8, 18), .nodes = 2}}};
}

TEST(WarmBufferAtTest, ConstantIsTheSameAllWeek) {
  core::WarmBuffer buffer = core::WarmBuffer::Constant(3);
  for (int day = 23; day <= 29; ++day) {
    WarmBufferNow now = WarmBufferAt(buffer, Utc(3, day, 3, 0));
    EXPECT_EQ(now.nodes, 3);
    EXPECT_EQ(now.window, std::nullopt);
  }
}

TEST(WarmBufferAtTest, FollowsTheWindowAcrossItsBoundaries) {
  core::WarmBuffer buffer = OfficeHours("Europe/Berlin");
  // Friday 2026-03-27, CET (UTC+1): 08:00 local is 07:00 UTC.
  EXPECT_EQ(WarmBufferAt(buffer, Utc(3, 27, 6, 59)).nodes, 0);
  WarmBufferNow open = WarmBufferAt(buffer, Utc(3, 27, 7, 0));
  EXPECT_EQ(open.nodes, 2);
  EXPECT_EQ(open.window, 0u);
  EXPECT_EQ(WarmBufferAt(buffer, Utc(3, 27, 16, 59)).nodes, 2);
  EXPECT_EQ(WarmBufferAt(buffer, Utc(3, 27, 17, 0)).nodes, 0);  // The end is exclusive.
  EXPECT_EQ(WarmBufferAt(buffer, Utc(3, 28, 10, 0)).nodes, 0);  // Saturday.
}

TEST(WarmBufferAtTest, LocalHoursHoldAcrossTheSpringDstChange) {
  // Europe/Berlin moves to CEST (UTC+2) on Sunday 2026-03-29 at 01:00 UTC.
  core::WarmBuffer berlin = OfficeHours("Europe/Berlin");
  // Monday 2026-03-30: 08:00 local is now 06:00 UTC.
  EXPECT_EQ(WarmBufferAt(berlin, Utc(3, 30, 5, 59)).nodes, 0);
  EXPECT_EQ(WarmBufferAt(berlin, Utc(3, 30, 6, 0)).nodes, 2);
  EXPECT_EQ(WarmBufferAt(berlin, Utc(3, 30, 15, 59)).nodes, 2);
  EXPECT_EQ(WarmBufferAt(berlin, Utc(3, 30, 16, 0)).nodes, 0);
  // A fixed offset does not move: 06:30 UTC is still 07:30 there.
  core::WarmBuffer fixed = OfficeHours("+01:00");
  EXPECT_EQ(WarmBufferAt(fixed, Utc(3, 30, 6, 30)).nodes, 0);
  EXPECT_EQ(WarmBufferAt(fixed, Utc(3, 30, 7, 0)).nodes, 2);
}

TEST(WarmBufferAtTest, LocalHoursHoldAcrossTheAutumnDstChange) {
  // Back to CET (UTC+1) on Sunday 2026-10-25 at 01:00 UTC.
  core::WarmBuffer berlin = OfficeHours("Europe/Berlin");
  EXPECT_EQ(WarmBufferAt(berlin, Utc(10, 23, 6, 0)).nodes, 2);  // Friday, 08:00 CEST.
  EXPECT_EQ(WarmBufferAt(berlin, Utc(10, 26, 6, 0)).nodes, 0);  // Monday, 07:00 CET.
  EXPECT_EQ(WarmBufferAt(berlin, Utc(10, 26, 7, 0)).nodes, 2);
  EXPECT_EQ(WarmBufferAt(berlin, Utc(10, 26, 17, 0)).nodes, 0);
}

TEST(WarmBufferAtTest, WindowsInTheSkippedAndTheRepeatedHour) {
  core::WarmBuffer buffer{
      .time_zone = "Europe/Berlin",
      .windows = {
          {.when = {.days = {absl::Weekday::sunday}, .start_minute = 120, .end_minute = 180},
           .nodes = 1}}};
  // 2026-03-29: local time jumps from 01:59 to 03:00; 02:00-03:00 never happens.
  EXPECT_EQ(WarmBufferAt(buffer, Utc(3, 29, 0, 59)).nodes, 0);
  EXPECT_EQ(WarmBufferAt(buffer, Utc(3, 29, 1, 0)).nodes, 0);
  // 2026-10-25: 02:00-03:00 happens twice, once in CEST and once in CET.
  EXPECT_EQ(WarmBufferAt(buffer, Utc(10, 24, 23, 59)).nodes, 0);
  EXPECT_EQ(WarmBufferAt(buffer, Utc(10, 25, 0, 0)).nodes, 1);
  EXPECT_EQ(WarmBufferAt(buffer, Utc(10, 25, 1, 0)).nodes, 1);
  EXPECT_EQ(WarmBufferAt(buffer, Utc(10, 25, 1, 59)).nodes, 1);
  EXPECT_EQ(WarmBufferAt(buffer, Utc(10, 25, 2, 0)).nodes, 0);
}

TEST(WarmBufferAtTest, NightWindowSpanningTheDstChangeKeepsItsLocalEnd) {
  core::WarmBuffer buffer{.time_zone = "Europe/Berlin",
                          .windows = {{.when = {.days = {absl::Weekday::saturday},
                                                .start_minute = 22 * 60,
                                                .end_minute = 6 * 60},
                                       .nodes = 3}}};
  EXPECT_EQ(WarmBufferAt(buffer, Utc(3, 28, 20, 59)).nodes, 0);  // 21:59 CET.
  EXPECT_EQ(WarmBufferAt(buffer, Utc(3, 28, 21, 0)).nodes, 3);   // 22:00 CET.
  EXPECT_EQ(WarmBufferAt(buffer, Utc(3, 29, 3, 59)).nodes, 3);   // 05:59 CEST.
  EXPECT_EQ(WarmBufferAt(buffer, Utc(3, 29, 4, 0)).nodes, 0);    // 06:00 CEST.
}

TEST(WarmBufferAtTest, FirstMatchingWindowWinsSoAWindowCanLower) {
  core::WarmBuffer buffer{
      .default_nodes = 2,
      .windows = {{.when = {.days = *core::ParseDayRange("sat-sun")}, .nodes = 0},
                  {.when = {}, .nodes = 5}}};
  WarmBufferNow saturday = WarmBufferAt(buffer, Utc(3, 28, 12, 0));
  EXPECT_EQ(saturday.nodes, 0);
  EXPECT_EQ(saturday.window, 0u);
  EXPECT_EQ(WarmBufferAt(buffer, Utc(3, 30, 12, 0)).nodes, 5);
}

TEST(ScaleDownAtTest, NoScaleDownDuringBusinessHours) {
  core::ScaleDownSchedule schedule{.time_zone = "Europe/Berlin",
                                   .windows = {{.when = Weekdays(8, 18), .allow = false}}};
  EXPECT_TRUE(ScaleDownAt(schedule, Utc(3, 27, 6, 59)).allowed);  // Friday 07:59 CET.
  ScaleDownNow held = ScaleDownAt(schedule, Utc(3, 27, 7, 0));
  EXPECT_FALSE(held.allowed);
  EXPECT_EQ(held.window, 0u);
  EXPECT_TRUE(ScaleDownAt(schedule, Utc(3, 27, 17, 0)).allowed);
  // After the spring change the same local hours are an hour earlier in UTC.
  EXPECT_FALSE(ScaleDownAt(schedule, Utc(3, 30, 6, 0)).allowed);
  EXPECT_TRUE(ScaleDownAt(schedule, Utc(3, 30, 16, 0)).allowed);
  EXPECT_TRUE(ScaleDownAt(schedule, Utc(3, 28, 12, 0)).allowed);  // Saturday.
}

TEST(ScaleDownAtTest, OnlyAtNightWhenTheDefaultForbids) {
  core::ScaleDownSchedule schedule{
      .default_allow = false,
      .time_zone = "UTC",
      .windows = {{.when = {.start_minute = 22 * 60, .end_minute = 6 * 60}, .allow = true}}};
  EXPECT_FALSE(ScaleDownAt(schedule, Utc(3, 27, 21, 59)).allowed);
  EXPECT_TRUE(ScaleDownAt(schedule, Utc(3, 27, 22, 0)).allowed);
  EXPECT_TRUE(ScaleDownAt(schedule, Utc(3, 28, 5, 59)).allowed);
  ScaleDownNow day = ScaleDownAt(schedule, Utc(3, 28, 6, 0));
  EXPECT_FALSE(day.allowed);
  EXPECT_EQ(day.window, std::nullopt);
  EXPECT_TRUE(ScaleDownAt(core::ScaleDownSchedule{}, Utc(3, 28, 12, 0)).allowed);
}

TEST(ScheduleTest, DescribesAWindowForTheSignal) {
  EXPECT_EQ(DescribeScheduleWindow(1, Weekdays(8, 18), "Europe/Berlin"),
            "windows[1] mon-fri 08:00-18:00 Europe/Berlin");
  EXPECT_EQ(DescribeScheduleWindow(0, {}, ""), "windows[0] every day 00:00-24:00 UTC");
}

}  // namespace
}  // namespace wsched::scaling
