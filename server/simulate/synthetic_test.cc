#include "server/simulate/synthetic.h"

#include <algorithm>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/simulate/trace.h"

namespace wsched::simulate {
namespace {

using ::testing::SizeIs;

TEST(SyntheticTrace, TheSameOptionsGiveTheSameTrace) {
  SyntheticOptions options{.workspaces = 2000};
  std::string once = TraceCsv(SyntheticTrace(options));
  EXPECT_EQ(once, TraceCsv(SyntheticTrace(options)));
  options.seed = 2;
  EXPECT_NE(once, TraceCsv(SyntheticTrace(options)));
}

TEST(SyntheticTrace, AWeekOfOfficeHoursWithBursts) {
  SyntheticOptions options{.workspaces = 20'000};
  std::vector<Arrival> trace = SyntheticTrace(options);
  ASSERT_THAT(trace, SizeIs(20'000));
  EXPECT_TRUE(std::is_sorted(trace.begin(), trace.end(),
                             [](const Arrival& a, const Arrival& b) { return a.time < b.time; }));
  EXPECT_GE(trace.front().time, options.start);
  EXPECT_LT(trace.back().time, options.start + absl::Hours(24 * 7));
  // Arrivals per hour of the week, and per ten minutes.
  std::vector<int> hourly(24 * 7), ten_minutes(6 * 24 * 7);
  for (const Arrival& a : trace) {
    ++hourly[(a.time - options.start) / absl::Hours(1)];
    ++ten_minutes[(a.time - options.start) / absl::Minutes(10)];
    EXPECT_GE(a.duration, absl::Minutes(2));
    EXPECT_LE(a.duration, absl::Hours(8));
  }
  const int monday_night = hourly[3], monday_noon = hourly[10], saturday_noon = hourly[5 * 24 + 10];
  EXPECT_GT(monday_noon, 10 * monday_night);
  EXPECT_GT(monday_noon, 3 * saturday_noon);
  // Ten bursts of 160 (8% of 20,000) within ten minutes each: at least 80
  // of each in one ten-minute slot, on top of the ~45 of a busy regular one.
  EXPECT_GE(std::count_if(ten_minutes.begin(), ten_minutes.end(), [](int n) { return n > 100; }), 8);
  EXPECT_LE(*std::max_element(hourly.begin(), hourly.begin() + 5), 40) << "quiet Monday night";
}

TEST(SyntheticTrace, FollowsTheMix) {
  SyntheticOptions options{.workspaces = 10'000, .mix = {{"a", 3}, {"b", 1}}, .burst_share = 0};
  int a = 0;
  for (const Arrival& w : SyntheticTrace(options)) a += w.class_id == "a";
  EXPECT_NEAR(a, 7500, 300);
}

TEST(TraceCsv, ReadsBackAsTheSameTrace) {
  std::vector<Arrival> trace = SyntheticTrace({.workspaces = 300});
  auto read = ParseTraceCsv(TraceCsv(trace));
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_THAT(*read, SizeIs(trace.size()));
  for (size_t i = 0; i < trace.size(); ++i) {
    EXPECT_EQ((*read)[i].time, trace[i].time);
    EXPECT_EQ((*read)[i].org, trace[i].org);
    EXPECT_EQ((*read)[i].project, trace[i].project);
    EXPECT_EQ((*read)[i].class_id, trace[i].class_id);
    EXPECT_EQ((*read)[i].duration, trace[i].duration);
  }
}

TEST(SyntheticTrace, NothingToMake) {
  EXPECT_TRUE(SyntheticTrace({.workspaces = 0}).empty());
  EXPECT_TRUE(SyntheticTrace({.days = 0}).empty());
}

}  // namespace
}  // namespace wsched::simulate
