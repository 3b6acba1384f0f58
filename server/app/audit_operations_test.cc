// The audit listing's rules that need no database: its range, and the
// filter its page tokens record (tests/audit_test.cc lists real records).
#include "server/app/audit_operations.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/app/listing_filter.h"

namespace wsched::app {
namespace {

using ::testing::HasSubstr;

TEST(AuditQueryTest, TheRangeMustEndAfterItStarts) {
  AuditQuery query;
  EXPECT_TRUE(CheckAuditQuery(query).ok()) << "no range: everything";
  query.since = absl::FromUnixSeconds(1'792'620'000);
  EXPECT_TRUE(CheckAuditQuery(query).ok()) << "open-ended";
  query.before = query.since;
  absl::Status refused = CheckAuditQuery(query);
  EXPECT_TRUE(absl::IsInvalidArgument(refused)) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("end_time: must be after start_time"));
  query.before = *query.since + absl::Nanoseconds(1);
  EXPECT_TRUE(CheckAuditQuery(query).ok());
}

TEST(AuditQueryTest, ATokenRecordsTheFilterAsTheRequestWroteIt) {
  AuditQuery query;
  query.principal = "alice";
  query.object = "node/";
  EXPECT_EQ(AuditListingFilter(query), "principal=alice;object=node/;start=0.0;end=0.0");
  query.since = absl::FromUnixSeconds(1'792'620'000) + absl::Nanoseconds(5);
  query.before = absl::FromUnixSeconds(1'792'710'000);
  EXPECT_EQ(AuditListingFilter(query),
            "principal=alice;object=node/;start=1792620000.5;end=1792710000.0");
}

TEST(ListingFilterTest, ATimeBoundIsATimestampsSecondsAndNanos) {
  EXPECT_EQ(TimeBoundText(std::nullopt), "0.0");
  EXPECT_EQ(TimeBoundText(absl::UnixEpoch()), "0.0");
  EXPECT_EQ(TimeBoundText(absl::FromUnixSeconds(7) + absl::Nanoseconds(123'456'789)),
            "7.123456789");
  // Before 1970 the seconds floor and the nanoseconds count forward, as in
  // google.protobuf.Timestamp.
  EXPECT_EQ(TimeBoundText(absl::FromUnixMillis(-500)), "-1.500000000");
}

}  // namespace
}  // namespace wsched::app
