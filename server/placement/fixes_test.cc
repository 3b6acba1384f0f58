#include "server/placement/fixes.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/test_nodes.h"

namespace wsched::placement {
namespace {

using testing::FakeGpuNode;
using testing::GpuClass;
using testing::GpuPool;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const absl::Time kNow = absl::FromUnixSeconds(1800000000);

// One org's workspace waiting for gpu-8x on pool gpu-h100.
class FixesTest : public ::testing::Test {
 protected:
  FixesTest() {
    pools_ = {GpuPool("gpu-h100", "h100")};
    pools_[0].max_size = 1;
    classes_ = {GpuClass("gpu-8x", 8), GpuClass("gpu-4x", 4), GpuClass("gpu-2x", 2)};
    classes_[1].credits_per_minute_milli = 1500;
    org_.org_id = "o-1";
    project_.project_id = "p-1";
    project_.org_id = "o-1";
  }

  void AddNode(const std::string& name, core::NodeState state = core::NodeState::kReady,
               core::DriverState driver = core::DriverState::kReady) {
    ASSERT_TRUE(snapshot_.UpsertNode(FakeGpuNode(name, "gpu-h100"), state, driver, kNow).ok());
  }

  // Holds `count` GPUs of `node` for another workspace.
  void Hold(const std::string& node, int count) {
    std::vector<int> gpus;
    for (int i = 0; i < count; ++i) gpus.push_back(i);
    ASSERT_TRUE(snapshot_.Hold("other-on-" + node, node, gpus, {}).ok());
  }

  // `workspace` of `project` (org o-1 unless said) holds `count` GPUs of
  // `node` and has been idle since `since`.
  void HoldIdle(const std::string& workspace, const std::string& node, int count, absl::Time since,
                const std::string& project = "p-1", const std::string& org = "o-1") {
    std::vector<int> gpus;
    for (int i = 0; i < count; ++i) gpus.push_back(i);
    ASSERT_TRUE(snapshot_.Hold(workspace, node, gpus, {}).ok());
    idle_.push_back(
        {workspace, org, project, since, *snapshot_.FindHold(workspace), count * int64_t{7}});
  }

  FixInputs Inputs() {
    FixInputs in;
    in.pending.cls = &classes_[0];
    in.pending.pools = &pools_;
    in.pending.snapshot = &snapshot_;
    in.pending.driver_policy = &policy_;
    in.pending.queue_position = 1;
    in.pending.quota = quota_;
    in.pending.budgets = budgets_;
    in.pending.now = kNow;
    in.classes = &classes_;
    in.project = project_;
    in.org = org_;
    in.idle = idle_;
    return in;
  }

  std::vector<core::NodePool> pools_;
  std::vector<core::WorkspaceClass> classes_;
  std::vector<core::DriverPolicyEntry> policy_;
  Snapshot snapshot_;
  std::optional<QuotaFigures> quota_;
  std::vector<core::BudgetStanding> budgets_;
  core::ProjectSettings project_;
  core::OrgSettings org_;
  std::vector<IdleWorkspace> idle_;
};

// `scope`'s limit of `limit_seconds` GPU-seconds, `spent_seconds` spent; a
// placement commits to a minute of its GPUs.
core::BudgetStanding Budget(const std::string& scope, const std::string& id, int64_t limit_seconds,
                            int64_t spent_seconds) {
  return {scope,
          id,
          limit_seconds * core::kGpuMicrosPerGpuSecond,
          spent_seconds * core::kGpuMicrosPerGpuSecond,
          absl::Minutes(1),
          kNow + absl::Hours(5)};
}

TEST_F(FixesTest, RaisesTheExhaustedSpendingLimitByTheLeastThatAdmitsTheFirstInterval) {
  AddNode("h1");
  budgets_ = {Budget("org", "o-1", 600, 590)};  // 590 + 8 GPUs x 60 s = 1070.
  classes_.resize(1);
  std::vector<PendingFix> fixes = FindFixes(Inputs());
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].kind, FixKind::kRaiseSpendingLimit);
  EXPECT_EQ(std::string(FixKindName(fixes[0].kind)), "raise_spending_limit");
  EXPECT_EQ(fixes[0].applier, FixApplier::kOrgAdmin);
  EXPECT_EQ(fixes[0].spending_scope, "org");
  EXPECT_EQ(fixes[0].spending_limit, 1070 * core::kGpuMicrosPerGpuSecond);
  EXPECT_EQ(fixes[0].raise_by, 470 * core::kGpuMicrosPerGpuSecond);
  EXPECT_EQ(fixes[0].outcome.code, PendingCode::kQueued);
  EXPECT_EQ(fixes[0].detail,
            "raise the spending limit of org o-1 to 1070.000000 GPU-seconds (+470.000000): it is "
            "placed at the next pass of the queue (room on node h1)");

