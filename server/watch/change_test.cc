// What one filter's stream makes of a committed workspace change
// (server/watch/change.h).
#include "server/watch/change.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/core/workspace.h"
#include "server/watch/filter.h"

namespace wsched::watch {
namespace {

using core::WorkspaceState;

core::Workspace WorkspaceIn(WorkspaceState state, std::string node = "") {
  core::Workspace w;
  w.id = "w1";
  w.org_id = "o1";
  w.project_id = "p1";
  w.class_id = "gpu-a100";
  w.state = state;
  if (!node.empty()) {
    w.pool = "west";
    w.node_name = std::move(node);
  }
  return w;
}

// The workspace went from `before` (nullopt: it did not exist) to `after`
// (nullopt: deleted) at `version`.
std::shared_ptr<const Happened> Changed(std::optional<core::Workspace> before,
                                        std::optional<core::Workspace> after, int64_t version = 7,
                                        std::string id = "w1") {
  auto happened = std::make_shared<Happened>();
  happened->id = std::move(id);
  happened->version = version;
  if (before) {
    happened->before = FactsOf(*before);
  } else {
    // Not yet: the other facts are those of the workspace, the state says it is not there.
    happened->before = FactsOf(*after);
    happened->before.state = std::nullopt;
  }
  happened->after = std::move(after);
  return happened;
}

TEST(ChangeTest, ANewPendingWorkspaceIsPendingAndLeavesNoFilter) {
  auto created = Changed(std::nullopt, WorkspaceIn(WorkspaceState::kPending));
  std::optional<Change> change = Classify(Filter{}, created);
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->what, What::kPending);
  EXPECT_FALSE(change->left_filter);
  EXPECT_EQ(change->happened, created);  // The stream sends the shared change itself.
}

TEST(ChangeTest, PendingToPlacedIsPlaced) {
  auto change = Classify(Filter{}, Changed(WorkspaceIn(WorkspaceState::kPending),
                                           WorkspaceIn(WorkspaceState::kPlaced, "n1")));
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->what, What::kPlaced);
  EXPECT_FALSE(change->left_filter);
}

TEST(ChangeTest, LostToPlacedIsAPlacementToo) {
  auto change = Classify(Filter{}, Changed(WorkspaceIn(WorkspaceState::kLost, "n1"),
                                           WorkspaceIn(WorkspaceState::kPlaced, "n2")));
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->what, What::kPlaced);
}

TEST(ChangeTest, PlacedToPlacedIsOnlyTheIdleMarkChanging) {
  auto change = Classify(Filter{}, Changed(WorkspaceIn(WorkspaceState::kPlaced, "n1"),
                                           WorkspaceIn(WorkspaceState::kPlaced, "n1")));
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->what, What::kIdleChanged);
  EXPECT_FALSE(change->left_filter);
}

TEST(ChangeTest, AStopIsStopped) {
  auto change = Classify(Filter{}, Changed(WorkspaceIn(WorkspaceState::kPlaced, "n1"),
                                           WorkspaceIn(WorkspaceState::kStopped)));
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->what, What::kStopped);
  // Stopped workspaces are still workspaces: an empty filter keeps them.
  EXPECT_FALSE(change->left_filter);
}

TEST(ChangeTest, ALossIsLost) {
  auto change = Classify(Filter{}, Changed(WorkspaceIn(WorkspaceState::kPlaced, "n1"),
                                           WorkspaceIn(WorkspaceState::kLost, "n1")));
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->what, What::kLost);
  EXPECT_FALSE(change->left_filter);
}

TEST(ChangeTest, ADeletionIsDeletedAndLeavesTheFilterItMatched) {
  auto change = Classify(Filter{}, Changed(WorkspaceIn(WorkspaceState::kStopped), std::nullopt));
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->what, What::kDeleted);
  EXPECT_TRUE(change->left_filter);
}

TEST(ChangeTest, ADeletionOfAWorkspaceTheFilterNeverMatchedIsNothing) {
  EXPECT_FALSE(
      Classify(Filter{.org_id = "o2"}, Changed(WorkspaceIn(WorkspaceState::kStopped), std::nullopt))
          .has_value());
}

TEST(ChangeTest, AStateFilterTellsThePlacementThatLeavesItThenNothingMore) {
  const Filter pending{.states = {WorkspaceState::kPending}};
  auto placed = Classify(pending, Changed(WorkspaceIn(WorkspaceState::kPending),
                                          WorkspaceIn(WorkspaceState::kPlaced, "n1"), 7));
  ASSERT_TRUE(placed.has_value());
  EXPECT_EQ(placed->what, What::kPlaced);
  EXPECT_TRUE(placed->left_filter);
  // It was already out of the filter: its stop is none of the stream's business.
  EXPECT_FALSE(Classify(pending, Changed(WorkspaceIn(WorkspaceState::kPlaced, "n1"),
                                         WorkspaceIn(WorkspaceState::kStopped), 8))
                   .has_value());
}

