#include "server/pipeline/workspace_stops.h"

#include "absl/strings/str_cat.h"

namespace wsched::pipeline {

absl::StatusOr<store::WorkspaceRow> WorkspaceStops::Stop(const std::string& id,
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
  store::WriteOutcome after = store_->Write(stop);
  // A guarded stop that finds a newer record must not be repeated on it.
  const int attempts = expected_version != 0 ? 1 : attempts_;
  for (int attempt = 1; absl::IsAborted(after.status) && attempt < attempts; ++attempt) {
    after = store_->Write(stop);
  }
  if (!after.status.ok()) return after.status;
  mirror_->Apply(*after.row);  // Notes the pool its capacity returned to.
  return *after.row;
}

absl::StatusOr<WorkspaceView> WorkspaceStops::StopWorkspace(const std::string& id,
                                                            core::EndReason reason) {
  absl::StatusOr<store::WorkspaceRow> after = Stop(id, reason);
  if (!after.ok()) return after.status();
  return views_->Of(*after);
}

}  // namespace wsched::pipeline
