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
  if ((options_.retention <= absl::ZeroDuration() &&
       options_.audit_retention <= absl::ZeroDuration() &&
       options_.usage_retention <= absl::ZeroDuration()) ||
      loop_.joinable()) {
    return;
  }
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
  if (options_.retention <= absl::ZeroDuration()) return 0;  // Kept forever.
  return InBatches("deleting stopped workspaces", [this](store::UnitOfWork& unit) {
    return unit.workspaces().DeleteEnded(options_.retention, options_.batch_rows);
  });
}

absl::StatusOr<int64_t> WorkspaceRetention::SweepAudit() {
  if (options_.audit_retention <= absl::ZeroDuration()) return 0;  // Kept forever.
  return InBatches("deleting old audit records", [this](store::UnitOfWork& unit) {
    return unit.audit().DeleteOlderThan(options_.audit_retention, options_.batch_rows);
  });
}

absl::StatusOr<int64_t> WorkspaceRetention::SweepUsage() {
  if (options_.usage_retention <= absl::ZeroDuration()) return 0;  // Kept forever.
  return InBatches("deleting old usage records", [this](store::UnitOfWork& unit) {
    return unit.usage().DeleteOlderThan(options_.usage_retention, options_.batch_rows);
  });
}

absl::StatusOr<int64_t> WorkspaceRetention::InBatches(
    absl::string_view what, const std::function<int64_t(store::UnitOfWork&)>& run_batch) {
  int64_t deleted = 0;
  while (true) {
    int64_t batch = 0;
    absl::Status status =
        store::UnitOfWork::Run(*db_, what, [&](store::UnitOfWork& unit) -> absl::Status {
      batch = run_batch(unit);
      return absl::OkStatus();
    }, store::UnitOfWork::Mode::kReadWrite, store::UnitOfWork::Bound::kLong);
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
    Report("stopped workspaces", Sweep(), options_.retention);
    Report("audit records", SweepAudit(), options_.audit_retention);
    Report("usage records", SweepUsage(), options_.usage_retention);
  }
}

void WorkspaceRetention::Report(absl::string_view what, const absl::StatusOr<int64_t>& deleted,
                                absl::Duration retention) {
  if (!deleted.ok()) {
    log::Warning(absl::StrCat("deleting ", what, " failed"),
                 {{"error", std::string(deleted.status().message())}});
  } else if (*deleted > 0) {
    log::Info(absl::StrCat("deleted ", what, " past the retention"),
              {{"rows", absl::StrCat(*deleted)}, {"retention", absl::FormatDuration(retention)}});
  }
}

}  // namespace wsched::scheduler
