#include "server/placement/fixes.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/core/class_resolution.h"
#include "server/core/mig.h"
#include "server/core/mig_profiles.h"
#include "server/placement/filters.h"

namespace wsched::placement {
namespace {

bool IsScaleUp(PendingCode code) {
  return code == PendingCode::kScaleUpRequested || code == PendingCode::kScaleUpNotYetRequested;
}

// Capacity on its way that needs nobody: waiting is the fix.
bool IsComing(PendingCode code) {
  return IsScaleUp(code) || code == PendingCode::kMigRelayout ||
         code == PendingCode::kDriverInstalling || code == PendingCode::kNodeProvisioning;
}

// Whether a fix's outcome is worth a change: a workspace a scale-up is
// already started for is helped only by room now.
bool Improves(const PendingReason& before, const PendingReason& after) {
  if (IsScaleUp(before.code)) return after.code == PendingCode::kQueued;
  return LetsItGo(after);
}

std::string OutcomeText(const PendingReason& outcome) {
  if (outcome.code == PendingCode::kQueued) {
    return outcome.node.empty()
               ? "it is placed at the next pass of the queue"
               : absl::StrCat("it is placed at the next pass of the queue (room on node ",
                              outcome.node, ")");
  }
  return absl::StrCat("a scale-up of pool ", outcome.pool, " is started for it");
}

std::string Credits(int64_t milli) {
  return absl::StrCat(milli / 1000, ".", absl::StrFormat("%03d", std::abs(milli % 1000)));
}

std::string Describe(const PendingFix& fix, const FixInputs& in) {
  switch (fix.kind) {
    case FixKind::kWait:
      return absl::StrCat("wait: ", fix.outcome.detail);
    case FixKind::kUseClass:
      return absl::StrCat("place it with class ", fix.class_id,
                          " instead (allowed by the policies; ",
                          Credits(fix.credits_per_minute_milli),
                          " credits per minute): ", OutcomeText(fix.outcome));
    case FixKind::kUncordonNode:
      return absl::StrCat("uncordon node ", fix.node, ": ", OutcomeText(fix.outcome));
    case FixKind::kStopIdleWorkspace:
      return absl::StrCat("stop workspace ", fix.workspace_id, " of project ", fix.project_id,
                          " (its GPUs idle for ",
                          absl::FormatDuration(absl::Trunc(fix.idle_for, absl::Seconds(1))),
                          "): ", OutcomeText(fix.outcome));
    case FixKind::kRaiseOrgGpuQuota:
      return absl::StrCat("raise the GPU quota of org ", in.org.org_id, " from ",
                          in.pending.quota ? in.pending.quota->quota : 0, " to ", fix.gpu_quota,
                          " (+", fix.raise_by, "): ", OutcomeText(fix.outcome));
    case FixKind::kRaiseSpendingLimit:
      return absl::StrCat("raise the spending limit of ", fix.spending_scope, " ",
                          fix.spending_scope == "org" ? in.org.org_id : in.project.project_id,
                          " to ", core::GpuSecondsFigure(fix.spending_limit), " GPU-seconds (+",
                          core::GpuSecondsFigure(fix.raise_by), "): ", OutcomeText(fix.outcome));
    case FixKind::kRaisePoolMaxSize:
      return absl::StrCat("raise max_size of pool ", fix.pool, " from ",
                          fix.max_size - fix.raise_by, " to ", fix.max_size, " (+", fix.raise_by,
                          "): ", OutcomeText(fix.outcome));
  }
  return "";
}

// The other classes a workspace may take instead, closest first: the
// same isolation and kind (whole GPUs, a slice, no GPU), not deprecated,
// allowed by the policies; then the nearest GPU count, the lower price,
// catalog order.
std::vector<const core::WorkspaceClass*> OtherClasses(const FixInputs& in, int limit) {
  std::vector<const core::WorkspaceClass*> found;
  if (in.classes == nullptr) return found;
  const core::WorkspaceClass& own = *in.pending.cls;
  for (const core::WorkspaceClass& cls : *in.classes) {
    if (cls.id == own.id || cls.deprecated || cls.gpu.isolation != own.gpu.isolation ||
        cls.is_gpu() != own.is_gpu() || cls.is_slice() != own.is_slice()) {
      continue;
    }
    if (core::ForbiddingRule(cls.id, in.project, in.org)) continue;
    found.push_back(&cls);
  }
  std::stable_sort(found.begin(), found.end(), [&](const auto* a, const auto* b) {
    return std::pair(std::abs(a->gpu.count - own.gpu.count), a->credits_per_minute_milli) <
           std::pair(std::abs(b->gpu.count - own.gpu.count), b->credits_per_minute_milli);
  });
  if (static_cast<int>(found.size()) > limit) found.resize(limit);
  return found;
}

// Runs the pending walk on candidates, counting the runs against the bound.
class Prover {
 public:
  Prover(const FixInputs& in, const FixLimits& limits) : in_(in), left_(limits.max_trials) {}

