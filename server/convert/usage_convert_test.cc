#include "server/convert/usage_convert.h"

#include <google/protobuf/util/time_util.h>

#include "gtest/gtest.h"

namespace wsched::convert {
namespace {

using google::protobuf::util::TimeUtil;

TEST(UsageConvertTest, ARecordKeepsEveryFieldAndItsMicroseconds) {
  core::UsageRecord record;
  record.workspace_id = "ws-1";
  record.org_id = "o-1";
  record.project_id = "p-1";
  record.user_id = "u-1";
  record.class_id = "gpu-2x";
  record.pool = "gpu-h100";
  record.node_name = "n-1";
  record.gpu_count = 2;
  record.gpu_models = {"H100", "H100"};
  record.cpu_millis = 8000;
  record.memory_bytes = int64_t{1} << 36;
  record.started_at = absl::FromUnixMicros(1'800'000'000'000'001);
  record.ended_at = absl::FromUnixMicros(1'800'000'360'000'002);
  record.end_reason = core::EndReason::kIdle;
  record.counted_from = record.started_at;
  record.counted_until = *record.ended_at;
  record.figures = {360'000'001, "720.000002", "2880000.008000", "24739011.090000"};
  const v1::UsageRecord out = ToProto(record);
  EXPECT_EQ(out.workspace_id(), "ws-1");
  EXPECT_EQ(out.gpu_models_size(), 2);
  EXPECT_EQ(TimeUtil::TimestampToMicroseconds(out.start_time()), 1'800'000'000'000'001);
  EXPECT_EQ(TimeUtil::TimestampToMicroseconds(out.end_time()), 1'800'000'360'000'002);
  EXPECT_EQ(out.end_reason(), v1::USAGE_END_REASON_IDLE);
  EXPECT_EQ(out.figures().duration_micros(), 360'000'001);
  EXPECT_EQ(out.figures().gpu_seconds(), "720.000002");
  EXPECT_EQ(out.memory_bytes(), int64_t{1} << 36);
}

TEST(UsageConvertTest, AnOpenPlacementHasNoEnd) {
  core::UsageRecord open;
  open.started_at = absl::FromUnixSeconds(1'800'000'000);
  const v1::UsageRecord out = ToProto(open);
  EXPECT_FALSE(out.has_end_time());
  EXPECT_EQ(out.end_reason(), v1::USAGE_END_REASON_UNSPECIFIED);
}

TEST(UsageConvertTest, EveryReasonGroupAndBucketMaps) {
  EXPECT_EQ(ToProto(core::EndReason::kStopped), v1::USAGE_END_REASON_STOPPED);
  EXPECT_EQ(ToProto(core::EndReason::kLost), v1::USAGE_END_REASON_LOST);
  EXPECT_EQ(ToProto(core::EndReason::kNodeRemoved), v1::USAGE_END_REASON_NODE_REMOVED);
  EXPECT_EQ(FromProto(v1::USAGE_GROUP_BY_ORG), core::UsageGroup::kOrg);
  EXPECT_EQ(FromProto(v1::USAGE_GROUP_BY_PROJECT), core::UsageGroup::kProject);
  EXPECT_EQ(FromProto(v1::USAGE_GROUP_BY_CLASS), core::UsageGroup::kClass);
  EXPECT_EQ(FromProto(v1::USAGE_GROUP_BY_UNSPECIFIED), std::nullopt);
  EXPECT_EQ(FromProto(v1::USAGE_BUCKET_UNSPECIFIED), core::UsageBucket::kNone);
  EXPECT_EQ(FromProto(v1::USAGE_BUCKET_DAY), core::UsageBucket::kDay);
  EXPECT_EQ(FromProto(static_cast<v1::UsageBucket>(99)), std::nullopt);
}

}  // namespace
}  // namespace wsched::convert
