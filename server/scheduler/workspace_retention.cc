#include "server/scheduler/workspace_retention.h"

#include "absl/strings/str_cat.h"
#include "server/log/log.h"
#include "server/store/unit_of_work.h"

namespace wsched::scheduler {

WorkspaceRetention::WorkspaceRetention(store::Database* db, RetentionOptions options,
                                       std::function<bool()> leading)
    : db_(db), options_(options), leading_(std::move(leading)) {}

WorkspaceRetention::~WorkspaceRetention() { Stop(); }

void WorkspaceRetention::Start() {
  if (options_.retention <= absl::ZeroDuration() || loop_.joinable()) return;
  loop_ = std::thread([this] { Loop(); });
}

void WorkspaceRetention::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (loop_.joinable()) loop_.join();
}

bool WorkspaceRetention::WaitForStop(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&stopping_), timeout);
  return stopping_;
}

absl::StatusOr<int64_t> WorkspaceRetention::Sweep() {
  int64_t deleted = 0;
  if (options_.retention <= absl::ZeroDuration()) return deleted;  // Kept forever.
  while (true) {
    int64_t batch = 0;
    absl::Status status = store::UnitOfWork::Run(*db_, "deleting stopped workspaces",
                                                 [&](store::UnitOfWork& unit) -> absl::Status {
      batch = unit.workspaces().DeleteEnded(options_.retention, options_.batch_rows);
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    deleted += batch;
    if (batch < options_.batch_rows) return deleted;
    // Leaves the database to placements for a moment between batches.
    if (WaitForStop(options_.batch_pause)) return deleted;
  }
}

void WorkspaceRetention::Loop() {
  while (!WaitForStop(options_.sweep_interval)) {
    if (!leading_()) continue;
    absl::StatusOr<int64_t> deleted = Sweep();
    if (!deleted.ok()) {
      log::Warning("deleting stopped workspaces failed",
                   {{"error", std::string(deleted.status().message())}});
    } else if (*deleted > 0) {
      log::Info("deleted stopped workspaces past the retention",
                {{"rows", absl::StrCat(*deleted)},
                 {"retention", absl::FormatDuration(options_.retention)}});
    }
  }
}

}  // namespace wsched::scheduler
