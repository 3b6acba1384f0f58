#include "server/grpc/workspace_message.h"

#include <google/protobuf/util/time_util.h>

#include <string>

#include "server/convert/convert.h"
#include "server/core/class_resolution.h"
#include "server/core/mig.h"
#include "server/core/spending_limit.h"

namespace wsched::grpc_api {
namespace {

using google::protobuf::util::TimeUtil;

v1::ClassSource SourceFromName(const std::string& name) {
  for (auto source : {core::ClassSource::kRequest, core::ClassSource::kPrevious,
                      core::ClassSource::kProjectDefault, core::ClassSource::kOrgDefault,
                      core::ClassSource::kInstallationDefault}) {
    if (name == core::ClassSourceName(source))
      return static_cast<v1::ClassSource>(static_cast<int>(source) + 1);
  }
  return v1::CLASS_SOURCE_UNSPECIFIED;
}

v1::PendingFix::Kind FixKindToProto(placement::FixKind kind) {
  switch (kind) {
    case placement::FixKind::kWait: return v1::PendingFix::KIND_WAIT;
    case placement::FixKind::kUseClass: return v1::PendingFix::KIND_USE_CLASS;
    case placement::FixKind::kUncordonNode: return v1::PendingFix::KIND_UNCORDON_NODE;
    case placement::FixKind::kStopIdleWorkspace:
      return v1::PendingFix::KIND_STOP_IDLE_WORKSPACE;
    case placement::FixKind::kRaiseOrgGpuQuota: return v1::PendingFix::KIND_RAISE_ORG_GPU_QUOTA;
    case placement::FixKind::kRaiseSpendingLimit:
      return v1::PendingFix::KIND_RAISE_SPENDING_LIMIT;
    case placement::FixKind::kRaisePoolMaxSize: return v1::PendingFix::KIND_RAISE_POOL_MAX_SIZE;
  }
  return v1::PendingFix::KIND_UNSPECIFIED;
}

v1::PendingFix::Applier ApplierToProto(placement::FixApplier applier) {
  switch (applier) {
    case placement::FixApplier::kProjectOwner: return v1::PendingFix::APPLIER_PROJECT_OWNER;
    case placement::FixApplier::kOrgAdmin: return v1::PendingFix::APPLIER_ORG_ADMIN;
    case placement::FixApplier::kAdmin: return v1::PendingFix::APPLIER_ADMIN;
  }
  return v1::PendingFix::APPLIER_UNSPECIFIED;
}

// As PendingToProto's code: the enums share their order, shifted by UNSPECIFIED.
v1::PendingReasonCode CodeToProto(placement::PendingCode code) {
  return static_cast<v1::PendingReasonCode>(static_cast<int>(code) + 1);
}

void FixToProto(const placement::PendingFix& fix, v1::PendingFix* out) {
  out->set_kind(FixKindToProto(fix.kind));
  out->set_applier(ApplierToProto(fix.applier));
  out->set_detail(fix.detail);
  out->set_class_id(fix.class_id);
  out->set_credits_per_minute_milli(fix.credits_per_minute_milli);
  // Where the fix acts, else where its outcome is.
  out->set_pool(!fix.pool.empty() ? fix.pool : fix.outcome.pool);
  out->set_node(!fix.node.empty() ? fix.node : fix.outcome.node);
  out->set_outcome_pool(fix.outcome.pool);
  out->set_outcome_node(fix.outcome.node);
  out->set_max_size(fix.max_size);
  out->set_gpu_quota(fix.gpu_quota);
  if (fix.kind == placement::FixKind::kRaiseSpendingLimit) {
    // In GPU-hours, as SpendingLimit.gpu_hours: set exactly this and the
    // limit enforced is spending_limit to the GPU-microsecond.
    out->set_spending_limit_scope(fix.spending_scope);
    out->set_spending_limit_gpu_hours(static_cast<double>(fix.spending_limit) /
                                      core::kGpuMicrosPerGpuHour);
    out->set_spending_limit_raise_by_gpu_hours(static_cast<double>(fix.raise_by) /
                                               core::kGpuMicrosPerGpuHour);
  } else {
    out->set_raise_by(fix.raise_by);
  }
  if (fix.kind == placement::FixKind::kWait) out->set_wait_for(CodeToProto(fix.wait_for));
  out->set_outcome(CodeToProto(fix.outcome.code));
  if (fix.kind == placement::FixKind::kStopIdleWorkspace) {
    out->set_workspace_id(fix.workspace_id);
    out->set_project_id(fix.project_id);
    *out->mutable_idle_for() =
        TimeUtil::MicrosecondsToDuration(absl::ToInt64Microseconds(fix.idle_for));
  }
}

}  // namespace

v1::WorkspaceState StateToProto(core::WorkspaceState state) {
  switch (state) {
    case core::WorkspaceState::kPending: return v1::WORKSPACE_STATE_PENDING;
    case core::WorkspaceState::kPlaced: return v1::WORKSPACE_STATE_PLACED;
    case core::WorkspaceState::kStopped: return v1::WORKSPACE_STATE_STOPPED;
    case core::WorkspaceState::kLost: return v1::WORKSPACE_STATE_LOST;
  }
  return v1::WORKSPACE_STATE_UNSPECIFIED;
}

google::protobuf::Timestamp TimestampOf(absl::Time t) {
  return TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(t));
}

