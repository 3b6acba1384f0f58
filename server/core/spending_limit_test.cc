#include "server/core/spending_limit.h"

#include "absl/time/civil_time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/error_reason.h"

namespace wsched::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

absl::Time At(absl::string_view rfc3339) {
  absl::Time t;
  std::string error;
  EXPECT_TRUE(absl::ParseTime(absl::RFC3339_full, rfc3339, &t, &error)) << error;
  return t;
}

SpendingPeriod Month(std::string zone) {
  SpendingPeriod period;
  period.time_zone = std::move(zone);
  return period;
}

SpendingPeriod Rolling(absl::Duration length) {
  SpendingPeriod period;
  period.kind = SpendingPeriod::Kind::kRolling;
  period.rolling = length;
  return period;
}

SpendingLimit Limit(double gpu_hours, SpendingPeriod period) {
  SpendingLimit limit;
  limit.gpu_hours = gpu_hours;
  limit.period = std::move(period);
  return limit;
}

TEST(PeriodAt, UtcMonthRunsFromTheFirstToTheNextFirst) {
  auto bounds = PeriodAt(Month("UTC"), At("2026-02-14T12:00:00Z"));
  ASSERT_TRUE(bounds.ok()) << bounds.status();
  EXPECT_EQ(bounds->start, At("2026-02-01T00:00:00Z"));
  EXPECT_EQ(bounds->end, At("2026-03-01T00:00:00Z"));
}

TEST(PeriodAt, LocalMidnightDecidesTheMonth) {
  // 23:30 UTC on October 31st is already November 1st in Berlin (UTC+1).
  auto bounds = PeriodAt(Month("Europe/Berlin"), At("2026-10-31T23:30:00Z"));
  ASSERT_TRUE(bounds.ok()) << bounds.status();
  EXPECT_EQ(bounds->start, At("2026-11-01T00:00:00+01:00"));
  EXPECT_EQ(bounds->end, At("2026-12-01T00:00:00+01:00"));
}

TEST(PeriodAt, MonthWithTheSummerTimeChangeIsAnHourShorterOrLonger) {
  // Berlin enters summer time on 2026-03-29: March begins at +01:00 and
  // ends at +02:00, 31 days less an hour.
  auto march = PeriodAt(Month("Europe/Berlin"), At("2026-03-29T12:00:00+02:00"));
  ASSERT_TRUE(march.ok()) << march.status();
  EXPECT_EQ(march->start, At("2026-03-01T00:00:00+01:00"));
  EXPECT_EQ(march->end, At("2026-04-01T00:00:00+02:00"));
  EXPECT_EQ(march->end - march->start, absl::Hours(31 * 24 - 1));
  // And leaves it on 2026-10-25: October is an hour longer.
  auto october = PeriodAt(Month("Europe/Berlin"), At("2026-10-25T02:30:00+01:00"));
  ASSERT_TRUE(october.ok()) << october.status();
  EXPECT_EQ(october->end - october->start, absl::Hours(31 * 24 + 1));
}

TEST(PeriodAt, TheInstantAMonthEndsBelongsToTheNextMonth) {
  const absl::Time april_first = At("2026-04-01T00:00:00+02:00");
  auto march = PeriodAt(Month("Europe/Berlin"), april_first - absl::Microseconds(1));
  auto april = PeriodAt(Month("Europe/Berlin"), april_first);
  ASSERT_TRUE(march.ok() && april.ok());
  EXPECT_EQ(march->end, april_first);
  EXPECT_EQ(april->start, april_first);
}

TEST(PeriodAt, RollingWindowEndsNowAndResetsOneLengthLater) {
  const absl::Time now = At("2026-05-05T10:00:00Z");
  auto bounds = PeriodAt(Rolling(absl::Hours(24)), now);
  ASSERT_TRUE(bounds.ok()) << bounds.status();
  EXPECT_EQ(bounds->start, now - absl::Hours(24));
  EXPECT_EQ(bounds->end, now + absl::Hours(24));
}

TEST(PeriodAt, UnknownZoneIsAnError) {
  EXPECT_FALSE(PeriodAt(Month("Mars/Olympus_Mons"), At("2026-05-05T10:00:00Z")).ok());
}

TEST(SpendingLimitProblems, AValidLimitHasNone) {
  SpendingLimit limit = Limit(100, Month("Europe/Berlin"));
  limit.warn_at_percent = {80, 100};
  EXPECT_THAT(SpendingLimitProblems(limit, "settings.spending_limit"), IsEmpty());
  EXPECT_THAT(SpendingLimitProblems(Limit(0.001, Rolling(absl::Hours(1))), "l"), IsEmpty());
}