  bool Spent() const { return left_ <= 0; }

  // The reason with `fix` applied; nullopt once the bound is spent.
  std::optional<PendingReason> Try(const PendingFix& fix) {
    if (Spent()) return std::nullopt;
    --left_;
    FixedInputs fixed(in_, fix);
    return ExplainPending(fixed.pending());
  }

 private:
  const FixInputs& in_;
  int left_;
};

class FixFinder {
 public:
  FixFinder(const FixInputs& in, const FixLimits& limits)
      : in_(in), limits_(limits), prover_(in, limits) {}

  std::vector<PendingFix> Find() {
    std::optional<PendingReason> base = prover_.Try(PendingFix{});  // A wait changes nothing.
    if (!base || base->code == PendingCode::kQueued) return {};
    base_ = *std::move(base);
    if (IsComing(base_.code)) {
      PendingFix wait;
      wait.kind = FixKind::kWait;
      wait.wait_for = base_.code;
      wait.pool = base_.pool;
      wait.node = base_.node;
      wait.outcome = base_;
      Keep(std::move(wait));
    }
    TryOtherClasses();
    TryUncordon();
    TryStopIdle();
    TryQuota();
    TrySpendingLimits();
    TryMaxSize();
    std::stable_sort(found_.begin(), found_.end(), [](const PendingFix& a, const PendingFix& b) {
      return std::tuple(a.kind, a.raise_by) < std::tuple(b.kind, b.raise_by);
    });
    if (static_cast<int>(found_.size()) > limits_.max_fixes) found_.resize(limits_.max_fixes);
    return std::move(found_);
  }

 private:
  // Keeps `fix` when its outcome (filled in here) lets the workspace go.
  bool Prove(PendingFix fix) {
    std::optional<PendingReason> outcome = prover_.Try(fix);
    if (!outcome || !Improves(base_, *outcome)) return false;
    fix.outcome = *std::move(outcome);
    Keep(std::move(fix));
    return true;
  }

  void Keep(PendingFix fix) {
    fix.detail = Describe(fix, in_);
    found_.push_back(std::move(fix));
  }

  void TryOtherClasses() {
    for (const core::WorkspaceClass* cls : OtherClasses(in_, limits_.max_classes)) {
      PendingFix fix;
      fix.kind = FixKind::kUseClass;
      fix.applier = FixApplier::kProjectOwner;
      fix.class_id = cls->id;
      fix.credits_per_minute_milli = cls->credits_per_minute_milli;
      Prove(std::move(fix));
    }
  }

  void TryUncordon() {
    // In the class's pool order, by name within a pool (the snapshot's
    // order is no order).
    std::vector<std::string> cordoned;
    for (const core::NodePool* pool : PoolsThatMatter(in_.pending)) {
      std::vector<std::string> names;
      in_.pending.snapshot->ForEachNodeOf(pool->id, [&](const SnapshotNode& node) {
        if (node.state == core::NodeState::kCordoned) names.push_back(node.info.name);
      });
      std::sort(names.begin(), names.end());
      cordoned.insert(cordoned.end(), names.begin(), names.end());
    }
    if (static_cast<int>(cordoned.size()) > limits_.max_nodes) cordoned.resize(limits_.max_nodes);
    for (const std::string& node : cordoned) {
      PendingFix fix;
      fix.kind = FixKind::kUncordonNode;
      fix.applier = FixApplier::kAdmin;
      fix.node = node;
      Prove(std::move(fix));
    }
  }

