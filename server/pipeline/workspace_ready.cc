#include "server/pipeline/workspace_ready.h"

#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"
#include "server/core/ready_report.h"

namespace wsched::pipeline {

absl::StatusOr<WorkspaceView> WorkspaceReady::Report(const std::string& id,
                                                     std::optional<absl::Time> ready_time) {
  for (int attempt = 0; attempt < attempts_; ++attempt) {
    absl::StatusOr<std::optional<store::WorkspaceRow>> stored = store_->LoadWorkspace(id);
    if (!stored.ok()) return stored.status();
    if (!*stored) {
      return core::NotFoundError(core::ErrorReason::kWorkspaceNotFound, "workspace", id);
    }
    absl::StatusOr<std::optional<absl::Time>> ready =
        core::JudgeReadyReport((*stored)->workspace, ready_time, clock_());
    if (!ready.ok()) return ready.status();
    if (!*ready) return views_->Of(**stored);  // Reported before: nothing more to record.
    absl::StatusOr<std::optional<store::WorkspaceRow>> written =
        store_->RecordReady(**stored, **ready);
    if (!written.ok()) return written.status();
    if (*written) {
      if (sampled_) sampled_();
      return views_->Of(**written);
    }
    // Another write (a stop, an idle mark, another report) came between
    // the read and the write: judge the record as it is now.
  }
  return absl::AbortedError(absl::StrCat("workspace ", id,
                                         " kept changing while its ready report was recorded; "
                                         "retry"));
}

}  // namespace wsched::pipeline
