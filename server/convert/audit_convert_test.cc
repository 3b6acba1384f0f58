#include "server/convert/audit_convert.h"

#include <google/protobuf/util/time_util.h>

#include "gtest/gtest.h"
#include "server/convert/time_convert.h"

namespace wsched::convert {
namespace {

using google::protobuf::util::TimeUtil;

TEST(AuditConvertTest, ARecordKeepsEveryFieldAndItsMicroseconds) {
  core::AuditRecord record;
  record.id = 42;
  record.at = absl::FromUnixMicros(1'800'000'000'000'001);
  record.principal = "alice";
  record.credential = "token sha256:0123456789ab";
  record.method = "/wsched.v1.InventoryService/DrainNode";
  record.object = "node/n-1";
  record.fields = {{"node_name", "n-1"}, {"dry_run", "true"}};
  record.code = "FAILED_PRECONDITION";
  record.message = "node n-1 is removed";

  const v1::AuditRecord out = ToProto(record);
  EXPECT_EQ(out.id(), 42);
  EXPECT_EQ(TimeUtil::TimestampToMicroseconds(out.time()), 1'800'000'000'000'001);
  EXPECT_EQ(out.principal(), "alice");
  EXPECT_EQ(out.credential(), "token sha256:0123456789ab");
  EXPECT_EQ(out.method(), "/wsched.v1.InventoryService/DrainNode");
  EXPECT_EQ(out.object(), "node/n-1");
  ASSERT_EQ(out.fields().size(), 2);
  EXPECT_EQ(out.fields().at("node_name"), "n-1");
  EXPECT_EQ(out.fields().at("dry_run"), "true");
  EXPECT_EQ(out.code(), "FAILED_PRECONDITION");
  EXPECT_EQ(out.message(), "node n-1 is removed");
}

TEST(TimeConvertTest, ARequestsTimeBoundKeepsItsNanoseconds) {
  google::protobuf::Timestamp timestamp;
  timestamp.set_seconds(1'792'620'000);
  timestamp.set_nanos(123'456'789);
  EXPECT_EQ(TimeFromProto(timestamp),
            absl::FromUnixSeconds(1'792'620'000) + absl::Nanoseconds(123'456'789));
  // Before 1970 too (the audit trail's range reaches back to year 1).
  timestamp.set_seconds(-1);
  timestamp.set_nanos(500'000'000);
  EXPECT_EQ(TimeFromProto(timestamp), absl::FromUnixMillis(-500));
}

}  // namespace
}  // namespace wsched::convert
