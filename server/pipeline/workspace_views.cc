#include "server/pipeline/workspace_views.h"

#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"
#include "server/placement/estimate_inputs.h"
#include "server/placement/time_to_gpu.h"

namespace wsched::pipeline {

absl::StatusOr<WorkspaceView> WorkspaceViews::Of(const store::WorkspaceRow& row,
                                                 LimitsMemo* limits_memo, bool with_fixes) {
  WorkspaceView view;
  view.workspace = row.workspace;
  view.version = row.version;
  if (row.workspace.state != core::WorkspaceState::kPending) return view;
  // Read before the mirror's lock is taken: both may do I/O or take other locks.
  ScalingViews scaling = Scaling();
  const PendingLimits limits = LimitsOf(row.workspace, limits_memo);
  const store::TimingFigures timing = parts_.inventory->Timings();
  for (const auto& [pool, figure] : timing.node_start) {
    scaling[pool].median_start = figure.median;
    scaling[pool].start_samples = figure.samples;
  }
  view.queue_position = parts_.mirror->QueuePosition(row.workspace.id);
  view.pending = ExplainPending(row.workspace.class_id, view.queue_position, std::move(scaling),
                                limits, with_fixes ? &view.fixes : nullptr, &row.workspace);
  if (!view.pending) return view;  // Class gone: the stored reason stays.
  view.workspace.pending_reason = view.pending->detail;
  Estimate(timing, view);
  // Waiting is offered with the estimate the read already has.
  for (placement::PendingFix& fix : view.fixes) {
    if (fix.kind == placement::FixKind::kWait && view.estimated_wait) {
      absl::StrAppend(&fix.detail, " (about ",
                      absl::FormatDuration(absl::Trunc(*view.estimated_wait, absl::Seconds(1))),
                      " to place)");
    }
  }
  return view;
}

PendingLimits WorkspaceViews::LimitsOf(const core::Workspace& w, LimitsMemo* memo) {
  if (memo == nullptr) return parts_.settings->LimitsOf(w);
  std::string key = absl::StrCat(w.project_id.size(), ":", w.project_id, w.org_id.size(), ":",
                                 w.org_id, w.class_id);
  auto [it, fresh] = memo->try_emplace(std::move(key));
  if (fresh) it->second = parts_.settings->LimitsOf(w);
  return it->second;
}

placement::MeasuredTimes WorkspaceViews::Measured(const store::TimingFigures& timing) const {
  auto of = [](const store::TimingFigure& figure) {
    return placement::MeasuredTime{figure.median, figure.samples, figure.p90};
  };
  placement::MeasuredTimes times;
  for (const auto& [pool, figure] : timing.node_start) times.node_start[pool] = of(figure);
  for (const auto& [pool, figure] : timing.cloud_start) times.cloud_start[pool] = of(figure);
  for (const auto& [pool, figure] : timing.node_boot) times.node_boot[pool] = of(figure);
  for (const auto& [pool, figure] : timing.first_ready) times.first_ready[pool] = of(figure);
  for (const auto& [key, figure] : timing.driver_install) times.driver_install[key] = of(figure);
  times.install_kernels = timing.install_kernels;
  times.default_node_start = defaults_.node_start;
  times.default_driver_install = defaults_.driver_install;
  times.batching_window = defaults_.batching_window;
  return times;
}

void WorkspaceViews::Estimate(const store::TimingFigures& timing, WorkspaceView& view) const {
  // Only a wait for a node to start reads the pool's nodes (the install it
  // runs): other reads skip a second fetch of the view.
  std::shared_ptr<const replica::ClusterView> cluster;
  placement::PoolPicture picture;
  if (placement::WaitsForANodeToStart(view.pending->code)) {
    cluster = parts_.mirror->View();
    picture = {&cluster->catalog->pools, &cluster->snapshot, &cluster->catalog->driver_policy};
  }
  placement::TimeToGpu estimate = placement::EstimateTimeToGpu(
      placement::EstimateInputs(*view.pending, Measured(timing), picture, clock_()));
  view.estimated_wait = estimate.estimate;
  view.estimated_wait_p90 = estimate.estimate_p90;
  view.estimated_to_ready = estimate.estimate_to_ready;
  view.estimate_phases = std::move(estimate.phases);
  view.estimate_basis = std::move(estimate.basis);
}

std::optional<placement::PendingReason> WorkspaceViews::ExplainPending(
    const std::string& class_id, int queue_position, ScalingViews scaling,
    const PendingLimits& limits, std::vector<placement::PendingFix>* fixes,
    const core::Workspace* fixes_for) const {
  const std::shared_ptr<const replica::ClusterView> view = parts_.mirror->View();
  const core::WorkspaceClass* cls = view->catalog->FindClass(class_id);
  if (cls == nullptr) return std::nullopt;
  placement::PendingContext ctx;
  ctx.budgets = limits.budgets;
  ctx.quota = limits.quota;
  ctx.policy_denial = limits.policy_denial;
  ctx.cls = cls;
  ctx.pools = &view->catalog->pools;
  ctx.snapshot = &view->snapshot;
  ctx.driver_policy = &view->catalog->driver_policy;
  ctx.scaling = std::move(scaling);
  ctx.queue_position = queue_position;
  ctx.relayouts = view->relayouts;
  // The workspaces ahead take their share first (all of the queue when this
  // one is not queued yet).
  for (const replica::PendingDemand& entry : view->pending) {
    if (queue_position > 0 && static_cast<int>(ctx.ahead.size()) + 1 >= queue_position) break;
    ctx.ahead.push_back(view->catalog->FindClass(entry.class_id));
  }
  ctx.now = clock_();
  placement::PendingReason reason = placement::ExplainPending(ctx);
  // Without the settings (the database unreadable) another class cannot
  // be judged by the policies, so nothing is offered.
  if (fixes != nullptr && limits.settings) {
    placement::FixInputs in;
    in.pending = std::move(ctx);
    in.classes = &view->catalog->classes;
    in.project = limits.settings->project;
    in.org = limits.settings->org;
    if (fixes_for != nullptr) {
      for (const placement::IdleWorkspace& idle : view->idle) {
        if (idle.org_id == fixes_for->org_id) in.idle.push_back(idle);
      }
    }
    *fixes = placement::FindFixes(in);
  }
  return reason;
}

placement::PendingContext WorkspaceViews::Unqueued(const replica::ClusterView& view) const {
  placement::PendingContext ctx;
  ctx.pools = &view.catalog->pools;
  ctx.snapshot = &view.snapshot;
  ctx.driver_policy = &view.catalog->driver_policy;
  ctx.scaling = Scaling();
  ctx.relayouts = view.relayouts;
  for (const replica::PendingDemand& entry : view.pending) {
    ctx.ahead.push_back(view.catalog->FindClass(entry.class_id));
  }
  ctx.now = clock_();
  return ctx;
}

std::vector<placement::Quote> WorkspaceViews::Quotes(std::vector<std::string> classes,
                                                     int64_t org_sevenths_held,
                                                     std::optional<int64_t> org_gpu_quota) const {
  const store::TimingFigures timing = parts_.inventory->Timings();
  const std::shared_ptr<const replica::ClusterView> view = parts_.mirror->View();
  // Deciding needs the pools' indexes, which the view's nodes-only copy lacks.
  const placement::Snapshot snapshot = parts_.mirror->DecidingCopy();
  placement::QuoteInputs in;
  in.pending = Unqueued(*view);
  in.pending.snapshot = &snapshot;
  for (const std::string& id : classes) {
    if (const core::WorkspaceClass* cls = view->catalog->FindClass(id)) in.classes.push_back(cls);
  }
  in.org_sevenths_held = org_sevenths_held;
  in.org_gpu_quota = org_gpu_quota;
  in.times = Measured(timing);
  return placement::FindQuotes(in);
}

std::optional<placement::QuoteChange> WorkspaceViews::CheckQuote(
    const placement::QuoteToken& token, placement::QuoteCheckInputs in) const {
  const std::shared_ptr<const replica::ClusterView> view = parts_.mirror->View();
  const placement::Snapshot snapshot = parts_.mirror->DecidingCopy();
  in.cls = view->catalog->FindClass(token.class_id);
  in.pending = Unqueued(*view);
  in.pending.snapshot = &snapshot;
  in.now = in.pending.now;
  return placement::CheckQuote(token, in);
}

absl::StatusOr<WorkspaceView> WorkspaceViews::Get(const std::string& id, bool with_fixes) {
  absl::StatusOr<std::optional<store::WorkspaceRow>> stored = parts_.store->LoadWorkspace(id);
  if (!stored.ok()) return stored.status();
  if (!*stored) return core::NotFoundError(core::ErrorReason::kWorkspaceNotFound, "workspace", id);
  return Of(**stored, nullptr, with_fixes);
}

absl::StatusOr<WorkspaceView> WorkspaceViews::Refresh(const std::string& id,
                                                      const WorkspaceView* last) {
  if (last != nullptr && last->workspace.id == id) {
    const int64_t known = parts_.mirror->KnownVersion(id);
    if (known <= last->version) return Of({last->workspace, last->version, false});
  }
  return Get(id);
}

absl::StatusOr<core::Page<WorkspaceView>> WorkspaceViews::List(const store::WorkspaceFilter& filter,
                                                               const core::PageRequest& page) {
  absl::StatusOr<std::vector<core::Workspace>> stored =
      parts_.store->ListWorkspaces(filter, page.after, page.size + 1);
  if (!stored.ok()) return stored.status();
  std::vector<WorkspaceView> views;
  LimitsMemo limits;
  for (const auto& w : *stored) {
    auto view = Of({w, 0, false}, &limits);
    if (!view.ok()) return view.status();
    views.push_back(std::move(*view));
  }
  return core::PageFromRows(std::move(views), page,
                            [](const WorkspaceView& view) { return view.workspace.id; });
}

}  // namespace wsched::pipeline