  // Proven: applied, the walk lets it go; one GPU-microsecond less does not.
  FixInputs in = Inputs();
  EXPECT_EQ(ExplainPending(FixedInputs(in, fixes[0]).pending()).code, PendingCode::kQueued);
  PendingFix short_of_it = fixes[0];
  short_of_it.spending_limit -= 1;
  EXPECT_EQ(ExplainPending(FixedInputs(in, short_of_it).pending()).code,
            PendingCode::kBudgetExhausted);
}

TEST_F(FixesTest, ALimitSpentPastItIsRaisedAboveWhatIsSpent) {
  AddNode("h1");
  budgets_ = {Budget("org", "o-1", 600, 900)};
  classes_.resize(1);
  std::vector<PendingFix> fixes = FindFixes(Inputs());
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].spending_limit, (900 + 480) * core::kGpuMicrosPerGpuSecond);
  EXPECT_EQ(fixes[0].raise_by, (900 + 480 - 600) * core::kGpuMicrosPerGpuSecond);
}

TEST_F(FixesTest, RaisesTheProjectsLimitWhenOnlyItHoldsTheWorkspace) {
  AddNode("h1");
  budgets_ = {Budget("org", "o-1", 6000, 100), Budget("project", "p-1", 500, 100)};
  classes_.resize(1);
  std::vector<PendingFix> fixes = FindFixes(Inputs());
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].spending_scope, "project");
  EXPECT_EQ(fixes[0].spending_limit, 580 * core::kGpuMicrosPerGpuSecond);
  EXPECT_THAT(fixes[0].detail, HasSubstr("raise the spending limit of project p-1 to 580.000000"));
}

TEST_F(FixesTest, NoSpendingLimitRaiseWhenBothLimitsHoldIt) {
  AddNode("h1");
  // A project's limit may not exceed its org's: no one raise admits it.
  budgets_ = {Budget("org", "o-1", 600, 590), Budget("project", "p-1", 500, 490)};
  classes_.resize(1);
  EXPECT_THAT(FindFixes(Inputs()), IsEmpty());
}

TEST_F(FixesTest, NoSpendingLimitRaiseWhenNoCapacityFollows) {
  AddNode("h1");
  Hold("h1", 1);  // At max_size 1 with 7 GPUs free.
  budgets_ = {Budget("org", "o-1", 600, 590)};
  classes_.resize(1);
  EXPECT_THAT(FindFixes(Inputs()), IsEmpty());
}

TEST_F(FixesTest, ASmallerClassWithinTheLimitRanksBeforeTheRaise) {
  AddNode("h1");
  budgets_ = {Budget("org", "o-1", 600, 300)};  // 300 + 4 x 60 fits; 300 + 8 x 60 does not.
  classes_.resize(2);
  std::vector<PendingFix> fixes = FindFixes(Inputs());
  ASSERT_EQ(fixes.size(), 2u);
  EXPECT_EQ(fixes[0].kind, FixKind::kUseClass);
  EXPECT_EQ(fixes[0].class_id, "gpu-4x");
  EXPECT_EQ(fixes[1].kind, FixKind::kRaiseSpendingLimit);
}

TEST_F(FixesTest, NoneWhenRoomExists) {
  AddNode("h1");
  EXPECT_THAT(FindFixes(Inputs()), IsEmpty());
}

TEST_F(FixesTest, RaisesTheQuotaByTheFewestGpus) {
  AddNode("h1");
  quota_ = QuotaFigures{.held_sevenths = 3 * 7, .quota = 10};  // 3 + 8 > 10: one short.
  classes_.resize(1);                                          // No other class to take.
  std::vector<PendingFix> fixes = FindFixes(Inputs());
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].kind, FixKind::kRaiseOrgGpuQuota);
  EXPECT_EQ(fixes[0].applier, FixApplier::kOrgAdmin);
  EXPECT_EQ(fixes[0].gpu_quota, 11);
  EXPECT_EQ(fixes[0].raise_by, 1);
  EXPECT_EQ(fixes[0].outcome.code, PendingCode::kQueued);
  EXPECT_THAT(fixes[0].detail, HasSubstr("raise the GPU quota of org o-1 from 10 to 11 (+1)"));
}

TEST_F(FixesTest, NoQuotaRaiseWhenNoCapacityFollows) {
  AddNode("h1");
  Hold("h1", 1);  // The one node the pool may have has 7 free.
  quota_ = QuotaFigures{.held_sevenths = 0, .quota = 4};
  classes_.resize(1);
  pools_[0].max_size = 1;
  std::vector<PendingFix> fixes = FindFixes(Inputs());
  // Raising the quota alone leaves it at max_size; raising max_size alone
  // leaves it over quota: no single fix does.
  EXPECT_THAT(fixes, IsEmpty());
}

