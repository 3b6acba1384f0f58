#include "server/placement/fixes.h"

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/class_resolution.h"
#include "server/placement/decide.h"
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
  core::ProjectSettings project_;
  core::OrgSettings org_;
  std::vector<IdleWorkspace> idle_;
};

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

// --- Generated states ---------------------------------------------------

struct World {
  std::vector<core::NodePool> pools;
  std::vector<core::WorkspaceClass> classes;
  std::vector<core::DriverPolicyEntry> policy;
  Snapshot snapshot;
  FixInputs in;
};

// A small random cluster: 1-2 pools of 4-GPU nodes (h100, a100), up to 3
// nodes each in random states with random GPUs held, 3 classes of 1-4
// GPUs, a queue of up to 3 ahead, maybe a quota, random policies, maybe a
// scaler signal.
void Generate(std::mt19937& rng, World& w) {
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  const char* models[] = {"h100", "a100"};
  const int pool_count = 1 + pick(2);
  for (int p = 0; p < pool_count; ++p) {
    core::NodePool pool = GpuPool(absl::StrCat("pool-", p), models[p], 4);
    pool.max_size = 1 + pick(3);
    w.pools.push_back(pool);
  }
  const core::NodeState states[] = {core::NodeState::kReady, core::NodeState::kReady,
                                    core::NodeState::kCordoned, core::NodeState::kProvisioning};
  const core::DriverState drivers[] = {core::DriverState::kReady, core::DriverState::kReady,
                                       core::DriverState::kInstalling,
                                       core::DriverState::kInstallFailed};
  int held = 0;
  for (int p = 0; p < pool_count; ++p) {
    const int nodes = pick(4);
    for (int n = 0; n < nodes; ++n) {
      const std::string name = absl::StrCat("n", p, "-", n);
      ASSERT_TRUE(w.snapshot
                      .UpsertNode(FakeGpuNode(name, w.pools[p].id, models[p], 4), states[pick(4)],
                                  drivers[pick(4)], kNow)
                      .ok());
      std::vector<int> gpus;
      for (int g = 0; g < 4; ++g) {
        if (pick(2) == 0) gpus.push_back(g);
      }
      if (!gpus.empty()) {
        const std::string holder = absl::StrCat("w", held++);
        ASSERT_TRUE(w.snapshot.Hold(holder, name, gpus, {}).ok());
        // Some holders are idle: of this org (this project or another) or
        // of another org, idle for up to an hour.
        if (pick(2) == 0) {
          w.in.idle.push_back({holder, pick(4) == 0 ? "o-2" : "o-1", pick(2) == 0 ? "p-1" : "p-2",
                               kNow - absl::Minutes(pick(60)), *w.snapshot.FindHold(holder),
                               static_cast<int64_t>(gpus.size()) * 7});
        }
      }
    }
  }
  const int counts[] = {1, 2, 3, 4};
  for (int c = 0; c < 3; ++c) {
    std::vector<std::string> class_models = {models[pick(2)]};
    if (pick(2) == 0) class_models.push_back(models[pick(2)]);
    if (class_models.size() == 2 && class_models[0] == class_models[1]) class_models.pop_back();
    core::WorkspaceClass cls = GpuClass(absl::StrCat("c", c), counts[pick(4)], class_models);
    cls.credits_per_minute_milli = 1000 * (1 + pick(5));
    w.classes.push_back(cls);
  }
  FixInputs& in = w.in;
  in.pending.cls = &w.classes[pick(3)];
  in.pending.pools = &w.pools;
  in.pending.snapshot = &w.snapshot;
  in.pending.driver_policy = &w.policy;
  const int ahead = pick(4);
  for (int i = 0; i < ahead; ++i) in.pending.ahead.push_back(&w.classes[pick(3)]);
  in.pending.queue_position = ahead + 1;
  in.pending.now = kNow;
  if (pick(2) == 0) {
    in.pending.quota = QuotaFigures{.held_sevenths = 7 * pick(6), .quota = pick(8)};
  }
  if (pick(3) == 0) {
    const core::NodePool& pool = w.pools[pick(pool_count)];
    PoolScalingView scaling;
    scaling.has_signal = true;
    scaling.current_size = pick(3);
    scaling.target_size = scaling.current_size + pick(2);
    in.pending.scaling[pool.id] = scaling;
  }
  in.classes = &w.classes;
  in.org.org_id = "o-1";
  in.project.project_id = "p-1";
  for (const core::WorkspaceClass& cls : w.classes) {
    if (pick(4) == 0) in.project.denied_classes.push_back(cls.id);
  }
  if (pick(3) == 0) in.org.allowed_classes = {w.classes[pick(3)].id, w.classes[pick(3)].id};
  in.pending.policy_denial = core::ForbiddingRule(in.pending.cls->id, in.project, in.org);
}

