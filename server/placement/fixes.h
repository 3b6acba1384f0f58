// What would let a pending workspace go: a few ranked fixes, each proven
// before it is offered (docs/placement.md "What would it take").
//
// A candidate fix (take another class, uncordon a node, stop one of the
// org's idle workspaces, raise the org's GPU quota, raise a spending
// limit, raise a pool's max_size) is applied to a copy of the inputs
// and the pending walk (pending_reason.h, the one place the placement
// rules are read for a waiting workspace: quota, policy, the queue ahead,
// every layer of capacity) is run again. A fix is kept only when, with it,
// the workspace is QUEUED (room for it now, after the workspaces ahead
// took theirs) or a scale-up is started for it (SCALE_UP_REQUESTED or
// SCALE_UP_NOT_YET_REQUESTED). Capacity already on its way (a driver
// install, a node starting, a requested scale-up, a MIG re-layout) is
// offered as "wait", which changes nothing.
//
// Least change first: wait, then another class (only this workspace
// changes), then uncordoning a node (capacity that exists), then stopping
// one of the org's idle workspaces (its GPUs do nothing and cost no
// money once stopped, but someone's session ends), then raising the org's
// quota (by the fewest GPUs), then raising the spending limit that holds
// it (by the least that admits its first interval), then raising a pool's
// max_size (by the fewest nodes: new nodes cost money). Within a kind, the
// smaller change first.
//
// Bounded: at most FixLimits::max_trials runs of the pending walk per
// workspace (48 by default), each O(queue ahead + nodes of the pools it
// reads), so one workspace's fixes cost at most 48 times its pending
// reason. What is tried within the bound: up to max_classes other classes,
// up to max_nodes cordoned nodes, up to max_idle of the org's idle
// workspaces (longest idle first, until one stop lets it go), the one
// smallest quota raise, the one smallest raise of each spending limit, and
// per pool a binary search for the smallest max_size. The pools (and their
// cordoned nodes) are the class's, then those of the classes ahead: a
// larger pool that the workspaces ahead prefer draws them away from the
// pool this one needs.
//
// Pure: no I/O, no clock, no locks; nothing is stored.
#ifndef WSCHED_SERVER_PLACEMENT_FIXES_H_
#define WSCHED_SERVER_PLACEMENT_FIXES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "server/core/settings.h"
#include "server/core/workspace_class.h"
#include "server/placement/pending_reason.h"
#include "server/placement/snapshot.h"

namespace wsched::placement {

// In the order of their rank (least change first); stable API numbers
// are the proto's, not these.
enum class FixKind {
  kWait,
  kUseClass,
  kUncordonNode,
  kStopIdleWorkspace,
  kRaiseOrgGpuQuota,
  kRaiseSpendingLimit,
  kRaisePoolMaxSize,
};

// Who may apply a fix. An admin may apply all; an org admin what the
// org's settings change and what a project owner may; a project owner
// (or the control plane placing for the project) what changes only the
// workspace itself, or stops an idle workspace of the same project.
enum class FixApplier { kProjectOwner, kOrgAdmin, kAdmin };

// "wait", "use_class", ... (stable: logs and the CLI).
const char* FixKindName(FixKind kind);
// "project_owner", "org_admin", "admin".
const char* FixApplierName(FixApplier applier);

struct PendingFix {
  FixKind kind = FixKind::kWait;
  FixApplier applier = FixApplier::kProjectOwner;
  std::string detail;                    // One line for people.
  std::string class_id;                  // kUseClass.
  int64_t credits_per_minute_milli = 0;  // kUseClass: the class's price.
  std::string pool;                      // kRaisePoolMaxSize; kWait: where, when known.
  std::string node;                      // kUncordonNode; kWait: where, when known.
  int max_size = 0;                      // kRaisePoolMaxSize: the new max_size.
  int64_t gpu_quota = 0;                 // kRaiseOrgGpuQuota: the new quota.
  // kRaisePoolMaxSize, kRaiseOrgGpuQuota; kRaiseSpendingLimit: in
  // GPU-microseconds.
  int64_t raise_by = 0;
  // kRaiseSpendingLimit: whose limit ("org" or "project", the workspace's),
  // and the new limit in GPU-microseconds.
  std::string spending_scope;
  int64_t spending_limit = 0;
  // kWait: what is on its way (the reason now).
  PendingCode wait_for = PendingCode::kQueued;
  // kStopIdleWorkspace: the workspace to stop, its project, and for how
  // long its GPUs have been idle.
  std::string workspace_id;
  std::string project_id;
  absl::Duration idle_for = absl::ZeroDuration();
  // The reason with the fix applied (kQueued or a scale-up), and where.
  PendingReason outcome;
  friend bool operator==(const PendingFix&, const PendingFix&) = default;
};

// A running GPU workspace whose GPUs the idle monitor found idle
// (core::IdleMark on its record), with what its stop would free.
struct IdleWorkspace {
  std::string workspace_id;
  std::string org_id;
  std::string project_id;
  absl::Time idle_since;
  HoldRecord hold;           // Its node, GPUs or slice, and resources.
  int64_t gpu_sevenths = 0;  // What the org's quota counts of it.
  friend bool operator==(const IdleWorkspace&, const IdleWorkspace&) = default;
};

struct FixInputs {
  // As ExplainPending takes it, for this workspace: class, pools,
  // snapshot, driver policy, scaling views, queue position and the
  // classes ahead, quota figures, policy denial, now.
  PendingContext pending;
  // The catalog's classes: the other classes a fix may name.
  const std::vector<core::WorkspaceClass>* classes = nullptr;
  // The policies another class is judged by (core::ForbiddingRule).
  core::ProjectSettings project;
  core::OrgSettings org;
  // Idle workspaces that may be stopped for this one: only those of
  // org.org_id are tried, in any order.
  std::vector<IdleWorkspace> idle;
};

struct FixLimits {
  int max_fixes = 3;    // Returned at most.
  int max_trials = 48;  // Runs of the pending walk per workspace.
  int max_classes = 8;  // Other classes tried.
  int max_nodes = 8;    // Cordoned nodes tried.
  int max_idle = 4;     // Idle workspaces tried, longest idle first.
};

// The fixes for the workspace `in.pending` describes, least change first,
// at most limits.max_fixes. Empty when it is QUEUED (it goes anyway), or
// when no candidate tried within the bound lets it go.
std::vector<PendingFix> FindFixes(const FixInputs& in, const FixLimits& limits = {});

// The inputs with `fix` applied (a stopped idle workspace's hold freed and
// its GPUs given back to the org's quota), owning what the fix changed: the same
// inputs FindFixes proves a fix on (tests apply a returned fix with it).
// Not copyable or movable: `pending` points into it.
class FixedInputs {
 public:
  FixedInputs(const FixInputs& in, const PendingFix& fix);
  FixedInputs(const FixedInputs&) = delete;
  FixedInputs& operator=(const FixedInputs&) = delete;

  const PendingContext& pending() const { return pending_; }

 private:
  std::vector<core::NodePool> pools_;
  std::optional<Snapshot> snapshot_;
  PendingContext pending_;
};

// Whether `reason` lets the workspace go: QUEUED, or a scale-up for it.
bool LetsItGo(const PendingReason& reason);

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_FIXES_H_
