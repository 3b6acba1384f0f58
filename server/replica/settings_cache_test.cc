#include "server/replica/settings_cache.h"

#include "gtest/gtest.h"

namespace wsched::replica {
namespace {

CachedSettings Settings(const std::string& project, const std::string& org, int64_t version) {
  CachedSettings s;
  s.project.project_id = project;
  s.project.org_id = org;
  s.project_version = version;
  s.org.org_id = org;
  s.org_version = version + 1;
  return s;
}

TEST(SettingsCache, AnswersOnlyWhenBothRowsAreKnown) {
  SettingsCache cache;
  EXPECT_FALSE(cache.Get("p", "o"));
  cache.Put(Settings("p", "o", 7));
  auto got = cache.Get("p", "o");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->project_version, 7);
  EXPECT_EQ(got->org_version, 8);
  EXPECT_FALSE(cache.Get("p", "other-org"));
}

TEST(SettingsCache, AFeedEntryDropsExactlyItsRow) {
  SettingsCache cache;
  cache.Put(Settings("p", "o", 1));
  cache.Put(Settings("q", "o", 3));
  cache.Invalidate("project:p");
  EXPECT_FALSE(cache.Get("p", "o"));
  EXPECT_TRUE(cache.Get("q", "o"));
  cache.Invalidate("org:o");
  EXPECT_FALSE(cache.Get("q", "o"));
}

TEST(SettingsCache, StaysBounded) {
  SettingsCache cache(/*max_entries=*/2);
  cache.Put(Settings("a", "o", 1));
  cache.Put(Settings("b", "o", 1));
  cache.Put(Settings("c", "o", 1));  // Full: starts over with c.
  EXPECT_FALSE(cache.Get("a", "o"));
  EXPECT_TRUE(cache.Get("c", "o"));
}

}  // namespace
}  // namespace wsched::replica
