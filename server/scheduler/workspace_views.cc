// What a caller sees of a workspace (stored record, queue position, why it
// waits and for how long), and stopping one.
#include <tuple>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "server/core/error_reason.h"
#include "server/log/log.h"
#include "server/placement/decide.h"
#include "server/placement/node_ownership.h"
#include "server/placement/time_to_gpu.h"
#include "server/scheduler/device_spec.h"
#include "server/scheduler/scheduler.h"

namespace wsched::scheduler {

absl::StatusOr<WorkspaceView> Scheduler::ViewOfStored(const store::WorkspaceRow& row,
                                                      LimitsMemo* limits_memo) {
  WorkspaceView view;
  view.workspace = row.workspace;
  view.version = row.version;
  if (row.workspace.state != core::WorkspaceState::kPending) return view;
  // Read before taking the lock: both may do I/O or take other locks.
  ScalingViews scaling = scaling_views_ ? scaling_views_() : ScalingViews();
  PendingLimits limits;
  if (limits_memo == nullptr) {
    limits = LimitsOf(row.workspace);
  } else {
    const core::Workspace& w = row.workspace;
    std::string key = absl::StrCat(w.project_id.size(), ":", w.project_id, w.org_id.size(), ":",
                                   w.org_id, w.class_id);
    auto [it, fresh] = limits_memo->try_emplace(std::move(key));
    if (fresh) it->second = LimitsOf(w);
    limits = it->second;
  }
  const store::TimingFigures timing = inventory_->Timings();
  for (const auto& [pool, figure] : timing.node_start) {
    scaling[pool].median_start = figure.median;
    scaling[pool].start_samples = figure.samples;
  }
  view.queue_position = mirror_->QueuePosition(row.workspace.id);
  view.pending = ExplainPending(row.workspace.class_id, view.queue_position, std::move(scaling), limits);
  if (!view.pending) return view;  // Class gone: the stored reason stays.
  view.workspace.pending_reason = view.pending->detail;
  placement::TimeToGpuInputs in;
  in.reason = *view.pending;
  if (auto it = timing.node_start.find(in.reason.pool); it != timing.node_start.end()) {
    in.node_start = placement::MeasuredTime{it->second.median, it->second.samples};
  }
  if (auto it = timing.driver_install.find({in.reason.pool, in.reason.kernel});
      it != timing.driver_install.end()) {
    in.driver_install = placement::MeasuredTime{it->second.median, it->second.samples};
  }
  in.default_node_start = options_.default_node_start;
  in.default_driver_install = options_.default_driver_install;
  in.now = clock_();
  placement::TimeToGpu estimate = placement::EstimateTimeToGpu(in);
  view.estimated_wait = estimate.estimate;
  view.estimate_basis = std::move(estimate.basis);
  return view;
}

absl::StatusOr<CachedSettings> Scheduler::ReadSettings(const std::string& project_id,
                                                       const std::string& org_id,
                                                       int64_t* org_gpus_held) {
  absl::StatusOr<StoredSettings> stored =
      stores_.placement->ReadSettings(project_id, org_id, org_gpus_held != nullptr);
  if (!stored.ok()) return stored.status();
  if (org_gpus_held != nullptr) *org_gpus_held = stored->org_gpus_held;
  CachedSettings read{std::move(stored->project), stored->project_version, std::move(stored->org),
                      stored->org_version};
  settings_.Put(read);
  return read;
}

std::optional<CachedSettings> Scheduler::SettingsFor(const std::string& project_id,
                                                     const std::string& org_id) {
  if (std::optional<CachedSettings> cached = settings_.Get(project_id, org_id)) return cached;
  absl::StatusOr<CachedSettings> read = ReadSettings(project_id, org_id, nullptr);
  if (!read.ok()) return std::nullopt;
  return *read;
}

Scheduler::PendingLimits Scheduler::LimitsOf(const core::Workspace& w) {
  PendingLimits limits;
  // Read, not cached: the answer must reflect a settings change the caller
  // just made, whichever replica it made it on. Unreadable (database down):
  // these layers are not judged.
  int64_t held = 0;
  absl::StatusOr<CachedSettings> settings = ReadSettings(w.project_id, w.org_id, &held);
  if (!settings.ok()) return limits;
  if (auto rule = core::ForbiddingRule(w.class_id, settings->project, settings->org)) {
    limits.policy_denial = absl::StrCat("class ", w.class_id, " is ", *rule);
  }
  if (settings->org.gpu_quota >= 0) {
    limits.quota = placement::QuotaFigures{held, settings->org.gpu_quota};
  }
  return limits;
}

std::optional<placement::PendingReason> Scheduler::ExplainPending(const std::string& class_id,
                                                                  int queue_position,
                                                                  ScalingViews scaling,
                                                                  const PendingLimits& limits) const {
  const std::shared_ptr<const ClusterView> view = View();
  const core::WorkspaceClass* cls = view->catalog->FindClass(class_id);
  if (cls == nullptr) return std::nullopt;
  placement::PendingContext ctx;
  ctx.quota = limits.quota;
  ctx.policy_denial = limits.policy_denial;
  ctx.cls = cls;
  ctx.pools = &view->catalog->pools;
  ctx.snapshot = &view->snapshot;
  ctx.driver_policy = &view->catalog->driver_policy;
  ctx.scaling = std::move(scaling);
  ctx.queue_position = queue_position;
  // The workspaces ahead take their share first (all of the queue when this
  // one is not queued yet).
  for (const PendingDemand& entry : view->pending) {
    if (queue_position > 0 && static_cast<int>(ctx.ahead.size()) + 1 >= queue_position) break;
    ctx.ahead.push_back(view->catalog->FindClass(entry.class_id));
  }
  ctx.now = clock_();
  return placement::ExplainPending(ctx);
}

absl::StatusOr<store::WorkspaceRow> Scheduler::StopAndMirror(const std::string& id,
                                                             core::EndReason reason,
                                                             int64_t expected_version) {
  if (!core::IsStopReason(reason)) {
    return absl::InvalidArgumentError(absl::StrCat("a stop cannot end a workspace as \"",
                                                   core::EndReasonName(reason), "\""));
  }
  // A stop always wins: a refused batch (a deadlock, say) is the
  // database's to resolve, not the caller's to retry.
  store::WorkspaceWrite stop;
  stop.kind = store::WorkspaceWrite::Kind::kStop;
  stop.workspace.id = id;
  stop.end_reason = reason;
  stop.from.version = expected_version;
  store::WriteOutcome after = stores_.placement->Write(stop);
  // A guarded stop that finds a newer record must not be repeated on it.
  const int attempts = expected_version != 0 ? 1 : options_.place_attempts;
  for (int attempt = 1; absl::IsAborted(after.status) && attempt < attempts; ++attempt) {
    after = stores_.placement->Write(stop);
  }
  if (!after.status.ok()) return after.status;
  mirror_->Apply(*after.row);  // Notes the pool its capacity returned to.
  return *after.row;
}

absl::StatusOr<WorkspaceView> Scheduler::StopWorkspace(const std::string& id,
                                                        core::EndReason reason) {
  auto after = StopAndMirror(id, reason);
  if (!after.ok()) return after.status();
  return ViewOfStored(*after);
}

absl::StatusOr<WorkspaceView> Scheduler::GetWorkspace(const std::string& id) {
  absl::StatusOr<std::optional<store::WorkspaceRow>> stored = stores_.placement->LoadWorkspace(id);
  if (!stored.ok()) return stored.status();
  if (!*stored) return core::NotFoundError(core::ErrorReason::kWorkspaceNotFound, "workspace", id);
  return ViewOfStored(**stored);
}

absl::StatusOr<WorkspaceView> Scheduler::RefreshWorkspace(const std::string& id,
                                                          const WorkspaceView* last) {
  if (last != nullptr && last->workspace.id == id) {
    const int64_t known = mirror_->KnownVersion(id);
    if (known <= last->version) return ViewOfStored({last->workspace, last->version, false});
  }
  return GetWorkspace(id);
}

absl::StatusOr<core::Page<WorkspaceView>> Scheduler::ListWorkspaces(
    const store::WorkspaceFilter& filter, const core::PageRequest& page) {
  absl::StatusOr<std::vector<core::Workspace>> stored =
      stores_.placement->ListWorkspaces(filter, page.after, page.size + 1);
  if (!stored.ok()) return stored.status();
  std::vector<WorkspaceView> views;
  LimitsMemo limits;
  for (const auto& w : *stored) {
    auto view = ViewOfStored({w, 0, false}, &limits);
    if (!view.ok()) return view.status();
    views.push_back(std::move(*view));
  }
  return core::PageFromRows(std::move(views), page,
                            [](const WorkspaceView& view) { return view.workspace.id; });
}

}  // namespace wsched::scheduler
