// Deletes stopped workspace rows once they are older than the retention
// (--stopped_workspace_retention), so the workspaces table and its indexes
// grow with what is live and recent, not with everything that ever ran; and,
// on retentions of their own, audit records (--audit_retention) and usage
// records (--usage_retention: the ledger outlives the workspace rows it
// came from).
//
// Runs on one replica at a time (the scaling leader: `leading` says whether
// this one is), in small batches with a pause between them: each batch is
// its own short transaction that skips rows others hold, so placements never
// queue behind a sweep.
#ifndef WSCHED_SERVER_SCHEDULER_WORKSPACE_RETENTION_H_
#define WSCHED_SERVER_SCHEDULER_WORKSPACE_RETENTION_H_

#include <cstdint>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/store/database.h"

namespace wsched::store {
class UnitOfWork;
}

namespace wsched::scheduler {

struct RetentionOptions {
  // Stopped rows older than this go; zero keeps them forever.
  absl::Duration retention = absl::Hours(7 * 24);
  absl::Duration sweep_interval = absl::Minutes(1);  // Between sweeps.
  int batch_rows = 500;                              // Rows per DELETE.
  absl::Duration batch_pause = absl::Milliseconds(100);  // Between batches of one sweep.
  // Audit records older than this go too (--audit_retention); zero keeps them.
  absl::Duration audit_retention = absl::ZeroDuration();
  // Usage records that ended longer ago than this (--usage_retention); zero keeps them.
  absl::Duration usage_retention = absl::ZeroDuration();
};

class WorkspaceRetention {
 public:
  WorkspaceRetention(store::Database* db, RetentionOptions options, std::function<bool()> leading);
  ~WorkspaceRetention();
  WorkspaceRetention(const WorkspaceRetention&) = delete;
  WorkspaceRetention& operator=(const WorkspaceRetention&) = delete;

  // Starts the sweeping thread (nothing when the retention is zero).
  void Start();
  void Stop();

  // One sweep, whoever leads: batches until one deletes fewer than
  // batch_rows, a batch fails, or Stop. Returns the rows deleted (none
  // with a zero retention).
  absl::StatusOr<int64_t> Sweep();
  // The same for audit records past audit_retention.
  absl::StatusOr<int64_t> SweepAudit();
  // The same for usage records that ended before usage_retention.
  absl::StatusOr<int64_t> SweepUsage();

 private:
  void Loop();
  // Logs one sweep's outcome: "deleted <what> past the retention".
  static void Report(absl::string_view what, const absl::StatusOr<int64_t>& deleted,
                     absl::Duration retention);
  // Runs `batch` (rows deleted, at most batch_rows) until it deletes fewer.
  absl::StatusOr<int64_t> InBatches(absl::string_view what,
                                    const std::function<int64_t(store::UnitOfWork&)>& batch);
  // Waits up to `timeout`; true when stopping.
  bool WaitForStop(absl::Duration timeout);

  store::Database* const db_;
  const RetentionOptions options_;
  const std::function<bool()> leading_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread loop_;
};

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_WORKSPACE_RETENTION_H_
