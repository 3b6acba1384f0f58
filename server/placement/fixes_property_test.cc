// Properties of FindFixes on generated states (docs/placement.md "What
// would it take"): every fix it returns lets the workspace go once applied
// and says what happens; the least change comes first, within a kind the
// smallest; a search of every candidate finds no fix it missed; a QUEUED
// workspace gets none; the bound on trials holds.
//
// Seeded: case i is generated from seed kSeed + i, and a failure names its
// seed. Rerun one case alone with WSCHED_FIXES_SEED=<seed>
// WSCHED_FIXES_CASES=1 build/bin/placement_test --gtest_filter='FixesPropertyTest.*'
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/class_resolution.h"
#include "server/placement/decide.h"
#include "server/placement/fixes.h"
#include "server/placement/test_nodes.h"

namespace wsched::placement {
namespace {

using testing::FakeGpuNode;
using testing::GpuClass;
using testing::GpuPool;
using ::testing::IsEmpty;

const absl::Time kNow = absl::FromUnixSeconds(1800000000);
constexpr uint32_t kSeed = 20261205;
constexpr int kCases = 3000;

// Larger than any generated state needs: the bound never cuts it short.
constexpr FixLimits kEverything{
    .max_fixes = 1000, .max_trials = 100000, .max_classes = 1000, .max_nodes = 1000,
    .max_idle = 1000};

// How far past the current figures the search by hand looks: beyond the
// finder's own ceiling (every node a pool has or may have, plus one per
// workspace ahead and one), so a fix above that ceiling would be found.
constexpr int kQuotaSearch = 40;
constexpr int kMaxSizeSearch = 12;

uint32_t EnvOr(const char* name, uint32_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? static_cast<uint32_t>(std::strtoul(value, nullptr, 10)) : fallback;
}

struct World {
  std::vector<core::NodePool> pools;
  std::vector<core::WorkspaceClass> classes;
  std::vector<core::DriverPolicyEntry> policy;
  Snapshot snapshot;
  FixInputs in;
};

class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {}

  // A small cluster: 1-3 pools of 4- or 8-GPU nodes (h100, a100) with a
  // max_size of 1-3, up to 4 nodes each in random states (ready, cordoned,
  // provisioning; driver installing or failed) with random GPUs held; 3-5
  // classes of 1-8 GPUs, some deprecated or VMs; a queue of up to 4 ahead;
  // maybe an org quota; random policies; maybe a scaler signal.
  void Fill(World& w) {
    AddPools(w);
    AddNodes(w);
    AddClasses(w);
    FixInputs& in = w.in;
    in.pending.cls = &w.classes[Pick(w.classes.size())];
    in.pending.pools = &w.pools;
    in.pending.snapshot = &w.snapshot;
    in.pending.driver_policy = &w.policy;
    const int ahead = Pick(5);
    for (int i = 0; i < ahead; ++i) in.pending.ahead.push_back(&w.classes[Pick(w.classes.size())]);
    in.pending.queue_position = ahead + 1;
    in.pending.now = kNow;
    if (Pick(2) == 0) {
      in.pending.quota = QuotaFigures{.held_sevenths = 7 * Pick(10), .quota = Pick(12)};
    }
    if (Pick(3) == 0) {
      PoolScalingView scaling;
      scaling.has_signal = true;
      scaling.current_size = Pick(3);
      scaling.target_size = scaling.current_size + Pick(2);
      in.pending.scaling[w.pools[Pick(w.pools.size())].id] = scaling;
    }
    in.classes = &w.classes;
    in.org.org_id = "o-1";
    in.project.project_id = "p-1";
    in.project.org_id = "o-1";
    for (const core::WorkspaceClass& cls : w.classes) {
      if (Pick(4) == 0) in.project.denied_classes.push_back(cls.id);
    }
    if (Pick(3) == 0) {
      in.org.allowed_classes = {w.classes[Pick(w.classes.size())].id,
                                w.classes[Pick(w.classes.size())].id};
    }
    in.pending.policy_denial = core::ForbiddingRule(in.pending.cls->id, in.project, in.org);
    // Maybe spending limits: GPU-seconds of the order of what a first
    // minute of 1-4 GPUs commits to, the project's within the org's.
    if (Pick(3) == 0) {
      const int64_t org_limit = (60 + Pick(400)) * core::kGpuMicrosPerGpuSecond;
      const int64_t org_spent = Pick(400) * core::kGpuMicrosPerGpuSecond;
      in.pending.budgets.push_back(
          {"org", "o-1", org_limit, org_spent, absl::Minutes(1), kNow + absl::Hours(1)});
      if (Pick(2) == 0) {
        const int64_t limit =
            (1 + Pick(static_cast<size_t>(org_limit / core::kGpuMicrosPerGpuSecond))) *
            core::kGpuMicrosPerGpuSecond;
        const int64_t spent =
            Pick(static_cast<size_t>(org_spent / core::kGpuMicrosPerGpuSecond) + 1) *
            core::kGpuMicrosPerGpuSecond;
        in.pending.budgets.push_back(
            {"project", "p-1", limit, spent, absl::Minutes(1), kNow + absl::Hours(1)});
      }
    }
  }