PendingReason Outcome(const FixInputs& in, const PendingFix& fix) {
  FixedInputs fixed(in, fix);
  return ExplainPending(fixed.pending());
}

bool Works(const FixInputs& in, const PendingReason& base, PendingFix fix) {
  PendingReason after = Outcome(in, fix);
  if (base.code == PendingCode::kScaleUpRequested ||
      base.code == PendingCode::kScaleUpNotYetRequested) {
    return after.code == PendingCode::kQueued;
  }
  return LetsItGo(after);
}

// Every candidate of each kind, tried without the finder: what the
// returned fixes must agree with.
struct Exhaustive {
  std::vector<std::string> classes;     // Every class that works.
  std::vector<std::string> nodes;       // Every cordoned node that works.
  std::optional<int64_t> quota;         // The smallest quota that works.
  std::map<std::string, int> max_size;  // Per pool, the smallest that works.
  std::optional<std::string> idle;      // The org's longest-idle one whose stop works.
};

Exhaustive TryEverything(const World& w, const PendingReason& base) {
  const FixInputs& in = w.in;
  Exhaustive all;
  for (const core::WorkspaceClass& cls : w.classes) {
    const core::WorkspaceClass& own = *in.pending.cls;
    if (cls.id == own.id || core::ForbiddingRule(cls.id, in.project, in.org)) continue;
    PendingFix fix{.kind = FixKind::kUseClass, .class_id = cls.id};
    if (Works(in, base, fix)) all.classes.push_back(cls.id);
  }
  w.snapshot.ForEachNode([&](const SnapshotNode& node) {
    if (node.state != core::NodeState::kCordoned) return;
    if (Works(in, base, {.kind = FixKind::kUncordonNode, .node = node.info.name})) {
      all.nodes.push_back(node.info.name);
    }
  });
  if (in.pending.quota && base.code == PendingCode::kOrgGpuQuota) {
    for (int64_t q = in.pending.quota->quota + 1; q <= in.pending.quota->quota + 12; ++q) {
      if (Works(in, base, {.kind = FixKind::kRaiseOrgGpuQuota, .gpu_quota = q})) {
        all.quota = q;
        break;
      }
    }
  }
  std::vector<IdleWorkspace> idle = in.idle;
  std::sort(idle.begin(), idle.end(), [](const IdleWorkspace& a, const IdleWorkspace& b) {
    return std::tie(a.idle_since, a.workspace_id) < std::tie(b.idle_since, b.workspace_id);
  });
  for (const IdleWorkspace& candidate : idle) {
    if (candidate.org_id != in.org.org_id) continue;
    if (Works(in, base,
              {.kind = FixKind::kStopIdleWorkspace, .workspace_id = candidate.workspace_id})) {
      all.idle = candidate.workspace_id;
      break;
    }
  }
  for (const core::NodePool& pool : w.pools) {
    for (int k = pool.max_size + 1; k <= pool.max_size + 10; ++k) {
      if (Works(in, base, {.kind = FixKind::kRaisePoolMaxSize, .pool = pool.id, .max_size = k})) {
        all.max_size[pool.id] = k;
        break;
      }
    }
  }
  std::sort(all.classes.begin(), all.classes.end());
  std::sort(all.nodes.begin(), all.nodes.end());
  return all;
}

