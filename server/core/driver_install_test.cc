#include "server/core/driver_install.h"

#include "gtest/gtest.h"

namespace wsched::core {
namespace {

TEST(DriverInstall, NamesRoundTrip) {
  for (DriverInstall face : {DriverInstall::kManual, DriverInstall::kNode, DriverInstall::kCluster}) {
    EXPECT_EQ(ParseDriverInstall(DriverInstallName(face)), face);
  }
  EXPECT_EQ(ParseDriverInstall("Node"), std::nullopt);
  EXPECT_EQ(ParseDriverInstall(""), std::nullopt);
}

TEST(DriverCache, NamesRoundTrip) {
  for (DriverCache cache : {DriverCache::kUnknown, DriverCache::kHit, DriverCache::kMiss}) {
    EXPECT_EQ(ParseDriverCache(DriverCacheName(cache)), cache);
  }
  EXPECT_EQ(ParseDriverCache("HIT"), std::nullopt);
}

TEST(DriverInstall, OnlyANodePoolsAgentRunsTheInstall) {
  EXPECT_FALSE(AgentRunsDriverInstall(DriverInstall::kManual, DriverState::kNeedsDriver));
  EXPECT_FALSE(AgentRunsDriverInstall(DriverInstall::kCluster, DriverState::kNeedsDriver));
  EXPECT_TRUE(AgentRunsDriverInstall(DriverInstall::kNode, DriverState::kNeedsDriver));
}

TEST(DriverInstall, TheAgentRunsItWhileTheNodeLacksItsDriver) {
  EXPECT_TRUE(AgentRunsDriverInstall(DriverInstall::kNode, DriverState::kInstalling));
  EXPECT_TRUE(AgentRunsDriverInstall(DriverInstall::kNode, DriverState::kInstallFailed));
  EXPECT_FALSE(AgentRunsDriverInstall(DriverInstall::kNode, DriverState::kReady));
  EXPECT_FALSE(AgentRunsDriverInstall(DriverInstall::kNode, DriverState::kNoPolicy));
  EXPECT_FALSE(AgentRunsDriverInstall(DriverInstall::kNode, DriverState::kNotNeeded));
}

}  // namespace
}  // namespace wsched::core