namespace {

// A budget mark of `kind` written for the placement the workspace has now
// (a restarted workspace's record may still carry its previous one's).
bool BudgetMarkOfPlacement(const core::Workspace& w, core::BudgetMark::Kind kind) {
  return w.state == core::WorkspaceState::kPlaced && w.budget && w.budget->kind == kind &&
         core::MarkOfPlacement(*w.budget, w.placed_at);
}

void BudgetEventToProto(const core::BudgetMark& mark, v1::WorkspaceEvent* event) {
  if (mark.kind == core::BudgetMark::Kind::kWarning) {
    event->set_kind(v1::WorkspaceEvent::KIND_BUDGET_WARNING);
    *event->mutable_stops_at() = TimestampOf(mark.stops_at);
  } else {
    event->set_kind(v1::WorkspaceEvent::KIND_BUDGET_THRESHOLD);
    event->set_percent(mark.percent);
  }
  event->set_budget_scope(mark.scope);
  event->set_spent_gpu_seconds(core::GpuSecondsFigure(mark.spent));
  event->set_limit_gpu_seconds(core::GpuSecondsFigure(mark.limit));
  *event->mutable_period_end() = TimestampOf(mark.period_end);
}

}  // namespace

void PendingToProto(const placement::PendingReason& reason, v1::PendingReason* out) {
  // The enums share their order (placement/pending_reason.h), shifted by
  // UNSPECIFIED.
  out->set_code(static_cast<v1::PendingReasonCode>(static_cast<int>(reason.code) + 1));
  out->set_detail(reason.detail);
  out->set_pool(reason.pool);
  out->set_node(reason.node);
  out->set_kernel_version(reason.kernel);
  out->set_installer_image(reason.image);
  // Whole GPUs on the wire: a slice's share rounds up.
  out->set_org_gpus_held((reason.quota.held_sevenths + core::kMigComputeSlices - 1) /
                         core::kMigComputeSlices);
  out->set_org_gpu_quota(reason.quota.quota);
  out->set_gpus_needed(reason.gpus_needed);
  if (reason.since) *out->mutable_since() = TimestampOf(*reason.since);
  if (reason.until) *out->mutable_until() = TimestampOf(*reason.until);
}