  // The org's longest-idle workspace whose stop lets this one go: its GPUs
  // and quota come back, and the workspaces ahead take their share first.
  // Only where something held is in the way: the org's quota or capacity.
  void TryStopIdle() {
    if (base_.code == PendingCode::kClassPolicy || base_.code == PendingCode::kNoPool) return;
    std::vector<const IdleWorkspace*> idle;
    for (const IdleWorkspace& w : in_.idle) {
      if (w.org_id == in_.org.org_id) idle.push_back(&w);
    }
    std::sort(idle.begin(), idle.end(), [](const IdleWorkspace* a, const IdleWorkspace* b) {
      return std::tie(a->idle_since, a->workspace_id) < std::tie(b->idle_since, b->workspace_id);
    });
    if (static_cast<int>(idle.size()) > limits_.max_idle) idle.resize(limits_.max_idle);
    for (const IdleWorkspace* w : idle) {
      PendingFix fix;
      fix.kind = FixKind::kStopIdleWorkspace;
      // Its project's owner stops it; for another project's workspace,
      // the org's admin.
      fix.applier = w->project_id == in_.project.project_id ? FixApplier::kProjectOwner
                                                            : FixApplier::kOrgAdmin;
      fix.workspace_id = w->workspace_id;
      fix.project_id = w->project_id;
      fix.idle_for = std::max(absl::ZeroDuration(), in_.pending.now - w->idle_since);
      if (Prove(std::move(fix))) return;
    }
  }

  // The one smallest raise: g more GPUs let it pass, g - 1 would not.
  void TryQuota() {
    if (base_.code != PendingCode::kOrgGpuQuota || !in_.pending.quota) return;
    const QuotaFigures& quota = *in_.pending.quota;
    const int64_t wanted = quota.held_sevenths + core::LeastGpuSevenths(*in_.pending.cls);
    const int64_t needed =
        (wanted + core::kMigComputeSlices - 1) / core::kMigComputeSlices;  // Whole GPUs.
    if (needed <= quota.quota) return;
    PendingFix fix;
    fix.kind = FixKind::kRaiseOrgGpuQuota;
    fix.applier = FixApplier::kOrgAdmin;
    fix.gpu_quota = needed;
    fix.raise_by = needed - quota.quota;
    Prove(std::move(fix));
  }

  // Per limit that holds it, the least raise that admits its first
  // interval: spent + committed, and one GPU-microsecond left over when it
  // commits to nothing (core::AdmitsWithinBudget). Each limit is raised
  // alone: when both hold it, neither raise lets it go by itself, and none
  // is offered.
  void TrySpendingLimits() {
    if (base_.code != PendingCode::kBudgetExhausted) return;
    const int64_t sevenths = core::LeastGpuSevenths(*in_.pending.cls);
    for (const core::BudgetStanding& budget : in_.pending.budgets) {
      const int64_t committed = core::CommittedGpuMicros(sevenths, budget.committed_interval);
      const int64_t needed = budget.spent + std::max<int64_t>(committed, 1);
      if (needed <= budget.limit) continue;  // Not this one.
      // A project's limit may not exceed its org's (SetProjectSettings).
      if (budget.scope == "project" && needed > OrgLimit()) continue;
      PendingFix fix;
      fix.kind = FixKind::kRaiseSpendingLimit;
      // Only an admin changes a project's limit as well (docs/billing.md
      // "Spending limits"), which is the org admin role today.
      fix.applier = FixApplier::kOrgAdmin;
      fix.spending_scope = budget.scope;
      fix.spending_limit = needed;
      fix.raise_by = needed - budget.limit;
      Prove(std::move(fix));
    }
  }

  // The org's limit in GPU-microseconds; none: no bound.
  int64_t OrgLimit() const {
    for (const core::BudgetStanding& budget : in_.pending.budgets) {
      if (budget.scope == "org") return budget.limit;
    }
    return std::numeric_limits<int64_t>::max();
  }

  // Per pool that matters, the smallest max_size that lets it go: a
  // binary search between max_size + 1 and a size that surely does if any
  // does (every node the pool has, is asked for or may have, plus one new
  // node per workspace ahead and one for this one).
  void TryMaxSize() {
    const int ahead = static_cast<int>(in_.pending.ahead.size());
    for (const core::NodePool* pool : PoolsThatMatter(in_.pending)) {
      int known = std::max(pool->max_size, in_.pending.snapshot->PoolNodeCount(pool->id));
      if (auto it = in_.pending.scaling.find(pool->id); it != in_.pending.scaling.end()) {
        known = std::max({known, it->second.current_size, it->second.target_size});
      }
      std::optional<PendingFix> best =
          SmallestMaxSize(*pool, pool->max_size + 1, known + ahead + 1);
      if (best) Keep(*std::move(best));
    }
  }