TEST_F(FixesTest, RaisesMaxSizeToTheSmallestThatScalesUp) {
  AddNode("h1");
  Hold("h1", 1);
  classes_.resize(1);
  FixInputs in = Inputs();
  const core::WorkspaceClass* cls = &classes_[0];
  in.pending.queue_position = 3;
  in.pending.ahead = {cls, cls};  // Two 8-GPU workspaces first: they need 2 new nodes.
  std::vector<PendingFix> fixes = FindFixes(in);
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].kind, FixKind::kRaisePoolMaxSize);
  EXPECT_EQ(fixes[0].applier, FixApplier::kAdmin);
  EXPECT_EQ(fixes[0].pool, "gpu-h100");
  EXPECT_EQ(fixes[0].max_size, 4);
  EXPECT_EQ(fixes[0].raise_by, 3);
  EXPECT_EQ(fixes[0].outcome.code, PendingCode::kScaleUpNotYetRequested);
  EXPECT_THAT(fixes[0].detail, HasSubstr("raise max_size of pool gpu-h100 from 1 to 4 (+3)"));
}

TEST_F(FixesTest, OffersAllowedClassesAndUncordonLeastChangeFirst) {
  AddNode("h1");
  Hold("h1", 5);  // 3 free: room for gpu-2x, not for gpu-4x.
  AddNode("h2", core::NodeState::kCordoned);
  pools_[0].max_size = 2;
  std::vector<PendingFix> fixes = FindFixes(Inputs());
  ASSERT_EQ(fixes.size(), 3u);
  EXPECT_EQ(fixes[0].kind, FixKind::kUseClass);
  EXPECT_EQ(fixes[0].class_id, "gpu-2x");  // gpu-4x is nearer, but finds no room either.
  EXPECT_EQ(fixes[0].applier, FixApplier::kProjectOwner);
  EXPECT_THAT(fixes[0].detail, HasSubstr("place it with class gpu-2x instead"));
  EXPECT_EQ(fixes[1].kind, FixKind::kUncordonNode);
  EXPECT_EQ(fixes[1].node, "h2");
  EXPECT_EQ(fixes[1].applier, FixApplier::kAdmin);
  EXPECT_THAT(fixes[1].detail, HasSubstr("room on node h2"));
  EXPECT_EQ(fixes[2].kind, FixKind::kRaisePoolMaxSize);
  EXPECT_EQ(fixes[2].max_size, 3);
}

TEST_F(FixesTest, NeverOffersAClassThePoliciesForbid) {
  AddNode("h1");
  Hold("h1", 5);
  project_.denied_classes = {"gpu-2x"};
  std::vector<PendingFix> fixes = FindFixes(Inputs());
  // Only the pool's max_size is left (gpu-4x finds no room either).
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].kind, FixKind::kRaisePoolMaxSize);
}

TEST_F(FixesTest, WaitsForCapacityOnItsWay) {
  AddNode("h1", core::NodeState::kReady, core::DriverState::kInstalling);
  classes_.resize(1);
  std::vector<PendingFix> fixes = FindFixes(Inputs());
  // A larger pool would not help: it waits for that node either way (the
  // nearest layer holds it).
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].kind, FixKind::kWait);
  EXPECT_EQ(fixes[0].wait_for, PendingCode::kDriverInstalling);
  EXPECT_EQ(fixes[0].node, "h1");
  EXPECT_THAT(fixes[0].detail, HasSubstr("wait: waiting for the driver install on node h1"));
}

TEST_F(FixesTest, AScaleUpUnderWayIsHelpedOnlyByRoomNow) {
  AddNode("h1");
  Hold("h1", 5);
  pools_[0].max_size = 3;  // Room for a new node: a scale-up is started already.
  std::vector<PendingFix> fixes = FindFixes(Inputs());
  ASSERT_EQ(fixes.size(), 2u);
  EXPECT_EQ(fixes[0].kind, FixKind::kWait);
  EXPECT_EQ(fixes[0].wait_for, PendingCode::kScaleUpNotYetRequested);
  EXPECT_EQ(fixes[1].class_id, "gpu-2x");  // Room now; no bigger max_size is offered.
}

TEST_F(FixesTest, TheBoundCapsTheRuns) {
  AddNode("h1");
  Hold("h1", 1);
  for (int i = 0; i < 6; ++i) AddNode(absl::StrCat("c", i), core::NodeState::kCordoned);
  pools_[0].max_size = 7;
  classes_.resize(1);
  // One run for the reason now, one for the first cordoned node: the rest
  // is not tried.
  std::vector<PendingFix> fixes = FindFixes(Inputs(), {.max_trials = 2});
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].node, "c0");
}

