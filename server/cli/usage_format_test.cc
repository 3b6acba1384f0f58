#include "server/cli/usage_format.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::cli {
namespace {

using ::testing::HasSubstr;

class UsageFormatTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(absl::LoadTimeZone("Europe/Berlin", &berlin_)); }

  absl::Time Parse(std::string_view text) {
    auto t = ParseUsageTime(text, "since", now_, berlin_);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.value_or(absl::InfinitePast());
  }

  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  absl::TimeZone berlin_;
};

TEST_F(UsageFormatTest, TimesAreNowDurationsRfc3339OrLocalDatesInTheZone) {
  EXPECT_EQ(Parse("now"), now_);
  EXPECT_EQ(Parse("36h"), now_ - absl::Hours(36));
  EXPECT_EQ(Parse("2026-10-25T00:00:00+02:00"), absl::FromUnixSeconds(1'792'879'200));
  EXPECT_EQ(Parse("2026-10-24T22:00:00Z"), absl::FromUnixSeconds(1'792'879'200));
  // Local midnight of the DST day, and of the day after: 25 hours apart.
  EXPECT_EQ(Parse("2026-10-26") - Parse("2026-10-25"), absl::Hours(25));
  EXPECT_EQ(Parse("2026-10"), Parse("2026-10-01"));
  EXPECT_EQ(Parse("2026-10-25T14:00"), absl::FromUnixSeconds(1'792'879'200 + 15 * 3600));
}

TEST_F(UsageFormatTest, AnythingElseIsRefusedNamingTheFlag) {
  auto t = ParseUsageTime("yesterday", "until", now_, berlin_);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("--until must be"));
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("\"yesterday\""));
}

TEST_F(UsageFormatTest, TimesPrintWithTheZonesOffsetAndMicrosecondsOnlyWhenThere) {
  EXPECT_EQ(UsageTimeText(absl::FromUnixSeconds(1'792'879'200), berlin_),
            "2026-10-25T00:00:00+02:00");
  EXPECT_EQ(UsageTimeText(absl::FromUnixMicros(1'792'969'200'000'001), berlin_),
            "2026-10-26T00:00:00.000001+01:00");
  EXPECT_EQ(UsageTimeText(absl::FromUnixSeconds(0), absl::UTCTimeZone()), "1970-01-01T00:00:00+00:00");
}

TEST_F(UsageFormatTest, CsvQuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(CsvLine({"a", "b c", ""}), "a,b c,\r\n");
  EXPECT_EQ(CsvLine({"x,y", "say \"hi\"", "l1\nl2"}), "\"x,y\",\"say \"\"hi\"\"\",\"l1\nl2\"\r\n");
}

}  // namespace
}  // namespace wsched::cli