  std::optional<PendingFix> SmallestMaxSize(const core::NodePool& pool, int low, int high) {
    auto attempt = [&](int size) -> std::optional<PendingFix> {
      PendingFix fix;
      fix.kind = FixKind::kRaisePoolMaxSize;
      fix.applier = FixApplier::kAdmin;
      fix.pool = pool.id;
      fix.max_size = size;
      fix.raise_by = size - pool.max_size;
      std::optional<PendingReason> outcome = prover_.Try(fix);
      if (!outcome || !Improves(base_, *outcome)) return std::nullopt;
      fix.outcome = *std::move(outcome);
      return fix;
    };
    std::optional<PendingFix> best = attempt(high);
    if (!best) return std::nullopt;
    // Invariant: `high` lets it go; everything below `low` was not tried
    // or does not.
    while (low < high && !prover_.Spent()) {
      const int mid = low + (high - low) / 2;
      if (std::optional<PendingFix> fix = attempt(mid)) {
        best = std::move(fix);
        high = mid;
      } else {
        low = mid + 1;
      }
    }
    // A search cut short by the bound still offers a size proven to work.
    return best;
  }

  const FixInputs& in_;
  const FixLimits& limits_;
  Prover prover_;
  PendingReason base_;
  std::vector<PendingFix> found_;
};

}  // namespace

const char* FixKindName(FixKind kind) {
  switch (kind) {
    case FixKind::kWait:
      return "wait";
    case FixKind::kUseClass:
      return "use_class";
    case FixKind::kUncordonNode:
      return "uncordon_node";
    case FixKind::kStopIdleWorkspace:
      return "stop_idle_workspace";
    case FixKind::kRaiseOrgGpuQuota:
      return "raise_org_gpu_quota";
    case FixKind::kRaiseSpendingLimit:
      return "raise_spending_limit";
    case FixKind::kRaisePoolMaxSize:
      return "raise_pool_max_size";
  }
  return "unknown";
}

const char* FixApplierName(FixApplier applier) {
  switch (applier) {
    case FixApplier::kProjectOwner:
      return "project_owner";
    case FixApplier::kOrgAdmin:
      return "org_admin";
    case FixApplier::kAdmin:
      return "admin";
  }
  return "unknown";
}

std::vector<PendingFix> FindFixes(const FixInputs& in, const FixLimits& limits) {
  return FixFinder(in, limits).Find();
}

bool LetsItGo(const PendingReason& reason) {
  return reason.code == PendingCode::kQueued || IsScaleUp(reason.code);
}

FixedInputs::FixedInputs(const FixInputs& in, const PendingFix& fix) : pending_(in.pending) {
  switch (fix.kind) {
    case FixKind::kWait:
      break;
    case FixKind::kUseClass: {
      const core::WorkspaceClass* cls = nullptr;
      if (in.classes != nullptr) {
        for (const core::WorkspaceClass& c : *in.classes) {
          if (c.id == fix.class_id) cls = &c;
        }
      }
      if (cls == nullptr) break;  // Unknown class: nothing changes.
      pending_.cls = cls;
      pending_.policy_denial = core::ForbiddingRule(cls->id, in.project, in.org);
      break;
    }
    case FixKind::kUncordonNode:
      // A copy of the snapshot costs a pointer per node (snapshot.h); the
      // uncordoned node alone is copied again.
      snapshot_ = *in.pending.snapshot;
      (void)snapshot_->SetNodeState(fix.node, core::NodeState::kReady);
      pending_.snapshot = &*snapshot_;
      break;
    case FixKind::kStopIdleWorkspace:
      for (const IdleWorkspace& w : in.idle) {
        if (w.workspace_id != fix.workspace_id) continue;
        snapshot_ = *in.pending.snapshot;
        (void)snapshot_->FreeHeld(w.hold);  // A node gone frees nothing.
        pending_.snapshot = &*snapshot_;
        if (pending_.quota) {
          pending_.quota->held_sevenths =
              std::max<int64_t>(0, pending_.quota->held_sevenths - w.gpu_sevenths);
        }
        break;
      }
      break;
    case FixKind::kRaiseOrgGpuQuota:
      if (pending_.quota) pending_.quota->quota = fix.gpu_quota;
      break;
    case FixKind::kRaiseSpendingLimit:
      for (core::BudgetStanding& budget : pending_.budgets) {
        if (budget.scope == fix.spending_scope) budget.limit = fix.spending_limit;
      }
      break;
    case FixKind::kRaisePoolMaxSize:
      pools_ = *in.pending.pools;
      for (core::NodePool& pool : pools_) {
        if (pool.id == fix.pool) pool.max_size = fix.max_size;
      }
      pending_.pools = &pools_;
      break;
  }
}

}  // namespace wsched::placement