TEST(FixesPropertyTest, EveryFixWorksAndNoneIsMissed) {
  std::mt19937 rng(20261205);
  int with_fixes = 0, without = 0, queued = 0, stops = 0;
  for (int round = 0; round < 3000; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    World w;
    Generate(rng, w);
    if (::testing::Test::HasFatalFailure()) return;
    const PendingReason base = ExplainPending(w.in.pending);
    // Large enough that the bound never cuts these small states short.
    const FixLimits everything{.max_fixes = 100,
                               .max_trials = 1000,
                               .max_classes = 100,
                               .max_nodes = 100,
                               .max_idle = 100};
    const std::vector<PendingFix> all = FindFixes(w.in, everything);
    // The default bound but every idle workspace, as in `all`.
    const std::vector<PendingFix> shown = FindFixes(w.in, {.max_idle = everything.max_idle});

    if (base.code == PendingCode::kQueued) {
      ++queued;
      EXPECT_THAT(all, IsEmpty());
      continue;
    }
    (all.empty() ? without : with_fixes) += 1;

    for (const PendingFix& fix : all) {
      SCOPED_TRACE(fix.detail);
      const PendingReason after = Outcome(w.in, fix);
      EXPECT_EQ(after, fix.outcome);
      if (fix.kind == FixKind::kWait) {
        EXPECT_EQ(after, base);
        EXPECT_NE(base.code, PendingCode::kOrgGpuQuota);
        continue;
      }
      EXPECT_TRUE(Works(w.in, base, fix));
      // Placeable now, with nothing ahead: the decision itself places it.
      if (after.code == PendingCode::kQueued && w.in.pending.ahead.empty()) {
        FixedInputs fixed(w.in, fix);
        EXPECT_TRUE(std::holds_alternative<Placed>(
            Decide(*fixed.pending().cls, *fixed.pending().pools, *fixed.pending().snapshot)));
      }
    }

    // The same set as trying every candidate by hand, the smallest raise.
    const Exhaustive expected = TryEverything(w, base);
    std::vector<std::string> classes, nodes;
    std::optional<int64_t> quota;
    std::map<std::string, int> max_size;
    std::optional<std::string> idle;
    for (const PendingFix& fix : all) {
      if (fix.kind == FixKind::kStopIdleWorkspace) {
        EXPECT_FALSE(idle) << "one idle workspace is offered at most";
        idle = fix.workspace_id;
      }
      if (fix.kind == FixKind::kUseClass) classes.push_back(fix.class_id);
      if (fix.kind == FixKind::kUncordonNode) nodes.push_back(fix.node);
      if (fix.kind == FixKind::kRaiseOrgGpuQuota) quota = fix.gpu_quota;
      if (fix.kind == FixKind::kRaisePoolMaxSize) max_size[fix.pool] = fix.max_size;
    }
    std::sort(classes.begin(), classes.end());
    std::sort(nodes.begin(), nodes.end());
    EXPECT_EQ(classes, expected.classes);
    EXPECT_EQ(nodes, expected.nodes);
    EXPECT_EQ(quota, expected.quota);
    EXPECT_EQ(max_size, expected.max_size);
    EXPECT_EQ(idle, expected.idle);
    if (idle) ++stops;

    // Least change first; what is shown is the head of it.
    for (size_t i = 1; i < all.size(); ++i) EXPECT_LE(all[i - 1].kind, all[i].kind);
    ASSERT_EQ(shown.size(), std::min<size_t>(all.size(), 3));
    for (size_t i = 0; i < shown.size(); ++i) EXPECT_EQ(shown[i], all[i]);
  }
  // The generator reaches every branch.
  EXPECT_GT(with_fixes, 100);
  EXPECT_GT(without, 100);
  EXPECT_GT(queued, 100);
  EXPECT_GT(stops, 50);
}

}  // namespace
}  // namespace wsched::placement
