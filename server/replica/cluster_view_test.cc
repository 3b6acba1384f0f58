#include "server/replica/cluster_view.h"

#include "gtest/gtest.h"

namespace wsched::replica {
namespace {

std::shared_ptr<const ClusterView> ViewAt(uint64_t generation, const std::string& node) {
  auto view = std::make_shared<ClusterView>();
  view->generation = generation;
  core::NodeInfo info;
  info.name = node;
  info.pool = "cpu";
  EXPECT_TRUE(view->snapshot.UpsertNode(info, core::NodeState::kReady, core::DriverState::kReady).ok());
  return view;
}

TEST(ClusterViewCacheTest, CopiesOnlyWhenTheStateMovedOn) {
  ClusterViewCache cache;
  int builds = 0;
  auto build_at = [&](uint64_t generation) {
    return [&, generation] {
      builds++;
      return ViewAt(generation, "n" + std::to_string(generation));
    };
  };
  auto first = cache.Get(1, build_at(1));
  auto again = cache.Get(1, build_at(1));
  EXPECT_EQ(first, again);  // The same published view: no copy.
  EXPECT_EQ(builds, 1);
  auto next = cache.Get(2, build_at(2));
  EXPECT_EQ(builds, 2);
  EXPECT_NE(next->snapshot.FindNode("n2"), nullptr);
  // A reader that took the old view keeps it whole.
  EXPECT_NE(first->snapshot.FindNode("n1"), nullptr);
  EXPECT_EQ(first->snapshot.FindNode("n2"), nullptr);
  EXPECT_EQ(cache.copies(), 2);
}

}  // namespace
}  // namespace wsched::replica
