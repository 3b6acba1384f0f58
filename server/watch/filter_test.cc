// Which workspaces a WatchWorkspaces filter selects (server/watch/filter.h).
#include "server/watch/filter.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/core/workspace.h"

namespace wsched::watch {
namespace {

using core::WorkspaceState;

// A placed workspace of org o1, project p1, class gpu-a100 on node n1 of pool west.
Facts Placed() { return {WorkspaceState::kPlaced, "o1", "p1", "gpu-a100", "west", "n1"}; }

TEST(FilterTest, AnEmptyFilterSelectsAnyExistingWorkspace) {
  Filter any;
  EXPECT_TRUE(Selects(any, Placed()));
  EXPECT_TRUE(Selects(any, Facts{WorkspaceState::kPending, "o2", "p9", "cpu", "", ""}));
  EXPECT_TRUE(Selects(any, Facts{WorkspaceState::kStopped, "o3", "p3", "c", "", ""}));
  EXPECT_TRUE(Selects(any, Facts{WorkspaceState::kLost, "o3", "p3", "c", "east", "n2"}));
}

TEST(FilterTest, AWorkspaceThatDoesNotExistIsNeverSelected) {
  Facts gone = Placed();
  gone.state = std::nullopt;
  EXPECT_FALSE(Selects(Filter{}, gone));
  // Even when every field agrees.
  EXPECT_FALSE(Selects(Filter{.org_id = "o1", .project_id = "p1", .node = "n1"}, gone));
}

TEST(FilterTest, EachSetFieldNarrows) {
  const Facts facts = Placed();
  EXPECT_TRUE(Selects(Filter{.org_id = "o1"}, facts));
  EXPECT_FALSE(Selects(Filter{.org_id = "o2"}, facts));
  EXPECT_TRUE(Selects(Filter{.project_id = "p1"}, facts));
  EXPECT_FALSE(Selects(Filter{.project_id = "p2"}, facts));
  EXPECT_TRUE(Selects(Filter{.class_id = "gpu-a100"}, facts));
  EXPECT_FALSE(Selects(Filter{.class_id = "gpu-h100"}, facts));
  EXPECT_TRUE(Selects(Filter{.pool = "west"}, facts));
  EXPECT_FALSE(Selects(Filter{.pool = "east"}, facts));
  EXPECT_TRUE(Selects(Filter{.node = "n1"}, facts));
  EXPECT_FALSE(Selects(Filter{.node = "n2"}, facts));
}

TEST(FilterTest, SetFieldsMustAllAgree) {
  const Facts facts = Placed();
  EXPECT_TRUE(Selects(Filter{.org_id = "o1", .pool = "west", .node = "n1"}, facts));
  // One field off is enough to leave it out.
  EXPECT_FALSE(Selects(Filter{.org_id = "o1", .pool = "west", .node = "n2"}, facts));
  EXPECT_FALSE(Selects(Filter{.org_id = "o2", .pool = "west", .node = "n1"}, facts));
}

TEST(FilterTest, AFilterOnANodeDoesNotSelectAPendingWorkspaceWithoutOne) {
  EXPECT_FALSE(Selects(Filter{.node = "n1"},
                       Facts{WorkspaceState::kPending, "o1", "p1", "gpu-a100", "", ""}));
}

TEST(FilterTest, StatesSelectOnlyThoseStates) {
  Filter pending_or_lost{.states = {WorkspaceState::kPending, WorkspaceState::kLost}};
  Facts facts = Placed();
  EXPECT_FALSE(Selects(pending_or_lost, facts));
  facts.state = WorkspaceState::kLost;
  EXPECT_TRUE(Selects(pending_or_lost, facts));
  facts.state = WorkspaceState::kPending;
  EXPECT_TRUE(Selects(pending_or_lost, facts));
  facts.state = WorkspaceState::kStopped;
  EXPECT_FALSE(Selects(pending_or_lost, facts));
}

TEST(FilterTest, AProjectOwnersScopeReachesTheOrgsAndProjectsListed) {
  const Facts facts = Placed();  // o1 / p1.
  // In either list is enough.
  EXPECT_TRUE(Selects(Filter{.scope_orgs = std::vector<std::string>{"o1"}}, facts));
  EXPECT_TRUE(Selects(Filter{.scope_projects = std::vector<std::string>{"p1"}}, facts));
  EXPECT_TRUE(Selects(Filter{.scope_orgs = std::vector<std::string>{"o9"},
                             .scope_projects = std::vector<std::string>{"p1"}},
                      facts));
  EXPECT_TRUE(Selects(Filter{.scope_orgs = std::vector<std::string>{"o9", "o1"},
                             .scope_projects = std::vector<std::string>{"p9"}},
                      facts));
  // In neither: out of reach.
  EXPECT_FALSE(Selects(Filter{.scope_orgs = std::vector<std::string>{"o9"},
                              .scope_projects = std::vector<std::string>{"p9"}},
                       facts));
  EXPECT_FALSE(Selects(Filter{.scope_projects = std::vector<std::string>{"p2", "p3"}}, facts));
}

TEST(FilterTest, AnEmptyScopeReachesNothingWhileNoScopeReachesEverything) {
  const Facts facts = Placed();
  // A token scoped to no org and no project sees nothing; an unscoped caller sees all.
  EXPECT_FALSE(Selects(Filter{.scope_orgs = std::vector<std::string>{}}, facts));
  EXPECT_FALSE(Selects(Filter{.scope_orgs = std::vector<std::string>{},
                              .scope_projects = std::vector<std::string>{}},
                       facts));
  EXPECT_TRUE(Selects(Filter{}, facts));
}

TEST(FilterTest, TheScopeNarrowsOnTopOfTheOtherFields) {
  const Facts facts = Placed();
  EXPECT_FALSE(Selects(Filter{.node = "n2", .scope_orgs = std::vector<std::string>{"o1"}}, facts));
  EXPECT_TRUE(Selects(Filter{.node = "n1", .scope_orgs = std::vector<std::string>{"o1"}}, facts));
}

TEST(FilterTest, FactsOfAWorkspaceAreWhatTheFilterSelectsOn) {
  core::Workspace w;
  w.id = "w1";
  w.org_id = "o1";
  w.project_id = "p1";
  w.class_id = "gpu-a100";
  w.state = WorkspaceState::kLost;
  w.pool = "west";
  w.node_name = "n1";
  const Facts facts = FactsOf(w);
  EXPECT_EQ(facts.state, WorkspaceState::kLost);
  EXPECT_EQ(facts.org_id, "o1");
  EXPECT_EQ(facts.project_id, "p1");
  EXPECT_EQ(facts.class_id, "gpu-a100");
  EXPECT_EQ(facts.pool, "west");
  EXPECT_EQ(facts.node, "n1");
}

}  // namespace
}  // namespace wsched::watch
