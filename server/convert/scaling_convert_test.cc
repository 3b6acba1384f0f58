#include "server/convert/scaling_convert.h"

#include <google/protobuf/util/time_util.h>

#include "gtest/gtest.h"

namespace wsched::convert {
namespace {

using scaling::ScalingReason;

TEST(ScalingConvertTest, ASignalKeepsEveryField) {
  scaling::PoolSignal signal;
  signal.pool = "gpu-a100";
  signal.generation = 7;
  signal.current_size = 3;
  signal.target_size = 2;
  signal.nodes_to_remove = {"node-c2"};
  signal.lost_nodes = {"node-c3"};
  signal.reasons = {ScalingReason::kIdleTimeout, ScalingReason::kProvisioningFailed};
  signal.detail = "why";
  signal.backoff_until = absl::FromUnixMicros(1'764'600'600'000'001);

  v1::PoolSignal out = ToProto(signal);
  EXPECT_EQ(out.pool(), "gpu-a100");
  EXPECT_EQ(out.generation(), 7);
  EXPECT_EQ(out.current_size(), 3);
  EXPECT_EQ(out.target_size(), 2);
  ASSERT_EQ(out.nodes_to_remove_size(), 1);
  EXPECT_EQ(out.nodes_to_remove(0), "node-c2");
  ASSERT_EQ(out.lost_nodes_size(), 1);
  EXPECT_EQ(out.lost_nodes(0), "node-c3");
  ASSERT_EQ(out.reasons_size(), 2);
  EXPECT_EQ(out.reasons(0), v1::SCALING_REASON_IDLE_TIMEOUT);
  EXPECT_EQ(out.reasons(1), v1::SCALING_REASON_PROVISIONING_FAILED);
  EXPECT_EQ(out.detail(), "why");
  EXPECT_EQ(google::protobuf::util::TimeUtil::TimestampToMicroseconds(out.backoff_until()),
            1'764'600'600'000'001);
  EXPECT_FALSE(ToProto(scaling::PoolSignal{}).has_backoff_until());
}

TEST(ScalingConvertTest, EveryReasonHasItsOwnValue) {
  EXPECT_EQ(ToProto(ScalingReason::kPendingWorkspaces), v1::SCALING_REASON_PENDING_WORKSPACES);
  EXPECT_EQ(ToProto(ScalingReason::kWarmBuffer), v1::SCALING_REASON_WARM_BUFFER);
  EXPECT_EQ(ToProto(ScalingReason::kMinSize), v1::SCALING_REASON_MIN_SIZE);
  EXPECT_EQ(ToProto(ScalingReason::kMaxSize), v1::SCALING_REASON_MAX_SIZE);
  EXPECT_EQ(ToProto(ScalingReason::kSteady), v1::SCALING_REASON_STEADY);
}

}  // namespace
}  // namespace wsched::convert
