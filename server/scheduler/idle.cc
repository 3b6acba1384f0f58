// The replica's side of the idle-GPU policy (idle_monitor.h): the mirror's
// versions and marks, the mark written on the record, and the guarded stop.
#include "absl/strings/str_cat.h"
#include "server/core/usage.h"
#include "server/scheduler/idle_actions.h"
#include "server/store/unit_of_work.h"

namespace wsched::scheduler {

void Scheduler::WireIdleMonitor() {
  idle_actions_ = std::make_unique<IdleActions>(this);
  IdleMonitor::Options options;
  options.stale_after = options_.idle_stale_after > absl::ZeroDuration()
                            ? options_.idle_stale_after
                            : 3 * options_.heartbeat_interval;
  idle_ = std::make_unique<IdleMonitor>(idle_actions_.get(), options, clock_);
  // Called by the heartbeat after UsageAccounting's lock, never under ours.
  inventory_->usage().SetObserver(
      [monitor = idle_.get()](const UsageAccounting::Report& report) { monitor->Observe(report); });
}

absl::flat_hash_map<std::string, IdleMonitor::Actions::Known> Scheduler::IdleActions::KnownOf(
    const std::vector<std::string>& ids) {
  absl::flat_hash_map<std::string, Known> known;
  for (auto& [id, placed] : scheduler_->mirror_->PlacedOf(ids)) {
    known[id] = {placed.version, std::move(placed.idle)};
  }
  return known;
}

absl::StatusOr<int64_t> Scheduler::IdleActions::Mark(const std::string& workspace, int64_t version,
                                                     const std::optional<core::IdleMark>& mark) {
  if (scheduler_->stores_.db == nullptr) return absl::FailedPreconditionError("no database to mark in");
  std::optional<int64_t> written;
  absl::Status status = store::UnitOfWork::Run(*scheduler_->stores_.db, "marking workspace idle",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    written = unit.workspaces().SetIdleMark(workspace, version, mark);
    if (!written) {
      return absl::AbortedError(
          absl::StrCat("workspace ", workspace, " is no longer placed at version ", version));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  // Mirrored at once, so this replica's watchers wake and the monitor's
  // next look at the mirror finds the mark.
  if (absl::Status caught_up = scheduler_->CatchUp(); !caught_up.ok()) return caught_up;
  return *written;
}

absl::Status Scheduler::StopIdleWorkspace(const std::string& id, int64_t version) {
  absl::StatusOr<store::WorkspaceRow> stopped = StopAndMirror(id, core::EndReason::kIdle, version);
  return stopped.status();
}

}  // namespace wsched::scheduler
