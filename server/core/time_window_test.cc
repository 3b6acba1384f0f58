#include "server/core/time_window.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// 2024-01-01 is a Monday.
absl::CivilMinute Local(int day, int hour, int minute) {
  return absl::CivilMinute(2024, 1, day, hour, minute);
}

constexpr absl::Weekday kMonday = absl::Weekday::monday;
constexpr absl::Weekday kFriday = absl::Weekday::friday;

TEST(TimeWindowTest, StartIsInclusiveEndExclusive) {
  TimeWindow window{.days = {kMonday}, .start_minute = 8 * 60, .end_minute = 18 * 60};
  EXPECT_FALSE(WindowCovers(window, Local(1, 7, 59)));
  EXPECT_TRUE(WindowCovers(window, Local(1, 8, 0)));
  EXPECT_TRUE(WindowCovers(window, Local(1, 17, 59)));
  EXPECT_FALSE(WindowCovers(window, Local(1, 18, 0)));
  EXPECT_FALSE(WindowCovers(window, Local(2, 12, 0)));  // Tuesday.
}

TEST(TimeWindowTest, DefaultWindowIsEveryWholeDay) {
  TimeWindow window;
  for (int day = 1; day <= 7; ++day) {
    EXPECT_TRUE(WindowCovers(window, Local(day, 0, 0)));
    EXPECT_TRUE(WindowCovers(window, Local(day, 23, 59)));
  }
  // Equal start and end: the whole day too.
  EXPECT_TRUE(
      WindowCovers({.days = {kMonday}, .start_minute = 0, .end_minute = 0}, Local(1, 13, 0)));
}

TEST(TimeWindowTest, WindowPastMidnightBelongsToTheDayItStarts) {
  TimeWindow window{.days = {kFriday}, .start_minute = 22 * 60, .end_minute = 6 * 60};
  EXPECT_TRUE(WindowCovers(window, Local(5, 23, 0)));  // Friday night.
  EXPECT_TRUE(WindowCovers(window, Local(6, 5, 59)));  // Saturday early morning.
  EXPECT_FALSE(WindowCovers(window, Local(6, 6, 0)));
  EXPECT_FALSE(WindowCovers(window, Local(5, 5, 0)));   // Friday early: Thursday's window.
  EXPECT_FALSE(WindowCovers(window, Local(6, 23, 0)));  // Saturday night.
}

TEST(TimeWindowTest, LoadsNamedZonesAndFixedOffsets) {
  EXPECT_EQ(LoadScheduleTimeZone("")->name(), "UTC");
  absl::Time noon_utc = absl::FromCivil(absl::CivilMinute(2024, 1, 1, 12, 0), absl::UTCTimeZone());
  auto hour_in = [&](absl::string_view zone) {
    absl::StatusOr<absl::TimeZone> tz = LoadScheduleTimeZone(zone);
    EXPECT_TRUE(tz.ok()) << zone << ": " << tz.status();
    return tz.ok() ? absl::ToCivilHour(noon_utc, *tz).hour() : -1;
  };
  EXPECT_EQ(hour_in("UTC"), 12);
  EXPECT_EQ(hour_in("Z"), 12);
  EXPECT_EQ(hour_in("+02:00"), 14);
  EXPECT_EQ(hour_in("UTC-05:00"), 7);
  EXPECT_EQ(hour_in("Europe/Berlin"), 13);  // CET in January.
  EXPECT_EQ(hour_in("America/New_York"), 7);
}

TEST(TimeWindowTest, RefusesWhatIsNotAZone) {
  EXPECT_THAT(LoadScheduleTimeZone("Europe/Berlln").status().message(),
              HasSubstr("unknown time zone \"Europe/Berlln\""));
  EXPECT_FALSE(LoadScheduleTimeZone("localtime").ok());
  EXPECT_FALSE(LoadScheduleTimeZone("/etc/passwd").ok());
  EXPECT_FALSE(LoadScheduleTimeZone("../../etc/passwd").ok());
  EXPECT_FALSE(LoadScheduleTimeZone("file:/usr/share/zoneinfo/UTC").ok());
  EXPECT_FALSE(LoadScheduleTimeZone("+15:00").ok());
  EXPECT_FALSE(LoadScheduleTimeZone("UTC+1").ok());
}

TEST(TimeWindowTest, ParsesAndFormatsTimesOffsetsAndDays) {
  EXPECT_EQ(*ParseTimeOfDay("08:30"), 510);
  EXPECT_EQ(*ParseTimeOfDay("24:00"), 1440);
  EXPECT_FALSE(ParseTimeOfDay("8:30").ok());
  EXPECT_FALSE(ParseTimeOfDay("12:60").ok());
  EXPECT_FALSE(ParseTimeOfDay("24:01").ok());
  EXPECT_EQ(FormatTimeOfDay(510), "08:30");
  EXPECT_EQ(FormatTimeOfDay(1440), "24:00");
  EXPECT_EQ(*ParseUtcOffset("UTC"), 0);
  EXPECT_EQ(*ParseUtcOffset("+02:00"), 120);
  EXPECT_EQ(*ParseUtcOffset("UTC-05:30"), -330);
  EXPECT_FALSE(ParseUtcOffset("CET").ok());
  EXPECT_EQ(*ParseWeekday("Mon"), kMonday);
  EXPECT_EQ(*ParseWeekday("sunday"), absl::Weekday::sunday);
  EXPECT_FALSE(ParseWeekday("mo").ok());
}

TEST(TimeWindowTest, DayRangesReadAndWriteBack) {
  using absl::Weekday;
  EXPECT_THAT(*ParseDayRange("mon-fri"),
              ElementsAre(Weekday::monday, Weekday::tuesday, Weekday::wednesday, Weekday::thursday,
                          Weekday::friday));
  EXPECT_THAT(*ParseDayRange("fri-mon"),
              ElementsAre(Weekday::friday, Weekday::saturday, Weekday::sunday, Weekday::monday));
  EXPECT_THAT(*ParseDayRange("Sat"), ElementsAre(Weekday::saturday));
  EXPECT_THAT(ParseDayRange("mon-fr").status().message(), HasSubstr("\"fr\": not a day"));
  EXPECT_FALSE(ParseDayRange("mon-").ok());
  EXPECT_THAT(FormatDays(*ParseDayRange("fri-mon")), ElementsAre("mon", "fri-sun"));
  EXPECT_THAT(FormatDays({Weekday::wednesday, Weekday::monday}), ElementsAre("mon", "wed"));
  EXPECT_THAT(FormatDays(*ParseDayRange("mon-sun")), ElementsAre("mon-sun"));
  EXPECT_EQ(
      DescribeWindow({.days = *ParseDayRange("mon-fri"), .start_minute = 480, .end_minute = 1080}),
      "mon-fri 08:00-18:00");
  EXPECT_EQ(DescribeWindow({.start_minute = 1320, .end_minute = 360}), "every day 22:00-06:00");
}

}  // namespace
}  // namespace wsched::core