 private:
  int Pick(size_t n) { return static_cast<int>(rng_() % n); }

  void AddPools(World& w) {
    const int count = 1 + Pick(3);
    for (int p = 0; p < count; ++p) {
      core::NodePool pool =
          GpuPool(absl::StrCat("pool-", p), kModels[Pick(2)], Pick(2) == 0 ? 4 : 8);
      pool.max_size = 1 + Pick(3);
      w.pools.push_back(pool);
    }
  }

  void AddNodes(World& w) {
    const core::NodeState states[] = {core::NodeState::kReady, core::NodeState::kReady,
                                      core::NodeState::kCordoned, core::NodeState::kProvisioning};
    const core::DriverState drivers[] = {core::DriverState::kReady, core::DriverState::kReady,
                                         core::DriverState::kReady, core::DriverState::kInstalling,
                                         core::DriverState::kInstallFailed};
    int held = 0;
    for (const core::NodePool& pool : w.pools) {
      const int nodes = Pick(5);
      for (int n = 0; n < nodes; ++n) {
        const std::string name = absl::StrCat(pool.id, "-n", n);
        const int gpus = pool.shape.gpus_per_node;
        ASSERT_TRUE(w.snapshot
                        .UpsertNode(FakeGpuNode(name, pool.id, pool.shape.gpu_model, gpus),
                                    states[Pick(4)], drivers[Pick(5)], kNow)
                        .ok());
        std::vector<int> taken;
        for (int g = 0; g < gpus; ++g) {
          if (Pick(2) == 0) taken.push_back(g);
        }
        if (!taken.empty()) {
          const std::string holder = absl::StrCat("w", held++);
          ASSERT_TRUE(w.snapshot.Hold(holder, name, taken, {}).ok());
          // Some holders are idle: of this org (this project or another) or
          // of another org, idle for up to an hour.
          if (Pick(2) == 0) {
            w.in.idle.push_back({holder, Pick(4) == 0 ? "o-2" : "o-1",
                                 Pick(2) == 0 ? "p-1" : "p-2", kNow - absl::Minutes(Pick(60)),
                                 *w.snapshot.FindHold(holder),
                                 static_cast<int64_t>(taken.size()) * 7});
          }
        }
      }
    }
  }

  void AddClasses(World& w) {
    const int counts[] = {1, 2, 3, 4, 8};
    const int count = 3 + Pick(3);
    for (int c = 0; c < count; ++c) {
      std::vector<std::string> models = {kModels[Pick(2)]};
      if (Pick(2) == 0 && models[0] != kModels[1]) models.push_back(kModels[1]);
      core::WorkspaceClass cls = GpuClass(absl::StrCat("c", c), counts[Pick(5)], models);
      cls.credits_per_minute_milli = 1000 * (1 + Pick(5));
      cls.deprecated = Pick(8) == 0;
      if (Pick(8) == 0) cls.gpu.isolation = core::Isolation::kVm;
      w.classes.push_back(cls);
    }
  }

