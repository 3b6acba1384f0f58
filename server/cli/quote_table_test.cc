#include "server/cli/quote_table.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::cli {
namespace {

using ::testing::ElementsAre;

TEST(QuoteTableTest, NowOnANodeWithinTheQuota) {
  v1::PlacementQuote q;
  q.set_class_id("gpu-8x");
  q.set_pool("gpu-big");
  q.set_gpu_model("H100");
  q.set_gpus(8);
  q.set_when(v1::PlacementQuote::WHEN_NOW);
  q.set_node("big-1");
  q.set_credits_per_minute_milli(8250);
  q.set_org_gpus_after(12);
  q.set_org_gpu_quota(16);
  EXPECT_THAT(QuoteRow(q),
              ElementsAre("gpu-8x", "gpu-big", "H100x8", "now", "big-1", "-", "8.250", "12/16"));
  EXPECT_EQ(QuoteRow(q).size(), QuoteHeader().size());
}

TEST(QuoteTableTest, AfterAScaleUpWithItsEstimateAndNoQuota) {
  v1::PlacementQuote q;
  q.set_class_id("mig-small");
  q.set_pool("gpu-mig");
  q.set_gpu_model("H200");
  q.set_when(v1::PlacementQuote::WHEN_AFTER_SCALE_UP);
  q.mutable_estimate()->set_seconds(250);
  q.mutable_estimate()->set_nanos(400000000);
  q.set_credits_per_minute_milli(500);
  q.set_org_gpu_quota(-1);
  EXPECT_THAT(QuoteRow(q), ElementsAre("mig-small", "gpu-mig", "H200 slice", "after_scale_up", "-",
                                       "~4m10s", "0.500", "unlimited"));
}

}  // namespace
}  // namespace wsched::cli