TEST(SpendingLimitProblems, NamesEachBadField) {
  SpendingLimit limit = Limit(-1, Month("CET"));
  limit.warn_at_percent = {80, 80, 2000};
  limit.action = SpendingAction::kBlockAndStop;
  EXPECT_THAT(
      SpendingLimitProblems(limit, "settings.spending_limit"),
      ElementsAre(
          HasSubstr("settings.spending_limit.gpu_hours: must be more than 0"),
          HasSubstr("settings.spending_limit.period.calendar_month.time_zone: \"CET\" is an "
                    "abbreviation"),
          HasSubstr("settings.spending_limit.warn_at_percent[1]: must be more than"),
          HasSubstr("settings.spending_limit.warn_at_percent[2]: must be 1 to 1000")));
}

TEST(SpendingLimitProblems, StopWarningOnlyWithBlockAndStopAndInRange) {
  SpendingLimit limit = Limit(1, Month("UTC"));
  limit.action = SpendingAction::kBlockAndStop;
  EXPECT_THAT(SpendingLimitProblems(limit, "l"), IsEmpty());
  EXPECT_EQ(StopWarningOf(limit), kDefaultStopWarning);
  for (absl::Duration fine : {absl::ZeroDuration(), absl::Seconds(90), absl::Hours(24)}) {
    limit.stop_warning = fine;
    EXPECT_THAT(SpendingLimitProblems(limit, "l"), IsEmpty()) << fine;
    EXPECT_EQ(StopWarningOf(limit), fine);
  }
  for (absl::Duration bad : {absl::Seconds(-1), absl::Milliseconds(1500), absl::Hours(25)}) {
    limit.stop_warning = bad;
    EXPECT_THAT(SpendingLimitProblems(limit, "l"),
                ElementsAre("l.stop_warning: must be whole seconds from 0 to 24h"))
        << bad;
  }
  limit.action = SpendingAction::kBlockNew;
  limit.stop_warning = absl::Minutes(1);
  EXPECT_THAT(SpendingLimitProblems(limit, "l"),
              ElementsAre(HasSubstr("l.stop_warning: only with action block_and_stop")));
}

TEST(SpendingLimitProblems, UnknownZoneAndOddRollingWindows) {
  EXPECT_THAT(SpendingLimitProblems(Limit(1, Month("Mars/Olympus_Mons")), "l"),
              ElementsAre("l.period.calendar_month.time_zone: \"Mars/Olympus_Mons\" is no known "
                          "time zone"));
  for (absl::Duration length :
       {absl::Seconds(59), absl::Milliseconds(90500), absl::Hours(24 * 367)}) {
    EXPECT_THAT(SpendingLimitProblems(Limit(1, Rolling(length)), "l"),
                ElementsAre(HasSubstr("l.period.rolling: must be whole seconds")))
        << length;
  }
  EXPECT_THAT(SpendingLimitProblems(Limit(1e-13, Rolling(absl::Hours(1))), "l"),
              ElementsAre(HasSubstr("l.gpu_hours: must be at least one GPU-microsecond")));
}

TEST(ProjectLimitOutsideOrg, FitsWithinTheOrgsLimitOfTheSamePeriod) {
  const SpendingLimit org = Limit(100, Month("Europe/Berlin"));
  EXPECT_THAT(ProjectLimitOutsideOrg(Limit(100, Month("Europe/Berlin")), org, "p"), IsEmpty());
  EXPECT_THAT(ProjectLimitOutsideOrg(Limit(500, Month("UTC")), std::nullopt, "p"), IsEmpty());
  EXPECT_THAT(ProjectLimitOutsideOrg(Limit(100.5, Month("UTC")), org, "settings.spending_limit"),
              ElementsAre("settings.spending_limit.period: must be the org's period (calendar "
                          "months in Europe/Berlin), not calendar months in UTC",
                          "settings.spending_limit.gpu_hours: 100.5 is more than the org's limit "
                          "of 100"));
}

TEST(AdmitsWithinBudget, SpentPlusCommittedMustStayWithinTheLimit) {
  EXPECT_TRUE(AdmitsWithinBudget({.limit = 100, .spent = 40, .committed = 60}));
  EXPECT_FALSE(AdmitsWithinBudget({.limit = 100, .spent = 41, .committed = 60}));
  EXPECT_FALSE(AdmitsWithinBudget({.limit = 100, .spent = 101, .committed = 1}));
}