  static constexpr const char* kModels[] = {"h100", "a100"};
  std::mt19937 rng_;
};

PendingReason Outcome(const FixInputs& in, const PendingFix& fix) {
  FixedInputs fixed(in, fix);
  return ExplainPending(fixed.pending());
}

bool IsScaleUp(PendingCode code) {
  return code == PendingCode::kScaleUpRequested || code == PendingCode::kScaleUpNotYetRequested;
}

// What a fix must achieve: let the workspace go, or, when a scale-up is
// already started for it, give it room now.
bool Works(const FixInputs& in, const PendingReason& base, const PendingFix& fix) {
  const PendingReason after = Outcome(in, fix);
  return IsScaleUp(base.code) ? after.code == PendingCode::kQueued : LetsItGo(after);
}

// A class the workspace may take instead (fixes.h): the same isolation and
// kind, not deprecated, allowed by the policies.
bool MayTake(const FixInputs& in, const core::WorkspaceClass& cls) {
  const core::WorkspaceClass& own = *in.pending.cls;
  return cls.id != own.id && !cls.deprecated && cls.gpu.isolation == own.gpu.isolation &&
         cls.is_gpu() == own.is_gpu() && cls.is_slice() == own.is_slice() &&
         !core::ForbiddingRule(cls.id, in.project, in.org);
}

const core::WorkspaceClass* FindClass(const World& w, const std::string& id) {
  for (const core::WorkspaceClass& cls : w.classes) {
    if (cls.id == id) return &cls;
  }
  return nullptr;
}

// Every candidate of each kind, tried by hand over a larger space than the
// finder's: what the returned fixes must agree with.
struct Exhaustive {
  std::vector<std::string> classes;     // Every class that works.
  std::vector<std::string> nodes;       // Every cordoned node that works.
  std::optional<int64_t> quota;         // The smallest quota that works.
  std::map<std::string, int> max_size;  // Per pool, the smallest that works.
  // Per spending limit's scope, the smallest limit that works.
  std::map<std::string, int64_t> spending;
  std::optional<std::string> idle;  // The org's longest-idle one whose stop works.
  friend bool operator==(const Exhaustive&, const Exhaustive&) = default;
};

// The smallest limit of `budget` that lets it go, searched between one
// above its limit and `top` (a larger limit never holds back what a
// smaller one let go); nullopt when not even `top` does.
std::optional<int64_t> SmallestSpendingLimit(const FixInputs& in, const PendingReason& base,
                                             const core::BudgetStanding& budget, int64_t top) {
  auto works = [&](int64_t limit) {
    return Works(in, base,
                 {.kind = FixKind::kRaiseSpendingLimit,
                  .spending_scope = budget.scope,
                  .spending_limit = limit});
  };
  int64_t low = budget.limit + 1, high = top;
  if (high < low || !works(high)) return std::nullopt;
  while (low < high) {
    const int64_t mid = low + (high - low) / 2;
    if (works(mid)) {
      high = mid;
    } else {
      low = mid + 1;
    }
  }
  return high;
}

Exhaustive TryEverything(const World& w, const PendingReason& base) {
  const FixInputs& in = w.in;
  Exhaustive all;
  for (const core::WorkspaceClass& cls : w.classes) {
    if (!MayTake(in, cls)) continue;
    if (Works(in, base, {.kind = FixKind::kUseClass, .class_id = cls.id})) {
      all.classes.push_back(cls.id);
    }
  }
  w.snapshot.ForEachNode([&](const SnapshotNode& node) {
    if (node.state != core::NodeState::kCordoned) return;
    if (Works(in, base, {.kind = FixKind::kUncordonNode, .node = node.info.name})) {
      all.nodes.push_back(node.info.name);
    }
  });
  if (in.pending.quota && base.code == PendingCode::kOrgGpuQuota) {
    const int64_t now = in.pending.quota->quota;
    for (int64_t q = now + 1; q <= now + kQuotaSearch && !all.quota; ++q) {
      if (Works(in, base, {.kind = FixKind::kRaiseOrgGpuQuota, .gpu_quota = q})) all.quota = q;
    }
  }
  for (const core::NodePool& pool : w.pools) {
    for (int k = pool.max_size + 1; k <= pool.max_size + kMaxSizeSearch; ++k) {
      if (Works(in, base, {.kind = FixKind::kRaisePoolMaxSize, .pool = pool.id, .max_size = k})) {
        all.max_size[pool.id] = k;
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
  if (base.code == PendingCode::kBudgetExhausted) {
    int64_t org_limit = int64_t{1} << 50;  // No org limit: far more than any spent here.
    for (const core::BudgetStanding& budget : in.pending.budgets) {
      if (budget.scope == "org") org_limit = budget.limit;
    }
    for (const core::BudgetStanding& budget : in.pending.budgets) {
      // A project's limit may not exceed its org's.
      const int64_t top = budget.scope == "project" ? org_limit : int64_t{1} << 50;
      if (auto limit = SmallestSpendingLimit(in, base, budget, top)) {
        all.spending[budget.scope] = *limit;
      }
    }
  }
  std::sort(all.classes.begin(), all.classes.end());
  std::sort(all.nodes.begin(), all.nodes.end());
  return all;
}

// The same summary of what FindFixes returned.
Exhaustive Summarize(const std::vector<PendingFix>& fixes) {
  Exhaustive found;
  for (const PendingFix& fix : fixes) {
    if (fix.kind == FixKind::kUseClass) found.classes.push_back(fix.class_id);
    if (fix.kind == FixKind::kUncordonNode) found.nodes.push_back(fix.node);
    if (fix.kind == FixKind::kRaiseOrgGpuQuota) found.quota = fix.gpu_quota;
    if (fix.kind == FixKind::kRaisePoolMaxSize) found.max_size[fix.pool] = fix.max_size;
    if (fix.kind == FixKind::kRaiseSpendingLimit) found.spending[fix.spending_scope] = fix.spending_limit;
    if (fix.kind == FixKind::kStopIdleWorkspace) {
      EXPECT_FALSE(found.idle) << "one idle workspace is offered at most";
      found.idle = fix.workspace_id;
    }
  }
  std::sort(found.classes.begin(), found.classes.end());
  std::sort(found.nodes.begin(), found.nodes.end());
  return found;
}

FixApplier ApplierOf(const FixInputs& in, const PendingFix& fix) {
  switch (fix.kind) {
    case FixKind::kStopIdleWorkspace:  // Its own project's owner, else the org admin.
      return fix.project_id == in.project.project_id ? FixApplier::kProjectOwner
                                                     : FixApplier::kOrgAdmin;
    case FixKind::kWait:
    case FixKind::kUseClass:
      return FixApplier::kProjectOwner;
    case FixKind::kRaiseOrgGpuQuota:
    case FixKind::kRaiseSpendingLimit:  // Only an admin sets a project's limit too.
      return FixApplier::kOrgAdmin;
    case FixKind::kUncordonNode:
    case FixKind::kRaisePoolMaxSize:
      return FixApplier::kAdmin;
  }
  return FixApplier::kAdmin;
}

// Applied with FixedInputs, the fix gives the outcome it states, and that
// outcome lets the workspace go (a wait changes nothing and names what is
// on its way).
void ExpectProven(const World& w, const PendingReason& base, const PendingFix& fix) {
  SCOPED_TRACE(fix.detail);
  const PendingReason after = Outcome(w.in, fix);
  EXPECT_EQ(after, fix.outcome);
  EXPECT_EQ(fix.applier, ApplierOf(w.in, fix));
  if (fix.kind == FixKind::kWait) {
    EXPECT_EQ(after, base);
    EXPECT_EQ(fix.wait_for, base.code);
    return;
  }
  EXPECT_TRUE(Works(w.in, base, fix));
  // Placeable now with nothing ahead: the decision itself places it.
  if (after.code == PendingCode::kQueued && w.in.pending.ahead.empty()) {
    FixedInputs fixed(w.in, fix);
    EXPECT_TRUE(std::holds_alternative<Placed>(
        Decide(*fixed.pending().cls, *fixed.pending().pools, *fixed.pending().snapshot)));
  }
}

// Least change first; within a kind the smaller change first (classes:
// the nearest GPU count, then the lower price).
void ExpectRankOrder(const FixInputs& in, const std::vector<PendingFix>& fixes) {
  const int own = in.pending.cls->gpu.count;
  auto class_rank = [&](const PendingFix& fix) {
    for (const core::WorkspaceClass& cls : *in.classes) {
      if (cls.id == fix.class_id) {
        return std::pair(std::abs(cls.gpu.count - own), cls.credits_per_minute_milli);
      }
    }
    ADD_FAILURE() << "unknown class " << fix.class_id;
    return std::pair(0, int64_t{0});
  };
  for (size_t i = 1; i < fixes.size(); ++i) {
    const PendingFix& a = fixes[i - 1];
    const PendingFix& b = fixes[i];
    ASSERT_LE(a.kind, b.kind) << a.detail << " before " << b.detail;
    if (a.kind != b.kind) continue;
    EXPECT_LE(a.raise_by, b.raise_by) << a.detail << " before " << b.detail;
    if (a.kind == FixKind::kUseClass) {
      EXPECT_LE(class_rank(a), class_rank(b)) << a.detail << " before " << b.detail;
    }
  }
}

// The smallest raise: one less does not let it go.
void ExpectSmallest(const FixInputs& in, const PendingReason& base, const PendingFix& fix) {
  if (fix.kind == FixKind::kRaiseOrgGpuQuota && fix.raise_by > 1) {
    EXPECT_FALSE(Works(in, base, {.kind = fix.kind, .gpu_quota = fix.gpu_quota - 1})) << fix.detail;
  }
  if (fix.kind == FixKind::kRaisePoolMaxSize && fix.raise_by > 1) {
    EXPECT_FALSE(
        Works(in, base, {.kind = fix.kind, .pool = fix.pool, .max_size = fix.max_size - 1}))
        << fix.detail;
  }
  if (fix.kind == FixKind::kRaiseSpendingLimit) {
    PendingFix less = fix;
    less.spending_limit -= 1;
    EXPECT_FALSE(Works(in, base, less)) << fix.detail;
  }
}

// Under a bound of `trials` runs: each run proves at most one fix (and the
// first is the reason now), every fix offered is still proven, and nothing
// is offered that the unbounded search would not (a max_size search cut
// short may offer a larger size than the smallest, never a smaller one).
void ExpectBounded(const World& w, const PendingReason& base, const Exhaustive& unbounded,
                   int trials) {
  SCOPED_TRACE(absl::StrCat("max_trials ", trials));
  FixLimits limits = kEverything;
  limits.max_trials = trials;
  const std::vector<PendingFix> fixes = FindFixes(w.in, limits);
  if (trials == 0) {
    EXPECT_THAT(fixes, IsEmpty());
  }
  int changes = 0;
  for (const PendingFix& fix : fixes) {
    ExpectProven(w, base, fix);
    if (fix.kind == FixKind::kWait) continue;
    ++changes;
    const auto& classes = unbounded.classes;
    const auto& nodes = unbounded.nodes;
    switch (fix.kind) {
      case FixKind::kUseClass:
        EXPECT_NE(std::find(classes.begin(), classes.end(), fix.class_id), classes.end());
        break;
      case FixKind::kUncordonNode:
        EXPECT_NE(std::find(nodes.begin(), nodes.end(), fix.node), nodes.end());
        break;
      case FixKind::kRaiseOrgGpuQuota:
        EXPECT_EQ(std::optional(fix.gpu_quota), unbounded.quota);
        break;
      case FixKind::kRaisePoolMaxSize:
        ASSERT_TRUE(unbounded.max_size.contains(fix.pool)) << fix.detail;
        EXPECT_GE(fix.max_size, unbounded.max_size.at(fix.pool));
        break;
      case FixKind::kStopIdleWorkspace:
        EXPECT_EQ(std::optional(fix.workspace_id), unbounded.idle) << fix.detail;
        break;
      case FixKind::kRaiseSpendingLimit:
        ASSERT_TRUE(unbounded.spending.contains(fix.spending_scope)) << fix.detail;
        EXPECT_EQ(fix.spending_limit, unbounded.spending.at(fix.spending_scope));
        break;
      case FixKind::kWait:
        break;
    }
  }
  EXPECT_LE(changes, std::max(trials - 1, 0));
}

struct Tally {
  int queued = 0;
  int with_fixes = 0;
  int without = 0;
  std::map<FixKind, int> kinds;
};

void CheckCase(uint32_t seed, Tally& tally) {
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  World w;
  Generator(seed).Fill(w);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  const PendingReason base = ExplainPending(w.in.pending);
  const std::vector<PendingFix> all = FindFixes(w.in, kEverything);
  // The default bound, but every idle workspace, as in `all`.
  const std::vector<PendingFix> shown = FindFixes(w.in, {.max_idle = kEverything.max_idle});
  if (base.code == PendingCode::kQueued) {
    ++tally.queued;
    EXPECT_THAT(all, IsEmpty());
    EXPECT_THAT(shown, IsEmpty());
    return;
  }
  (all.empty() ? tally.without : tally.with_fixes) += 1;
  for (const PendingFix& fix : all) {
    ++tally.kinds[fix.kind];
    ExpectProven(w, base, fix);
    ExpectSmallest(w.in, base, fix);
    if (fix.kind == FixKind::kUseClass) {
      const core::WorkspaceClass* cls = FindClass(w, fix.class_id);
      EXPECT_TRUE(cls != nullptr && MayTake(w.in, *cls)) << fix.detail;
    }
    EXPECT_TRUE(fix.kind != FixKind::kWait || base.code != PendingCode::kOrgGpuQuota);
  }
  ExpectRankOrder(w.in, all);
  // Nothing missed, nothing extra, the smallest raise of each.
  const Exhaustive expected = TryEverything(w, base);
  EXPECT_EQ(Summarize(all).classes, expected.classes);
  EXPECT_EQ(Summarize(all).nodes, expected.nodes);
  EXPECT_EQ(Summarize(all).quota, expected.quota);
  EXPECT_EQ(Summarize(all).max_size, expected.max_size);
  EXPECT_EQ(Summarize(all).spending, expected.spending);
  EXPECT_EQ(Summarize(all).idle, expected.idle);
  // Shown with the default bound: the head of the full list.
  ASSERT_EQ(shown.size(), std::min<size_t>(all.size(), FixLimits{}.max_fixes));
  for (size_t i = 0; i < shown.size(); ++i) EXPECT_EQ(shown[i], all[i]);
  ExpectBounded(w, base, expected, static_cast<int>(seed % 8));
}

TEST(FixesPropertyTest, EveryFixWorksTheSmallestFirstAndNoneIsMissed) {
  const uint32_t seed = EnvOr("WSCHED_FIXES_SEED", kSeed);
  const int cases = static_cast<int>(EnvOr("WSCHED_FIXES_CASES", kCases));
  Tally tally;
  for (int i = 0; i < cases; ++i) {
    CheckCase(seed + i, tally);
    if (::testing::Test::HasFailure()) {
      FAIL() << "rerun with WSCHED_FIXES_SEED=" << seed + i << " WSCHED_FIXES_CASES=1";
    }
  }
  std::cout << cases << " cases: " << tally.queued << " queued, " << tally.with_fixes
            << " with fixes, " << tally.without << " without;";
  for (const auto& [kind, count] : tally.kinds)
    std::cout << " " << FixKindName(kind) << "=" << count;
  std::cout << "\n";
  if (cases < kCases) return;
  // The generator reaches every branch and every kind of fix.
  EXPECT_GT(tally.queued, cases / 20);
  EXPECT_GT(tally.with_fixes, cases / 20);
  EXPECT_GT(tally.without, cases / 20);
  for (FixKind kind : {FixKind::kWait, FixKind::kUseClass, FixKind::kUncordonNode,
                       FixKind::kRaiseOrgGpuQuota, FixKind::kRaisePoolMaxSize,
                       FixKind::kRaiseSpendingLimit, FixKind::kStopIdleWorkspace}) {
    EXPECT_GT(tally.kinds[kind], 20) << FixKindName(kind);
  }
}

}  // namespace
}  // namespace wsched::placement