v1::PlacementQuote::When WhenToProto(placement::QuoteWhen when) {
  switch (when) {
    case placement::QuoteWhen::kNow:
      return v1::PlacementQuote::WHEN_NOW;
    case placement::QuoteWhen::kAfterScaleUp:
      return v1::PlacementQuote::WHEN_AFTER_SCALE_UP;
    case placement::QuoteWhen::kAfterDriverInstall:
      return v1::PlacementQuote::WHEN_AFTER_DRIVER_INSTALL;
  }
  return v1::PlacementQuote::WHEN_UNSPECIFIED;
}

// Whole GPUs, rounded up as PendingReason.org_gpus_held is.
int64_t WholeGpus(int64_t sevenths) {
  return (sevenths + core::kMigComputeSlices - 1) / core::kMigComputeSlices;
}

void QuoteToProto(const pipeline::QuoteView& view, v1::PlacementQuote* out) {
  const placement::Quote& q = view.quote;
  out->set_class_id(q.class_id);
  out->set_pool(q.pool);
  out->set_gpu_model(q.gpu_model);
  out->set_when(WhenToProto(q.when));
  out->set_node(q.node);
  if (q.estimate) {
    *out->mutable_estimate() =
        TimeUtil::MicrosecondsToDuration(absl::ToInt64Microseconds(*q.estimate));
  }
  out->set_estimate_basis(q.estimate_basis);
  out->set_credits_per_minute_milli(q.credits_per_minute_milli);
  out->set_gpus(q.gpus);
  out->set_org_gpus_held(WholeGpus(q.org_sevenths_held));
  out->set_org_gpus_after(WholeGpus(q.org_sevenths_after));
  out->set_org_gpu_quota(q.org_gpu_quota.value_or(-1));
  out->set_detail(q.detail);
  out->set_quote_token(view.token);
}

google::protobuf::Duration DurationOf(absl::Duration d) {
  return TimeUtil::MicrosecondsToDuration(absl::ToInt64Microseconds(d));
}

v1::EstimatePhase::Kind PhaseKindToProto(placement::PhaseKind kind) {
  switch (kind) {
    case placement::PhaseKind::kQueue: return v1::EstimatePhase::KIND_QUEUE;
    case placement::PhaseKind::kBackoff: return v1::EstimatePhase::KIND_BACKOFF;
    case placement::PhaseKind::kCloudStart: return v1::EstimatePhase::KIND_CLOUD_START;
    case placement::PhaseKind::kNodeBoot: return v1::EstimatePhase::KIND_NODE_BOOT;
    case placement::PhaseKind::kDriverInstall: return v1::EstimatePhase::KIND_DRIVER_INSTALL;
    case placement::PhaseKind::kFirstReady: return v1::EstimatePhase::KIND_FIRST_READY;
  }
  return v1::EstimatePhase::KIND_UNSPECIFIED;
}

void PhaseToProto(const placement::EstimatePhase& phase, v1::EstimatePhase* out) {
  out->set_kind(PhaseKindToProto(phase.kind));
  *out->mutable_p50() = DurationOf(phase.p50);
  *out->mutable_p90() = DurationOf(phase.p90);
  out->set_samples(phase.samples);
  out->set_default_used(phase.default_used);
  *out->mutable_elapsed() = DurationOf(phase.elapsed);
  *out->mutable_remaining_p50() = DurationOf(phase.remaining_p50);
  *out->mutable_remaining_p90() = DurationOf(phase.remaining_p90);
}