TEST(AdmitsWithinBudget, AZeroCommitmentNeedsSomethingLeft) {
  EXPECT_TRUE(AdmitsWithinBudget({.limit = 100, .spent = 99, .committed = 0}));
  EXPECT_FALSE(AdmitsWithinBudget({.limit = 100, .spent = 100, .committed = 0}));
}

TEST(AdmitsWithinBudget, HugeFiguresSaturateInsteadOfWrapping) {
  const int64_t most = std::numeric_limits<int64_t>::max();
  EXPECT_FALSE(AdmitsWithinBudget({.limit = most - 1, .spent = most - 10, .committed = 100}));
}

TEST(CommittedGpuMicros, GpusTimesTheIntervalASliceItsShareRoundedUp) {
  EXPECT_EQ(CommittedGpuMicros(14, absl::Seconds(60)), 120 * kGpuMicrosPerGpuSecond);
  EXPECT_EQ(CommittedGpuMicros(3, absl::Microseconds(7)), 3);
  EXPECT_EQ(CommittedGpuMicros(1, absl::Microseconds(1)), 1);
  EXPECT_EQ(CommittedGpuMicros(0, absl::Seconds(60)), 0);
  EXPECT_EQ(CommittedGpuMicros(7, absl::ZeroDuration()), 0);
}

TEST(CrossedPercents, ThoseReachedExactly) {
  EXPECT_THAT(CrossedPercents({50, 80, 100}, 80, 100), ElementsAre(50, 80));
  EXPECT_THAT(CrossedPercents({50, 80, 100}, 79, 100), ElementsAre(50));
  EXPECT_THAT(CrossedPercents({80, 100, 150}, 150, 100), ElementsAre(80, 100, 150));
  EXPECT_THAT(CrossedPercents({80}, 1, 0), IsEmpty());
}

TEST(LimitReachedAt, AtTheCurrentRateWithinThePeriod) {
  const absl::Time now = At("2026-05-05T10:00:00Z");
  const absl::Time end = At("2026-06-01T00:00:00Z");
  // 100 left at 50 an hour: two hours from now.
  EXPECT_EQ(LimitReachedAt(900, 1000, 50, now, end), now + absl::Hours(2));
  EXPECT_EQ(LimitReachedAt(1000, 1000, 0, now, end), now);  // Already reached.
  EXPECT_EQ(LimitReachedAt(900, 1000, 0, now, end), std::nullopt);
  EXPECT_EQ(LimitReachedAt(0, 1000, 1, now, end), std::nullopt);  // Not this period.
}

TEST(GpuSecondsFigure, SixFractionDigits) {
  EXPECT_EQ(GpuSecondsFigure(7500000), "7.500000");
  EXPECT_EQ(GpuSecondsFigure(0), "0.000000");
  EXPECT_EQ(GpuSecondsFigure(-1), "-0.000001");
  EXPECT_EQ(GpuSecondsFigure(3600 * kGpuMicrosPerGpuSecond), "3600.000000");
}

TEST(BudgetExhaustedError, CarriesTheFiguresTheResetAndTheLimitsName) {
  const PeriodBounds period{At("2026-11-01T00:00:00+01:00"), At("2026-12-01T00:00:00+01:00")};
  const absl::Time now = At("2026-11-30T23:00:00+01:00");
  absl::Status status = BudgetExhaustedError(
      "project", "p-1", "gpu-1", {.limit = 5000000, .spent = 4000000, .committed = 60000000},
      period, now);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(), HasSubstr("project p-1 has spent 4.000000 of its spending limit "
                                          "of 5.000000 GPU-seconds"));
  auto details = DetailsOf(status);
  ASSERT_TRUE(details.has_value());
  EXPECT_EQ(details->reason, ErrorReason::kBudgetExhausted);
  EXPECT_EQ(details->retry_delay, absl::Hours(1));
  ASSERT_EQ(details->quota_violations.size(), 1u);
  EXPECT_EQ(details->quota_violations[0].subject, "project:p-1/spending_limit");
  EXPECT_EQ(details->metadata.at("resets_at"), "2026-11-30T23:00:00Z");
  EXPECT_EQ(details->metadata.at("project"), "p-1");
  EXPECT_EQ(details->metadata.at("committed_gpu_seconds"), "60.000000");
}

}  // namespace
}  // namespace wsched::core
