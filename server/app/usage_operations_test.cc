// The usage ledger's rules that need no database: what a summary may ask
// for, and the filter a listing's page tokens record (tests/usage_test.cc
// runs them against the ledger).
#include "server/app/usage_operations.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::app {
namespace {

using ::testing::HasSubstr;

UsageSummaryQuery Days(int days, core::UsageBucket bucket) {
  UsageSummaryQuery summary;
  summary.query.start = absl::FromUnixSeconds(1'792'620'000);
  summary.query.end = *summary.query.start + absl::Hours(24) * days;
  summary.bucket = bucket;
  return summary;
}

TEST(UsageSummaryTest, BucketsAreCountedOnTheShortestOfTheirKind) {
  EXPECT_EQ(UsageBucketsAtMost(absl::Hours(24 * 365), core::UsageBucket::kNone), 1);
  EXPECT_EQ(UsageBucketsAtMost(absl::Hours(24), core::UsageBucket::kHour), 26);
  // A DST day has 23 hours: two days can touch three buckets and more.
  EXPECT_EQ(UsageBucketsAtMost(absl::Hours(48), core::UsageBucket::kDay), 4);
  // A month has at least 28 days.
  EXPECT_EQ(UsageBucketsAtMost(absl::Hours(24 * 56), core::UsageBucket::kMonth), 4);
}

TEST(UsageSummaryTest, ASummaryNeedsARangeOfAtMostTheBucketLimit) {
  EXPECT_TRUE(CheckUsageSummaryQuery(Days(1, core::UsageBucket::kHour)).ok());
  EXPECT_TRUE(CheckUsageSummaryQuery(Days(365 * 20, core::UsageBucket::kMonth)).ok());

  absl::Status refused = CheckUsageSummaryQuery(Days(2 * 365, core::UsageBucket::kHour));
  EXPECT_TRUE(absl::IsInvalidArgument(refused)) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("bucket: at most 10000 buckets per summary"));

  UsageSummaryQuery open = Days(1, core::UsageBucket::kDay);
  open.query.end.reset();
  EXPECT_THAT(CheckUsageSummaryQuery(open).message(), HasSubstr("end_time: is required"));
  open.query.start.reset();
  EXPECT_THAT(CheckUsageSummaryQuery(open).message(), HasSubstr("start_time: is required"));

  UsageSummaryQuery backwards = Days(1, core::UsageBucket::kDay);
  std::swap(backwards.query.start, backwards.query.end);
  EXPECT_THAT(CheckUsageSummaryQuery(backwards).message(),
              HasSubstr("end_time: must be after start_time"));
}

TEST(UsageListingTest, ATokenRecordsWhatWasAskedNotWhoAsked) {
  UsageQuery query;
  query.org_id = "o-1";
  query.class_id = "gpu-1x";
  query.start = absl::FromUnixSeconds(1'792'620'000);
  EXPECT_EQ(UsageListingFilter(query), "org=o-1;project=;class=gpu-1x;start=1792620000.0;end=0.0");
  // The scope comes from the caller's token, and a page token is the
  // caller's to reuse with the same filters.
  UsageQuery scoped = query;
  scoped.scope.everything = false;
  scoped.scope.orgs = {"o-1"};
  EXPECT_EQ(UsageListingFilter(scoped), UsageListingFilter(query));
}

}  // namespace
}  // namespace wsched::app
