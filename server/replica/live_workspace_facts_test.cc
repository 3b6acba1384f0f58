#include "server/replica/live_workspace_facts.h"

#include "gtest/gtest.h"

namespace wsched::replica {
namespace {

store::WorkspaceRow Placed(const std::string& id, absl::Time at) {
  store::WorkspaceRow row;
  row.workspace.id = id;
  row.workspace.class_id = "gpu-1x";
  row.workspace.state = core::WorkspaceState::kPlaced;
  row.workspace.placed_at = at;
  return row;
}

TEST(LiveWorkspaceFactsTest, APlacementEndsOnceWhenItsWorkspaceStopsOrIsPlacedAnew) {
  LiveWorkspaceFacts facts;
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  EXPECT_EQ(facts.Apply(Placed("w", t0), /*live=*/true), std::nullopt);
  EXPECT_EQ(facts.ClassOf("w"), "gpu-1x");
  EXPECT_EQ(facts.PlacedAt("w"), t0);

  // Placed again (a restart after a loss): the first placement ended.
  EXPECT_EQ(facts.Apply(Placed("w", t0 + absl::Minutes(5)), true), t0);
  EXPECT_EQ(facts.Apply(Placed("w", t0 + absl::Minutes(5)), true), std::nullopt) << "a repeat ends nothing";

  store::WorkspaceRow stopped = Placed("w", t0 + absl::Minutes(5));
  stopped.workspace.state = core::WorkspaceState::kStopped;
  stopped.released = true;
  EXPECT_EQ(facts.Apply(stopped, /*live=*/false), t0 + absl::Minutes(5));
  EXPECT_EQ(facts.ClassOf("w"), "unknown");
  EXPECT_EQ(facts.PlacedAt("w"), absl::InfinitePast());
  EXPECT_EQ(facts.classes(), 0u);
}

TEST(LiveWorkspaceFactsTest, TheIdleMarkFollowsTheRecord) {
  LiveWorkspaceFacts facts;
  store::WorkspaceRow row = Placed("w", absl::FromUnixSeconds(1'800'000'000));
  row.workspace.idle = core::IdleMark{};
  facts.Apply(row, true);
  EXPECT_TRUE(facts.IdleMarkOf("w").has_value());
  row.workspace.idle.reset();
  facts.Apply(row, true);
  EXPECT_FALSE(facts.IdleMarkOf("w").has_value());
}

}  // namespace
}  // namespace wsched::replica
