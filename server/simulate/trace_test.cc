#include "server/simulate/trace.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::simulate {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

absl::Time Utc(int hour, int minute, int second = 0) {
  return absl::FromCivil(absl::CivilSecond(2026, 3, 2, hour, minute, second), absl::UTCTimeZone());
}

TEST(ParseTraceCsv, TheDocumentedFormat) {
  auto trace = ParseTraceCsv(
      "# a comment\n"
      "time,org,project,class,duration_s\n"
      "2026-03-02T08:00:00Z,acme,web,gpu-1x,3600\n"
      "\n"
      "2026-03-02T09:30:00+01:00,acme,api,,90.5\n");
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_THAT(*trace, SizeIs(2));
  const Arrival& a = (*trace)[0];
  EXPECT_EQ(a.time, Utc(8, 0));
  EXPECT_EQ(a.org, "acme");
  EXPECT_EQ(a.project, "web");
  EXPECT_EQ(a.class_id, "gpu-1x");
  EXPECT_EQ(a.duration, absl::Hours(1));
  EXPECT_EQ(a.line, 3);
  EXPECT_EQ(a.id, "line-3");
  EXPECT_EQ((*trace)[1].time, Utc(8, 30));
  EXPECT_EQ((*trace)[1].class_id, "") << "the catalog's default";
  EXPECT_EQ((*trace)[1].duration, absl::Seconds(90.5));
}

TEST(ParseTraceCsv, AUsageLedgerExportReadsAsItIs) {
  // Columns by name in any order, others ignored, quoted fields, database
  // timestamps, and a placement still running (empty end) that runs to the
  // latest time in the trace.
  auto trace = ParseTraceCsv(
      "workspace_id,org_id,project_id,class_id,pool,started_at,ended_at,end_reason\n"
      "ws-1,o-1,p-1,gpu-1x,gpu-h100,2026-03-02 08:00:00Z,2026-03-02 09:15:00Z,stopped\n"
      "\"ws-2\",o-1,\"p, quoted\",gpu-2x,gpu-h100,2026-03-02T08:30:00Z,,\n"
      "ws-1,o-1,p-1,gpu-1x,gpu-h100,1772442000,1772445600,idle\n");
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_THAT(*trace, SizeIs(3));
  EXPECT_EQ((*trace)[0].id, "ws-1");
  EXPECT_EQ((*trace)[0].duration, absl::Minutes(75));
  EXPECT_EQ((*trace)[1].project, "p, quoted");
  EXPECT_EQ((*trace)[1].duration, Utc(10, 0) - Utc(8, 30)) << "to the latest end (10:00)";
  EXPECT_EQ((*trace)[2].time, Utc(9, 0)) << "Unix seconds";
  EXPECT_EQ((*trace)[2].duration, absl::Hours(1));
}

TEST(ParseTraceCsv, WschedctlUsageListCsvReadsAsItIs) {
  // The header and a row as `wschedctl usage list -o csv` prints them
  // (server/cli/usage_command.cc); the counted_* and duration_micros
  // columns are the part inside the listed range, not the placement.
  auto trace = ParseTraceCsv(
      "workspace_id,org_id,project_id,user_id,class_id,pool,node_name,gpu_count,gpu_models,"
      "cpu_millis,memory_bytes,start_time,end_time,end_reason,counted_start_time,"
      "counted_end_time,duration_micros,gpu_seconds,cpu_millicore_seconds,memory_byte_seconds\n"
      "ws-1,o-1,p-1,u-1,gpu-1x,gpu-h100,n-1,1,NVIDIA H100,11000,85899345920,"
      "2026-03-02T09:00:00+01:00,2026-03-02T09:45:00+01:00,stopped,2026-03-02T09:30:00+01:00,"
      "2026-03-02T09:45:00+01:00,900000000,900,9900000,77309411328000\n");
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_THAT(*trace, SizeIs(1));
  EXPECT_EQ((*trace)[0].id, "ws-1");
  EXPECT_EQ((*trace)[0].org, "o-1");
  EXPECT_EQ((*trace)[0].class_id, "gpu-1x");
  EXPECT_EQ((*trace)[0].time, Utc(8, 0));
  EXPECT_EQ((*trace)[0].duration, absl::Minutes(45));
}

TEST(ParseTraceCsv, DurationTextAndEndColumn) {
  auto trace = ParseTraceCsv("start,duration,end\n"
                             "2026-03-02T08:00:00Z,1h30m,\n"
                             "2026-03-02T08:00:00Z,,2026-03-02T08:10:00Z\n");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ((*trace)[0].duration, absl::Minutes(90));
  EXPECT_EQ((*trace)[1].duration, absl::Minutes(10)) << "no duration: from the end";
}

void ExpectError(const std::string& csv, const std::string& message) {
  auto trace = ParseTraceCsv(csv);
  ASSERT_FALSE(trace.ok()) << csv;
  EXPECT_EQ(trace.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(trace.status().message(), HasSubstr(message)) << csv;
}

TEST(ParseTraceCsv, ErrorsNameTheLineTheColumnAndTheRule) {
  ExpectError("", "the trace is empty");
  ExpectError("org,class,duration_s\n", "line 1: the header has no time column");
  ExpectError("time,org\n", "line 1: the header has neither a duration column");
  ExpectError("time,start,duration_s\n", "line 1, column start: names the same column as \"time\"");
  ExpectError("time,duration_s\n2026-03-02T08:00:00Z,1\nyesterday,1\n",
              "trace line 3, column time: \"yesterday\" is no time (want RFC 3339");
  ExpectError("time,duration_s\n2026-03-02T08:00:00Z,-5\n",
              "trace line 2, column duration_s: \"-5\" is not a number of seconds from 0");
  ExpectError("time,Duration\n2026-03-02T08:00:00Z,soon\n",
              "trace line 2, column Duration: \"soon\" is not a duration");
  ExpectError("time,end\n2026-03-02T08:00:00Z,2026-03-02T07:00:00Z\n",
              "trace line 2, column end: \"2026-03-02T07:00:00Z\" is no time at or after the start");
  ExpectError("time,duration_s\n2026-03-02T08:00:00Z,\n",
              "trace line 2, column duration_s: empty; every row needs a duration");
  ExpectError("time,org,duration_s\n2026-03-02T08:00:00Z,\"acme,1\n",
              "trace line 2: a quoted field is not closed");
}

}  // namespace
}  // namespace wsched::simulate
