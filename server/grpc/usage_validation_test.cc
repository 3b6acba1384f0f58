// Validation of the UsageService requests: bounded filters, a range that
// ends after it starts, known groups (each once) and buckets, and a time
// zone that is a name, not an arbitrary string.
#include <google/protobuf/util/time_util.h>

#include <limits>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/node_validation.h"
#include "server/grpc/request_validation.h"

namespace wsched::grpc_api {
namespace {

using google::protobuf::util::TimeUtil;
using ::testing::HasSubstr;

v1::SummarizeUsageRequest ADay() {
  v1::SummarizeUsageRequest request;
  *request.mutable_start_time() = TimeUtil::SecondsToTimestamp(1'792'620'000);
  *request.mutable_end_time() = TimeUtil::SecondsToTimestamp(1'792'710'000);
  request.set_bucket(v1::USAGE_BUCKET_DAY);
  request.set_time_zone("Europe/Berlin");
  request.add_group_by(v1::USAGE_GROUP_BY_ORG);
  request.add_group_by(v1::USAGE_GROUP_BY_PROJECT);
  return request;
}

std::string Refusal(const v1::SummarizeUsageRequest& request) {
  absl::Status status = ValidateRequest(request);
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  return std::string(status.message());
}

TEST(UsageValidation, AnEmptyListingAndADaySummaryPass) {
  EXPECT_TRUE(ValidateRequest(v1::ListUsageRequest()).ok());
  EXPECT_TRUE(ValidateRequest(ADay()).ok());
  v1::SummarizeUsageRequest utc = ADay();
  utc.clear_time_zone();
  EXPECT_TRUE(ValidateRequest(utc).ok()) << "empty = UTC";
}

TEST(UsageValidation, TheRangeIsRequiredForASummaryAndMustEndAfterItStarts) {
  v1::SummarizeUsageRequest request = ADay();
  request.clear_start_time();
  EXPECT_THAT(Refusal(request), HasSubstr("start_time: is required"));
  request = ADay();
  *request.mutable_end_time() = request.start_time();
  EXPECT_THAT(Refusal(request), HasSubstr("end_time: must be after start_time"));
  v1::ListUsageRequest list;
  *list.mutable_start_time() = TimeUtil::SecondsToTimestamp(100);
  *list.mutable_end_time() = TimeUtil::SecondsToTimestamp(50);
  EXPECT_THAT(std::string(ValidateRequest(list).message()), HasSubstr("end_time"));
  list.clear_end_time();
  list.mutable_start_time()->set_nanos(-1);
  EXPECT_THAT(std::string(ValidateRequest(list).message()), HasSubstr("start_time"));
  *list.mutable_start_time() = TimeUtil::SecondsToTimestamp(-86400);
  EXPECT_THAT(std::string(ValidateRequest(list).message()),
              HasSubstr("start_time: must be a time between 1970-01-01 and 9999-12-31"));
}

TEST(UsageValidation, GroupsAreKnownAndNamedOnce) {
  v1::SummarizeUsageRequest request = ADay();
  request.add_group_by(v1::USAGE_GROUP_BY_ORG);
  EXPECT_THAT(Refusal(request), HasSubstr("group_by[2]: names a group twice"));
  request = ADay();
  request.add_group_by(v1::USAGE_GROUP_BY_UNSPECIFIED);
  EXPECT_THAT(Refusal(request), HasSubstr("group_by[2]"));
  request = ADay();
  request.set_bucket(static_cast<v1::UsageBucket>(42));
  EXPECT_THAT(Refusal(request), HasSubstr("bucket"));
}

TEST(UsageValidation, TheTimeZoneIsANameAndTheIdsAreBounded) {
  v1::SummarizeUsageRequest request = ADay();
  request.set_time_zone("Europe/Berlin; DROP TABLE usage_records");
  EXPECT_THAT(Refusal(request), HasSubstr("time_zone: must be an IANA time zone name"));
  request.set_time_zone(std::string(65, 'A'));
  EXPECT_THAT(Refusal(request), HasSubstr("time_zone"));
  // Abbreviations read as fixed offsets, an hour off in summer: refused.
  for (const char* abbreviation : {"CET", "EST"}) {
    request.set_time_zone(abbreviation);
    EXPECT_THAT(Refusal(request), HasSubstr("time_zone: \"" + std::string(abbreviation) +
                                            "\" is an abbreviation"));
  }
  request = ADay();
  request.set_org_id("has space");
  EXPECT_THAT(Refusal(request), HasSubstr("org_id"));
  request = ADay();
  request.set_class_id("Not_A_Label");
  EXPECT_THAT(Refusal(request), HasSubstr("class_id"));
}

// Every RPC that takes a Timestamp or a Duration refuses what protobuf
// cannot hold, naming the field, before anything reaches the database.
TEST(TimeValidation, TheAuditRangeMustBeTimesThatExistAndEndAfterItStarts) {
  v1::ListAuditRecordsRequest request;
  request.mutable_start_time()->set_seconds(std::numeric_limits<int64_t>::min());
  absl::Status status = ValidateRequest(request);
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("start_time: must be a time between 0001-01-01 and 9999-12-31"));

  request.mutable_start_time()->set_seconds(1'792'620'000);
  request.mutable_end_time()->set_seconds(TimeUtil::kTimestampMaxSeconds + 1);
  EXPECT_THAT(ValidateRequest(request).message(), HasSubstr("end_time: must be a time"));
  request.mutable_end_time()->set_seconds(1'792'620'000);
  EXPECT_THAT(ValidateRequest(request).message(), HasSubstr("end_time: must be after start_time"));
  request.mutable_end_time()->set_seconds(1'792'620'001);
  EXPECT_TRUE(ValidateRequest(request).ok());
  request.mutable_start_time()->set_nanos(-1);
  EXPECT_THAT(ValidateRequest(request).message(), HasSubstr("start_time: must be a time"));
}

TEST(TimeValidation, AClassIdlePolicyTakesOnlyDurationsProtobufCanHold) {
  v1::UpdateClassRequest request;
  v1::WorkspaceClass& cls = *request.mutable_class_();
  cls.set_id("gpu-1x");
  cls.mutable_idle()->mutable_idle_for()->set_seconds(TimeUtil::kDurationMaxSeconds + 1);
  EXPECT_THAT(ValidateRequest(request).message(),
              HasSubstr("class.idle.idle_for: must be a duration between 0 and 315576000000s"));
  cls.mutable_idle()->mutable_idle_for()->set_seconds(-60);
  EXPECT_THAT(ValidateRequest(request).message(), HasSubstr("class.idle.idle_for: must be a duration"));
  cls.mutable_idle()->mutable_idle_for()->set_seconds(1800);
  cls.mutable_idle()->mutable_warn_before()->set_nanos(-5);
  EXPECT_THAT(ValidateRequest(request).message(), HasSubstr("class.idle.warn_before: must be a duration"));
  cls.mutable_idle()->clear_warn_before();
  // An action the API does not have (the fuzzer's find) is the caller's field too.
  cls.mutable_idle()->set_action(static_cast<v1::IdlePolicy::Action>(104));
  EXPECT_THAT(ValidateRequest(request).message(), HasSubstr("class.idle.action"));
}

TEST(TimeValidation, ADriverInstallTakesOnlyADurationProtobufCanHoldUpToAWeek) {
  v1::ReportDriverInstallRequest request;
  request.set_node_name("n-1");
  request.set_kernel_version("5.15.0-91-generic");
  request.set_outcome(v1::DRIVER_INSTALL_OUTCOME_SUCCEEDED);
  request.mutable_duration()->set_seconds(420);
  EXPECT_TRUE(ValidateRequest(request).ok());
  request.mutable_duration()->set_nanos(1'000'000'000);
  EXPECT_THAT(ValidateRequest(request).message(),
              HasSubstr("duration: must be a duration between 0 and 315576000000s"));
  request.mutable_duration()->set_nanos(0);
  request.mutable_duration()->set_seconds(7 * 24 * 3600 + 1);
  EXPECT_THAT(ValidateRequest(request).message(),
              HasSubstr("duration: must be between 0 and 7 days"));
}

TEST(TimeValidation, ANodesEchoedGpuTimesMustBeTimesProtobufCanHold) {
  v1::RegisterNodeRequest request;
  for (int i = 0; i < 2; ++i) request.mutable_node()->add_gpus();
  request.mutable_node()->mutable_gpus(1)->mutable_unhealthy_since()->set_seconds(
      std::numeric_limits<int64_t>::min());
  EXPECT_THAT(ValidateRequest(request).message(),
              HasSubstr("node.gpus[1].unhealthy_since: must be a time between 0001-01-01"));
  request.mutable_node()->mutable_gpus(1)->clear_unhealthy_since();
  request.mutable_node()->mutable_gpus(0)->mutable_reported_healthy_since()->set_nanos(-1);
  EXPECT_THAT(ValidateRequest(request).message(),
              HasSubstr("node.gpus[0].reported_healthy_since: must be a time"));
  request.mutable_node()->mutable_gpus(0)->clear_reported_healthy_since();
  // Past the GPU limit too: the conversion reads every GPU before the limit
  // is told.
  while (request.node().gpus_size() <= core::kMaxGpusPerNode) request.mutable_node()->add_gpus();
  const int last = request.node().gpus_size() - 1;
  request.mutable_node()->mutable_gpus(last)->mutable_unhealthy_since()->set_seconds(
      TimeUtil::kTimestampMaxSeconds + 1);
  EXPECT_THAT(ValidateRequest(request).message(),
              HasSubstr(absl::StrCat("node.gpus[", last, "].unhealthy_since: must be a time")));
}

}  // namespace
}  // namespace wsched::grpc_api