absl::Status WorkspaceToProto(const pipeline::WorkspaceView& view, v1::Workspace* out) {
  const core::Workspace& w = view.workspace;
  if (w.hand_off != nullptr && w.state != core::WorkspaceState::kStopped) {
    convert::ToProto(*w.hand_off, out);
  }
  out->set_id(w.id);
  out->set_org_id(w.org_id);
  out->set_project_id(w.project_id);
  out->set_user_id(w.user_id);
  out->set_class_id(w.class_id);
  out->set_class_explanation(w.explanation);
  out->set_class_source(SourceFromName(w.class_source));
  // A dry run's workspace does not exist: no state.
  out->set_state(view.quote_only ? v1::WORKSPACE_STATE_UNSPECIFIED : StateToProto(w.state));
  for (const pipeline::QuoteView& quote : view.quotes) QuoteToProto(quote, out->add_quotes());
  if (!view.quotes.empty()) out->set_quote_token(view.quotes.front().token);
  if (w.state == core::WorkspaceState::kPlaced || w.state == core::WorkspaceState::kLost) {
    out->set_node_name(w.node_name);
    out->set_pool(w.pool);
  }
  out->set_pending_reason(w.pending_reason);
  if (view.pending) PendingToProto(*view.pending, out->mutable_pending());
  out->set_estimate_basis(view.estimate_basis);
  out->set_queue_position(view.queue_position);
  if (view.estimated_wait) {
    *out->mutable_estimated_time_to_place() =
        TimeUtil::MicrosecondsToDuration(absl::ToInt64Microseconds(*view.estimated_wait));
    // The seconds field stays filled until v2 for the clients that read it;
    // its accessors are deprecated for readers, not for this one writer.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    out->set_estimated_seconds_to_place(absl::ToInt64Seconds(*view.estimated_wait));
#pragma GCC diagnostic pop
  }
  for (const placement::EstimatePhase& phase : view.estimate_phases) {
    PhaseToProto(phase, out->add_estimate_phases());
  }
  if (view.estimated_to_ready) {
    *out->mutable_estimated_time_to_ready() = DurationOf(*view.estimated_to_ready);
  }
  if (w.ready_at) *out->mutable_ready_time() = TimestampOf(*w.ready_at);
  if (w.created_at != absl::InfinitePast()) {
    *out->mutable_created_at() =
        TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(w.created_at));
  }
  if (w.placed_at != absl::InfinitePast()) {
    *out->mutable_placed_at() = TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(w.placed_at));
  }
  // Only a placed workspace's GPUs can sit idle; a stopped one keeps its
  // last mark in the row, which says nothing any more. A budget warning
  // goes first: it says when the workspace stops whatever its GPUs do.
  if (BudgetMarkOfPlacement(w, core::BudgetMark::Kind::kWarning)) {
    BudgetEventToProto(*w.budget, out->mutable_event());
  } else if (w.idle && w.state == core::WorkspaceState::kPlaced) {
    v1::WorkspaceEvent* event = out->mutable_event();
    event->set_kind(v1::WorkspaceEvent::KIND_IDLE);
    *event->mutable_idle_since() = TimestampOf(w.idle->since);
    if (w.idle->stops_at) *event->mutable_stops_at() = TimestampOf(*w.idle->stops_at);
  } else if (BudgetMarkOfPlacement(w, core::BudgetMark::Kind::kThreshold)) {
    BudgetEventToProto(*w.budget, out->mutable_event());
  }
  return absl::OkStatus();
}

bool MayApplyFix(const Principal& caller, const core::Workspace& w,
                 const placement::PendingFix& fix) {
  if (caller.Has(Role::kAdmin)) return true;
  if (fix.applier != placement::FixApplier::kProjectOwner) return false;
  if (caller.Has(Role::kControlPlane)) return true;
  // A fix that acts on another workspace (an idle one to stop) is the
  // business of that workspace's project.
  const std::string& project = fix.project_id.empty() ? w.project_id : fix.project_id;
  return caller.Has(Role::kProjectOwner) && caller.CoversProject(w.org_id, project) &&
         caller.CoversProject(w.org_id, w.project_id);
}

void FixesToProto(const pipeline::WorkspaceView& view, const Principal& caller,
                  v1::Workspace* out) {
  for (const placement::PendingFix& fix : view.fixes) {
    if (MayApplyFix(caller, view.workspace, fix)) FixToProto(fix, out->add_fixes());
  }
}

}  // namespace wsched::grpc_api
