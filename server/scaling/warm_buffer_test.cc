#include "server/scaling/warm_buffer.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::scaling {
namespace {

using ::testing::HasSubstr;

// 2024-01-01 is a Monday.
absl::Time Utc(int day, int hour, int minute) {
  return absl::FromCivil(absl::CivilMinute(2024, 1, day, hour, minute), absl::UTCTimeZone());
}

constexpr absl::Weekday kWeekdays[] = {absl::Weekday::monday, absl::Weekday::tuesday,
                                       absl::Weekday::wednesday, absl::Weekday::thursday,
                                       absl::Weekday::friday};

WarmBufferSchedule OfficeHours(int utc_offset_minutes) {
  return {.default_buffer = 0,
          .utc_offset_minutes = utc_offset_minutes,
          .windows = {{.days = {std::begin(kWeekdays), std::end(kWeekdays)},
                       .start_minute = 8 * 60,
                       .end_minute = 18 * 60,
                       .buffer = 2}}};
}

TEST(WarmBufferTest, ConstantIsTheSameAllWeek) {
  WarmBufferSchedule schedule = WarmBufferSchedule::Constant(3);
  for (int day = 1; day <= 7; ++day) EXPECT_EQ(schedule.BufferAt(Utc(day, 3, 0)), 3);
}

TEST(WarmBufferTest, WeekdayOfficeHoursInUtc) {
  WarmBufferSchedule schedule = OfficeHours(0);
  EXPECT_EQ(schedule.BufferAt(Utc(1, 7, 59)), 0);
  EXPECT_EQ(schedule.BufferAt(Utc(1, 8, 0)), 2);
  EXPECT_EQ(schedule.BufferAt(Utc(1, 17, 59)), 2);
  EXPECT_EQ(schedule.BufferAt(Utc(1, 18, 0)), 0);  // End is exclusive.
  EXPECT_EQ(schedule.BufferAt(Utc(6, 12, 0)), 0);  // Saturday.
}

TEST(WarmBufferTest, FixedOffsetShiftsTheWindow) {
  WarmBufferSchedule schedule = OfficeHours(60);  // UTC+01:00: 08:00 local = 07:00 UTC.
  EXPECT_EQ(schedule.BufferAt(Utc(1, 7, 0)), 2);
  EXPECT_EQ(schedule.BufferAt(Utc(1, 17, 0)), 0);
  EXPECT_EQ(OfficeHours(-5 * 60).BufferAt(Utc(1, 13, 0)), 2);  // 08:00 in UTC-05:00.
  // The day of week is the local one too: Sunday 23:30 UTC is Monday in UTC+01:00.
  WarmBufferSchedule mondays{.utc_offset_minutes = 60,
                             .windows = {{.days = {absl::Weekday::monday}, .buffer = 1}}};
  EXPECT_EQ(mondays.BufferAt(Utc(7, 23, 30)), 1);
  EXPECT_EQ(mondays.BufferAt(Utc(7, 22, 30)), 0);
}

TEST(WarmBufferTest, WindowPastMidnightBelongsToTheDayItStarts) {
  WarmBufferSchedule schedule{.default_buffer = 1,
                              .windows = {{.days = {absl::Weekday::friday},
                                           .start_minute = 22 * 60,
                                           .end_minute = 6 * 60,
                                           .buffer = 4}}};
  EXPECT_EQ(schedule.BufferAt(Utc(5, 23, 0)), 4);  // Friday night.
  EXPECT_EQ(schedule.BufferAt(Utc(6, 5, 59)), 4);  // Saturday early morning.
  EXPECT_EQ(schedule.BufferAt(Utc(6, 6, 0)), 1);
  EXPECT_EQ(schedule.BufferAt(Utc(5, 5, 0)), 1);   // Friday early: Thursday's window.
  EXPECT_EQ(schedule.BufferAt(Utc(6, 23, 0)), 1);  // Saturday night.
}

TEST(WarmBufferTest, FirstMatchingWindowWinsSoAWindowCanLower) {
  WarmBufferSchedule schedule{.default_buffer = 2,
                              .windows = {{.days = {absl::Weekday::saturday, absl::Weekday::sunday},
                                           .start_minute = 0,
                                           .end_minute = 0,
                                           .buffer = 0},  // Whole day.
                                          {.start_minute = 0, .end_minute = 0, .buffer = 5}}};
  EXPECT_EQ(schedule.BufferAt(Utc(6, 12, 0)), 0);
  EXPECT_EQ(schedule.ActiveWindow(Utc(6, 12, 0)), 0u);
  EXPECT_EQ(schedule.BufferAt(Utc(2, 12, 0)), 5);
}

TEST(WarmBufferTest, ValidateNamesTheBadField) {
  EXPECT_TRUE(OfficeHours(0).Validate().ok());
  WarmBufferSchedule bad = OfficeHours(0);
  bad.windows.push_back({.start_minute = 60, .end_minute = 1441, .buffer = 1});
  EXPECT_THAT(bad.Validate().message(), HasSubstr("windows[1].end_minute"));
  bad = OfficeHours(0);
  bad.windows[0].buffer = -1;
  EXPECT_THAT(bad.Validate().message(), HasSubstr("windows[0].buffer"));
  EXPECT_FALSE(OfficeHours(15 * 60).Validate().ok());
}

TEST(WarmBufferTest, ParsesTimesOffsetsAndDays) {
  EXPECT_EQ(*ParseTimeOfDay("08:30"), 510);
  EXPECT_EQ(*ParseTimeOfDay("24:00"), 1440);
  EXPECT_FALSE(ParseTimeOfDay("8:30").ok());
  EXPECT_FALSE(ParseTimeOfDay("12:60").ok());
  EXPECT_FALSE(ParseTimeOfDay("24:01").ok());
  EXPECT_EQ(*ParseUtcOffset("UTC"), 0);
  EXPECT_EQ(*ParseUtcOffset("Z"), 0);
  EXPECT_EQ(*ParseUtcOffset("+02:00"), 120);
  EXPECT_EQ(*ParseUtcOffset("UTC-05:30"), -330);
  EXPECT_FALSE(ParseUtcOffset("+15:00").ok());
  EXPECT_FALSE(ParseUtcOffset("CET").ok());
  EXPECT_EQ(*ParseWeekday("Mon"), absl::Weekday::monday);
  EXPECT_EQ(*ParseWeekday("sunday"), absl::Weekday::sunday);
  EXPECT_FALSE(ParseWeekday("mo").ok());
}

}  // namespace
}  // namespace wsched::scaling