TEST(ChangeTest, AWorkspaceEnteringAFilterDoesNotLeaveIt) {
  // On node n1 only once placed there: entering, not leaving.
  auto change = Classify(Filter{.node = "n1"}, Changed(WorkspaceIn(WorkspaceState::kPending),
                                                       WorkspaceIn(WorkspaceState::kPlaced, "n1")));
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->what, What::kPlaced);
  EXPECT_FALSE(change->left_filter);
}

TEST(ChangeTest, AWorkspaceMovingOffTheFiltersNodeLeavesIt) {
  auto change = Classify(Filter{.node = "n1"}, Changed(WorkspaceIn(WorkspaceState::kPlaced, "n1"),
                                                       WorkspaceIn(WorkspaceState::kLost, "n2")));
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->what, What::kLost);
  EXPECT_TRUE(change->left_filter);
}

TEST(ChangeTest, AChangeMatchingNeitherBeforeNorAfterIsNothing) {
  EXPECT_FALSE(Classify(Filter{.node = "n9"}, Changed(WorkspaceIn(WorkspaceState::kPending),
                                                      WorkspaceIn(WorkspaceState::kPlaced, "n1")))
                   .has_value());
  EXPECT_FALSE(Classify(Filter{.project_id = "p2"},
                        Changed(std::nullopt, WorkspaceIn(WorkspaceState::kPending)))
                   .has_value());
}

TEST(ChangeTest, BatchForIsNothingWhenNoChangeOfTheEntryMatches) {
  Entry entry{.version = 9,
              .happened = {Changed(std::nullopt, WorkspaceIn(WorkspaceState::kPending), 9, "w1"),
                           Changed(std::nullopt, WorkspaceIn(WorkspaceState::kPending), 9, "w2")}};
  EXPECT_FALSE(BatchFor(Filter{.org_id = "o2"}, entry).has_value());
  // An entry that changed no workspace (nodes, settings) is nothing to anyone.
  EXPECT_FALSE(BatchFor(Filter{}, Entry{.version = 10}).has_value());
}

TEST(ChangeTest, BatchForKeepsTheMatchingChangesInEntryOrder) {
  core::Workspace other_org = WorkspaceIn(WorkspaceState::kPending);
  other_org.org_id = "o2";
  Entry entry{.version = 12,
              .happened = {Changed(std::nullopt, WorkspaceIn(WorkspaceState::kPending), 12, "w3"),
                           Changed(std::nullopt, other_org, 12, "w4"),
                           Changed(WorkspaceIn(WorkspaceState::kPending),
                                   WorkspaceIn(WorkspaceState::kPlaced, "n1"), 12, "w1"),
                           Changed(WorkspaceIn(WorkspaceState::kStopped), std::nullopt, 12, "w2")}};
  std::optional<Batch> batch = BatchFor(Filter{.org_id = "o1"}, entry);
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->kind, Batch::Kind::kChanges);
  EXPECT_EQ(batch->version, 12);
  ASSERT_EQ(batch->changes.size(), 3u);
  EXPECT_EQ(batch->changes[0].happened->id, "w3");
  EXPECT_EQ(batch->changes[0].what, What::kPending);
  EXPECT_EQ(batch->changes[1].happened->id, "w1");
  EXPECT_EQ(batch->changes[1].what, What::kPlaced);
  EXPECT_EQ(batch->changes[2].happened->id, "w2");
  EXPECT_EQ(batch->changes[2].what, What::kDeleted);
  EXPECT_TRUE(batch->changes[2].left_filter);
}

TEST(ChangeTest, EveryWhatHasAName) {
  EXPECT_STREQ(WhatName(What::kExisting), "existing");
  EXPECT_STREQ(WhatName(What::kPending), "pending");
  EXPECT_STREQ(WhatName(What::kPlaced), "placed");
  EXPECT_STREQ(WhatName(What::kStopped), "stopped");
  EXPECT_STREQ(WhatName(What::kLost), "lost");
  EXPECT_STREQ(WhatName(What::kIdleChanged), "idle_changed");
  EXPECT_STREQ(WhatName(What::kDeleted), "deleted");
}

}  // namespace
}  // namespace wsched::watch
