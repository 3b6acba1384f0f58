#include "gtest/gtest.h"
#include "server/store/timing_figures.h"

namespace wsched::store {
namespace {

using core::DriverCache;

std::pair<std::string, std::string> At(const char* pool, const char* kernel) { return {pool, kernel}; }

TEST(FiguresForTheNextInstall, ACacheHitIsWhatTheNextNodeGets) {
  auto chosen = FiguresForTheNextInstall({
      {{"gpu", "6.1.0-18", DriverCache::kMiss}, {absl::Minutes(9), 1}},
      {{"gpu", "6.1.0-18", DriverCache::kHit}, {absl::Minutes(1), 2}},
      {{"gpu", "6.1.0-18", DriverCache::kUnknown}, {absl::Minutes(5), 3}},
  });
  ASSERT_EQ(chosen.size(), 1u);
  EXPECT_EQ(chosen[At("gpu", "6.1.0-18")].median, absl::Minutes(1));
  EXPECT_EQ(chosen[At("gpu", "6.1.0-18")].samples, 2);
}

TEST(FiguresForTheNextInstall, WithoutHitsReportsThatDoNotSayComeBeforeMisses) {
  auto chosen = FiguresForTheNextInstall({
      {{"gpu", "a", DriverCache::kMiss}, {absl::Minutes(9), 1}},
      {{"gpu", "a", DriverCache::kUnknown}, {absl::Minutes(5), 3}},
      {{"gpu", "b", DriverCache::kMiss}, {absl::Minutes(8), 1}},
      {{"other", "a", DriverCache::kHit}, {absl::Minutes(2), 1}},
  });
  EXPECT_EQ(chosen[At("gpu", "a")].median, absl::Minutes(5));
  EXPECT_EQ(chosen[At("gpu", "b")].median, absl::Minutes(8));
  EXPECT_EQ(chosen[At("other", "a")].median, absl::Minutes(2));
}

}  // namespace
}  // namespace wsched::store
