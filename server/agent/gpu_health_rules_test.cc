#include "server/agent/gpu_health_rules.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::agent {
namespace {

using ::testing::HasSubstr;

TEST(XidRulesTest, GpuFaultsAreUnhealthyApplicationErrorsAreNot) {
  for (int xid : {48, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120}) {
    const XidRule* rule = FindXidRule(xid);
    ASSERT_NE(rule, nullptr) << xid;
    EXPECT_TRUE(rule->unhealthy) << xid;
  }
  for (int xid : {13, 31, 43, 45}) {
    const XidRule* rule = FindXidRule(xid);
    ASSERT_NE(rule, nullptr) << xid;
    EXPECT_FALSE(rule->unhealthy) << xid;
  }
  EXPECT_EQ(FindXidRule(999), nullptr);
}

TEST(XidRulesTest, EachXidHasOneRule) {
  for (const XidRule& rule : XidRules()) EXPECT_EQ(FindXidRule(rule.xid), &rule);
}

GpuUsage Line() {
  return {.uuid = "GPU-a", .pci_address = "0000:3b:00.0", .name = "H100",
          .utilization_percent = 0, .memory_used_bytes = 0, .memory_total_bytes = 1,
          .ecc_uncorrected_volatile = 0};
}

TEST(UnhealthyFromNvidiaSmiTest, HealthyLineHasNoProblem) {
  EXPECT_EQ(UnhealthyFromNvidiaSmi(Line()), std::nullopt);
  GpuUsage unsupported = Line();
  unsupported.ecc_uncorrected_volatile = -1;  // [N/A]: no ECC on this board.
  EXPECT_EQ(UnhealthyFromNvidiaSmi(unsupported), std::nullopt);
}

TEST(UnhealthyFromNvidiaSmiTest, EachSignalNamesItself) {
  GpuUsage ecc = Line();
  ecc.ecc_uncorrected_volatile = 3;
  EXPECT_THAT(UnhealthyFromNvidiaSmi(ecc).value(), HasSubstr("3 uncorrected ECC"));
  GpuUsage retired = Line();
  retired.retired_pages_pending = true;
  EXPECT_THAT(UnhealthyFromNvidiaSmi(retired).value(), HasSubstr("retired pages pending"));
  GpuUsage remap = Line();
  remap.remapped_rows_pending = true;
  EXPECT_THAT(UnhealthyFromNvidiaSmi(remap).value(), HasSubstr("remapped rows pending"));
  GpuUsage failed = Line();
  failed.remapped_rows_failure = true;
  EXPECT_THAT(UnhealthyFromNvidiaSmi(failed).value(), HasSubstr("row remapping failed"));
  GpuUsage lost = Line();
  lost.error_state = "GPU is lost";
  EXPECT_EQ(UnhealthyFromNvidiaSmi(lost).value(), "nvidia-smi: GPU is lost");
}

core::NodeInfo TwoGpus() {
  core::NodeInfo node;
  node.gpus.push_back({.index = 0, .uuid = "GPU-a", .pci_address = "0000:3b:00.0"});
  node.gpus.push_back({.index = 1, .uuid = "GPU-b", .pci_address = "0000:5d:00.0"});
  return node;
}

TEST(JudgeGpusTest, CombinesNvidiaSmiAndXids) {
  GpuUsage a = Line();
  a.ecc_uncorrected_volatile = 1;
  std::vector<GpuUsage> sample = {a};  // GPU-b absent: bound to vfio-pci, say.
  auto verdicts = JudgeGpus(TwoGpus(), &sample, {{"0000:3b:00.0", "XID 48: double-bit ECC error"}});
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_FALSE(verdicts["GPU-a"].healthy);
  EXPECT_THAT(verdicts["GPU-a"].reason, HasSubstr("1 uncorrected ECC"));
  EXPECT_THAT(verdicts["GPU-a"].reason, HasSubstr("XID 48"));
  EXPECT_TRUE(verdicts["GPU-b"].healthy);
}

TEST(JudgeGpusTest, WithoutASampleOnlyXidsJudge) {
  auto verdicts = JudgeGpus(TwoGpus(), nullptr, {{"0000:5d:00.0", "XID 79: GPU has fallen off the bus"}});
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_EQ(verdicts["GPU-b"], (GpuVerdict{false, "XID 79: GPU has fallen off the bus"}));
}

}  // namespace
}  // namespace wsched::agent
