#include "server/core/usage.h"

#include "gtest/gtest.h"

namespace wsched::core {
namespace {

TEST(UsageNamesTest, EveryEndReasonParsesBackFromItsName) {
  for (EndReason reason :
       {EndReason::kStopped, EndReason::kLost, EndReason::kNodeRemoved, EndReason::kIdle}) {
    EXPECT_EQ(ParseEndReason(EndReasonName(reason)), reason);
  }
  EXPECT_EQ(ParseEndReason("Stopped"), std::nullopt);
  EXPECT_EQ(ParseEndReason(""), std::nullopt);
}

TEST(UsageNamesTest, OnlyStoppedAndIdleTravelWithAStop) {
  EXPECT_TRUE(IsStopReason(EndReason::kStopped));
  EXPECT_TRUE(IsStopReason(EndReason::kIdle));
  EXPECT_FALSE(IsStopReason(EndReason::kLost));
  EXPECT_FALSE(IsStopReason(EndReason::kNodeRemoved));
}

TEST(UsageNamesTest, GroupsAndBucketsParseBackFromTheirNames) {
  for (UsageGroup group : {UsageGroup::kOrg, UsageGroup::kProject, UsageGroup::kClass}) {
    EXPECT_EQ(ParseUsageGroup(UsageGroupName(group)), group);
  }
  for (UsageBucket bucket :
       {UsageBucket::kNone, UsageBucket::kHour, UsageBucket::kDay, UsageBucket::kMonth}) {
    EXPECT_EQ(ParseUsageBucket(UsageBucketName(bucket)), bucket);
  }
  EXPECT_EQ(ParseUsageGroup("user"), std::nullopt);
  EXPECT_EQ(ParseUsageBucket("week"), std::nullopt);
}

TEST(TimeZoneNameTest, OnlyUtcAndAreaLocationNamesAreTaken) {
  for (const char* taken : {"UTC", "Europe/Berlin", "America/Argentina/Buenos_Aires", "Etc/GMT+3"}) {
    EXPECT_EQ(TimeZoneNameProblem(taken), std::nullopt) << taken;
  }
  for (const char* refused : {"CET", "EST", "MST", "EST5EDT", "GMT", "Japan"}) {
    std::optional<std::string> problem = TimeZoneNameProblem(refused);
    ASSERT_TRUE(problem.has_value()) << refused;
    EXPECT_NE(problem->find("Area/Location"), std::string::npos) << *problem;
  }
  EXPECT_TRUE(TimeZoneNameProblem("UTC+3").has_value());
  EXPECT_TRUE(TimeZoneNameProblem("Europe/").has_value());
  EXPECT_TRUE(TimeZoneNameProblem("").has_value());
}

}  // namespace
}  // namespace wsched::core