TEST_F(FixesTest, StopsTheLongestIdleWorkspaceWhoseStopLetsItGo) {
  AddNode("h1");
  AddNode("h2");
  AddNode("h3");
  pools_[0].max_size = 3;
  HoldIdle("idle-recent", "h1", 8, kNow - absl::Minutes(1));
  HoldIdle("idle-small", "h2", 2, kNow - absl::Hours(2));  // Longest idle, frees too little.
  ASSERT_TRUE(snapshot_.Hold("busy-on-h2", "h2", {2, 3, 4, 5}, {}).ok());
  HoldIdle("idle-old", "h3", 8, kNow - absl::Minutes(10));
  quota_ = QuotaFigures{.held_sevenths = 18 * 7, .quota = 18};
  classes_.resize(1);
  // The read side decides on a view's copy, which has no hold records.
  const Snapshot view = snapshot_.NodesOnly();
  FixInputs in = Inputs();
  in.pending.snapshot = &view;
  std::vector<PendingFix> fixes = FindFixes(in);
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].kind, FixKind::kStopIdleWorkspace);
  EXPECT_EQ(fixes[0].workspace_id, "idle-old");
  EXPECT_EQ(fixes[0].project_id, "p-1");
  EXPECT_EQ(fixes[0].idle_for, absl::Minutes(10));
  EXPECT_EQ(fixes[0].applier, FixApplier::kProjectOwner);  // The same project.
  EXPECT_EQ(fixes[0].outcome.code, PendingCode::kQueued);
  EXPECT_EQ(fixes[0].outcome.node, "h3");
  EXPECT_THAT(fixes[0].detail,
              HasSubstr("stop workspace idle-old of project p-1 (its GPUs idle for 10m)"));
  // Applied: its GPUs are free on the copy and back in the org's quota.
  FixedInputs fixed(in, fixes[0]);
  EXPECT_EQ(fixed.pending().snapshot->FindNode("h3")->free_gpus[0], 8);
  EXPECT_EQ(fixed.pending().quota->held_sevenths, 10 * 7);
  EXPECT_EQ(view.FindNode("h3")->free_gpus[0], 0) << "the view itself is left alone";
}

TEST_F(FixesTest, AnIdleWorkspaceOfAnotherProjectIsTheOrgAdminsToStop) {
  AddNode("h1");
  HoldIdle("idle-1", "h1", 8, kNow - absl::Minutes(3), "p-2");
  classes_.resize(1);
  std::vector<PendingFix> fixes = FindFixes(Inputs());
  ASSERT_FALSE(fixes.empty());
  EXPECT_EQ(fixes[0].kind, FixKind::kStopIdleWorkspace);
  EXPECT_EQ(fixes[0].project_id, "p-2");
  EXPECT_EQ(fixes[0].applier, FixApplier::kOrgAdmin);
}

TEST_F(FixesTest, AnotherOrgsIdleWorkspaceIsNeverOffered) {
  AddNode("h1");
  HoldIdle("theirs", "h1", 8, kNow - absl::Hours(1), "p-1", "o-2");
  classes_.resize(1);
  for (const PendingFix& fix : FindFixes(Inputs())) {
    EXPECT_NE(fix.kind, FixKind::kStopIdleWorkspace) << fix.detail;
  }
}

TEST_F(FixesTest, StoppingAnIdleWorkspaceRanksAfterUncordonAndBeforeMaxSize) {
  AddNode("h1");
  AddNode("h2", core::NodeState::kCordoned);
  pools_[0].max_size = 2;
  HoldIdle("idle-1", "h1", 8, kNow - absl::Minutes(5));
  classes_.resize(1);
  std::vector<PendingFix> fixes = FindFixes(Inputs());
  ASSERT_EQ(fixes.size(), 3u);
  EXPECT_EQ(fixes[0].kind, FixKind::kUncordonNode);
  EXPECT_EQ(fixes[1].kind, FixKind::kStopIdleWorkspace);
  EXPECT_EQ(fixes[1].outcome.node, "h1");
  EXPECT_EQ(fixes[2].kind, FixKind::kRaisePoolMaxSize);
}

TEST_F(FixesTest, StoppingAnIdleWorkspaceRanksBeforeAQuotaRaise) {
  AddNode("h1");
  AddNode("h2");
  pools_[0].max_size = 2;
  HoldIdle("idle-1", "h1", 8, kNow - absl::Minutes(5));
  quota_ = QuotaFigures{.held_sevenths = 8 * 7, .quota = 8};  // h2 is free, the quota is not.
  classes_.resize(1);
  std::vector<PendingFix> fixes = FindFixes(Inputs());
  ASSERT_EQ(fixes.size(), 2u);
  EXPECT_EQ(fixes[0].kind, FixKind::kStopIdleWorkspace);
  EXPECT_EQ(fixes[1].kind, FixKind::kRaiseOrgGpuQuota);
  EXPECT_EQ(fixes[1].gpu_quota, 16);
}

}  // namespace
}  // namespace wsched::placement
