#include "server/core/driver_policy.h"

#include "gtest/gtest.h"

namespace wsched::core {
namespace {

std::vector<DriverPolicyEntry> Policy() {
  return {
      {"5.15.0-*-generic", "ubuntu", "22.04", "535.129.03", "535", "reg.example/driver"},
      {"5.15.0-91-generic", "ubuntu", "22.04", "550.54.15", "550", "reg.example/driver"},
      {"6.1.*", "debian", "", "550.54.15", "550", "reg.example/driver"},
  };
}

TEST(GlobMatch, Basics) {
  EXPECT_TRUE(GlobMatch("5.15.0-*-generic", "5.15.0-91-generic"));
  EXPECT_FALSE(GlobMatch("5.15.0-*-generic", "5.15.0-91-aws"));
  EXPECT_TRUE(GlobMatch("6.1.?", "6.1.0"));
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_FALSE(GlobMatch("", "x"));
}

TEST(FindDriverRequirement, ExactKernelBeatsPattern) {
  auto req = FindDriverRequirement(Policy(), "5.15.0-91-generic", "ubuntu", "22.04");
  ASSERT_TRUE(req.has_value());
  EXPECT_EQ(req->driver_version, "550.54.15");
  EXPECT_EQ(req->installer_image, "reg.example/driver:550-5.15.0-91-generic-ubuntu22.04");
}

TEST(FindDriverRequirement, PatternAndAnyOsVersion) {
  auto req = FindDriverRequirement(Policy(), "5.15.0-88-generic", "ubuntu", "22.04");
  ASSERT_TRUE(req.has_value());
  EXPECT_EQ(req->driver_version, "535.129.03");
  auto deb = FindDriverRequirement(Policy(), "6.1.0-18-amd64", "debian", "12");
  ASSERT_TRUE(deb.has_value());
  EXPECT_EQ(deb->installer_image, "reg.example/driver:550-6.1.0-18-amd64-debian12");
}

TEST(FindDriverRequirement, NoMatchIsReportedNotGuessed) {
  EXPECT_FALSE(FindDriverRequirement(Policy(), "5.15.0-91-generic", "ubuntu", "20.04"));
  EXPECT_FALSE(FindDriverRequirement(Policy(), "6.8.0-1-generic", "ubuntu", "22.04"));
}

}  // namespace
}  // namespace wsched::core
