#include "server/core/validation.h"

#include "gtest/gtest.h"

namespace wsched::core {
namespace {

TEST(Validation, DnsLabel) {
  EXPECT_TRUE(IsDnsLabel("gpu-a100-1"));
  EXPECT_FALSE(IsDnsLabel(""));
  EXPECT_FALSE(IsDnsLabel("-a"));
  EXPECT_FALSE(IsDnsLabel("A"));
  EXPECT_FALSE(IsDnsLabel("a_b"));
  EXPECT_FALSE(IsDnsLabel(std::string(64, 'a')));
  EXPECT_TRUE(IsDnsSubdomain("node-1.pool.example"));
  EXPECT_FALSE(IsDnsSubdomain("node..x"));
}

TEST(Validation, PciAddress) {
  EXPECT_TRUE(IsPciAddress("0000:3b:00.0"));
  EXPECT_FALSE(IsPciAddress("3b:00.0"));
  EXPECT_FALSE(IsPciAddress("0000:3B:00.0"));
  EXPECT_FALSE(IsPciAddress("0000:3b:00.8"));
  EXPECT_FALSE(IsPciAddress("not-a-pci-addr"));
}

TEST(Validation, ErrorListKeepsEveryErrorWithItsPath) {
  ErrorList errors;
  errors.Add("classes[0].id", "must be a DNS label");
  errors.Add("pools.gpu.max_size", "must be >= min_size");
  EXPECT_EQ(errors.Joined(),
            "classes[0].id: must be a DNS label\npools.gpu.max_size: must be >= min_size");
}

}  // namespace
}  // namespace wsched::core
