// What a caller sees of a workspace: the stored record and, while it
// waits, its place in the queue, why it waits (placement/pending_reason.h),
// for how long (placement/time_to_gpu.h) and, for a single read, what
// would let it go (placement/fixes.h). Reads the store and the newest
// ClusterView; holds no state of its own.
#ifndef WSCHED_SERVER_PIPELINE_WORKSPACE_VIEWS_H_
#define WSCHED_SERVER_PIPELINE_WORKSPACE_VIEWS_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/core/clock.h"
#include "server/core/paging.h"
#include "server/core/workspace.h"
#include "server/inventory/node_inventory.h"
#include "server/pipeline/settings_reader.h"
#include "server/placement/estimate_inputs.h"
#include "server/placement/fixes.h"
#include "server/placement/pending_reason.h"
#include "server/placement/quote.h"
#include "server/placement/time_to_gpu.h"
#include "server/replica/replica_mirror.h"
#include "server/replica/stores.h"
#include "server/store/types.h"

namespace wsched::pipeline {

// One way a request could be served, and the token that places it so.
struct QuoteView {
  placement::Quote quote;
  std::string token;  // placement::EncodeQuoteToken.
};

// A workspace with what the answer adds while it waits.
struct WorkspaceView {
  core::Workspace workspace;
  int queue_position = 0;  // 1-based; 0 when not pending.
  std::optional<absl::Duration> estimated_wait;
  // The sum of the phases' remaining p90 (placement/time_to_gpu.h).
  std::optional<absl::Duration> estimated_wait_p90;
  // estimated_wait and the FIRST_READY phase, when the pool measured one.
  std::optional<absl::Duration> estimated_to_ready;
  std::vector<placement::EstimatePhase> estimate_phases;
  // Pending: why it waits (placement/pending_reason.h), and how the
  // estimate was made.
  std::optional<placement::PendingReason> pending;
  std::string estimate_basis;
  // Pending, single reads only (Get with fixes): what would let it go,
  // least change first, for every role; the API shows each caller those
  // its role may apply. Computed when read, never stored.
  std::vector<placement::PendingFix> fixes;
  int64_t version = 0;  // The stored record's version (every change bumps it).
  // A validate_only answer: nothing was stored; `workspace` is what the
  // request would create, `quotes` every way to serve it, best first.
  bool quote_only = false;
  std::vector<QuoteView> quotes;
};

class WorkspaceViews {
 public:
  // What the scaler says of each pool, for pending reasons.
  using ScalingViews = std::map<std::string, placement::PoolScalingView>;
  struct Parts {
    replica::PlacementStore* store = nullptr;
    const replica::ReplicaMirror* mirror = nullptr;
    SettingsReader* settings = nullptr;
    inventory::NodeInventory* inventory = nullptr;  // The measured start and install times.
  };
  // Time to GPU while nothing is measured.
  struct Defaults {
    absl::Duration node_start;
    absl::Duration driver_install;
    absl::Duration batching_window;  // The scaler's, before it asks for nodes.
  };
  WorkspaceViews(Parts parts, Defaults defaults, core::Clock clock)
      : parts_(parts), defaults_(defaults), clock_(std::move(clock)) {}

  // Set once by the scaling controller before serving; called without any
  // of the replica's locks.
  void SetScalingViews(std::function<ScalingViews()> fn) { scaling_views_ = std::move(fn); }
  ScalingViews Scaling() const { return scaling_views_ ? scaling_views_() : ScalingViews(); }

  // `with_fixes`: also what would let a pending workspace go (up to
  // placement/fixes.h's bound of pending walks: for one read, not a
  // listing or a watch).
  absl::StatusOr<WorkspaceView> Get(const std::string& id, bool with_fixes = false);
  // For a watcher: `last` brought up to date. While this replica has seen
  // no newer version of the workspace (the change feed tells it of every
  // write, whichever replica made it), nothing is read from the database:
  // only what changes without a write (GPU health, the pending reason) is
  // derived again from memory. Null `last`, or a newer version: read anew.
  absl::StatusOr<WorkspaceView> Refresh(const std::string& id, const WorkspaceView* last);
  absl::StatusOr<core::Page<WorkspaceView>> List(const store::WorkspaceFilter& filter,
                                                 const core::PageRequest& page);

  // `limits_memo`, when given, keeps the settings read for each
  // (project, org, class) across the rows of one listing: one read each.
  using LimitsMemo = std::map<std::string, PendingLimits>;
  absl::StatusOr<WorkspaceView> Of(const store::WorkspaceRow& row,
                                   LimitsMemo* limits_memo = nullptr, bool with_fixes = false);
  // Why a workspace of `class_id` at `queue_position` (0: not queued) waits,
  // on the newest ClusterView and without the mirror's lock: the queue's
  // simulation walks every node (about 1 ms at 10,000, placement_benchmark
  // BM_ExplainPendingGpu8), which every placement would otherwise wait for.
  // nullopt when the view's catalog has no such class. With `fixes`, what
  // would let `fixes_for` go is found on the same view (placement/fixes.h),
  // stopping its org's idle workspaces among the candidates.
  // Every way a request for `classes` (allowed, the resolved one first)
  // could be served, on the newest ClusterView (placement/quote.h).
  std::vector<placement::Quote> Quotes(std::vector<std::string> classes, int64_t org_sevenths_held,
                                       std::optional<int64_t> org_gpu_quota) const;
  // Whether placing as `token` quoted still holds on the newest
  // ClusterView; `in`'s pending context and class are filled in here.
  std::optional<placement::QuoteChange> CheckQuote(const placement::QuoteToken& token,
                                                   placement::QuoteCheckInputs in) const;
  std::optional<placement::PendingReason> ExplainPending(
      const std::string& class_id, int queue_position, ScalingViews scaling,
      const PendingLimits& limits, std::vector<placement::PendingFix>* fixes = nullptr,
      const core::Workspace* fixes_for = nullptr) const;

 private:
  PendingLimits LimitsOf(const core::Workspace& w, LimitsMemo* memo);
  // The pending walk's inputs for a request not queued yet, behind the
  // whole queue; `cls` and the limits unset.
  placement::PendingContext Unqueued(const replica::ClusterView& view) const;
  // The estimate of `view`'s wait, from the measured times.
  void Estimate(const store::TimingFigures& timing, WorkspaceView& view) const;
  // The measured times as the estimates read them, with the defaults.
  placement::MeasuredTimes Measured(const store::TimingFigures& timing) const;

  const Parts parts_;
  const Defaults defaults_;
  const core::Clock clock_;
  std::function<ScalingViews()> scaling_views_;
};

}  // namespace wsched::pipeline

#endif  // WSCHED_SERVER_PIPELINE_WORKSPACE_VIEWS_H_
