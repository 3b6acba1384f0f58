#include "server/replica/recently_ended.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace wsched::replica {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1'800'000'000);

TEST(RecentlyEndedTest, KnowsAVersionForItsWindowOnly) {
  RecentlyEnded ended({absl::Seconds(10), 100});
  ended.Add("a", 7, kStart);
  EXPECT_EQ(ended.VersionOf("a"), 7);
  EXPECT_EQ(ended.VersionOf("b"), 0);
  ended.Expire(kStart + absl::Seconds(10));
  EXPECT_EQ(ended.VersionOf("a"), 7);
  ended.Expire(kStart + absl::Seconds(11));
  EXPECT_EQ(ended.VersionOf("a"), 0);
  EXPECT_EQ(ended.size(), 0u);
}

TEST(RecentlyEndedTest, KeepsAtMostMaxEntriesDroppingTheOldest) {
  RecentlyEnded ended({absl::Hours(1), 3});
  for (int i = 0; i < 10; ++i) ended.Add(absl::StrCat("w", i), i + 1, kStart);
  EXPECT_EQ(ended.size(), 3u);
  EXPECT_EQ(ended.VersionOf("w6"), 0);
  EXPECT_EQ(ended.VersionOf("w7"), 8);
  EXPECT_EQ(ended.VersionOf("w9"), 10);
}

TEST(RecentlyEndedTest, AnIdEndedAgainKeepsItsNewerVersionWhenTheOlderEntryLeaves) {
  RecentlyEnded ended({absl::Seconds(10), 100});
  ended.Add("a", 3, kStart);
  ended.Add("a", 9, kStart + absl::Seconds(5));  // Restarted and stopped again.
  ended.Expire(kStart + absl::Seconds(12));        // The first entry leaves.
  EXPECT_EQ(ended.VersionOf("a"), 9);
  ended.Expire(kStart + absl::Seconds(16));
  EXPECT_EQ(ended.VersionOf("a"), 0);
}

TEST(RecentlyEndedTest, ForgottenIdsAreUnknownAtOnce) {
  RecentlyEnded ended({absl::Seconds(10), 100});
  ended.Add("a", 3, kStart);
  ended.Forget("a");
  EXPECT_EQ(ended.VersionOf("a"), 0);
  EXPECT_EQ(ended.size(), 0u);
}

}  // namespace
}  // namespace wsched::replica
