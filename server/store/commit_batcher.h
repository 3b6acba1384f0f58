// Group commit: workspace writes that arrive together are committed
// together, in one transaction of a fixed handful of set-based statements
// (write_batch.h), so throughput is not capped at one commit per placement
// (the LevelDB DBImpl::Write idea). One writer thread: batches never hold
// node rows at the same time, so they cannot deadlock or wait on each
// other's locks; writes that arrive during a commit form the next batch.
#ifndef WSCHED_SERVER_STORE_COMMIT_BATCHER_H_
#define WSCHED_SERVER_STORE_COMMIT_BATCHER_H_

#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "server/store/database.h"
#include "server/store/types.h"

namespace wsched::store {

class CommitBatcher {
 public:
  struct Options {
    int max_batch = 128;
    // How long a batch's first write waits for company when the writer is
    // idle. Zero: batches form only from writes that arrive during the
    // previous commit (lowest latency at low load).
    absl::Duration max_wait = absl::ZeroDuration();
    // A new GPU placement's first interval, committed against spending
    // limits (CommitWrites).
    absl::Duration budget_interval = absl::Seconds(60);
  };
  // Told once per committed (or failed) batch.
  struct BatchReport {
    int writes = 0;
    int statements = 0;
    int round_trips = 0;
    absl::Duration duration;       // BEGIN to COMMIT.
    absl::Duration oldest_wait;    // Queued before the batch began, at most.
    bool committed = false;
  };
  using Observer = std::function<void(const BatchReport&)>;

  CommitBatcher(Database* db, Options options, Observer observer = nullptr);
  ~CommitBatcher();  // Stops after draining the queue.
  CommitBatcher(const CommitBatcher&) = delete;
  CommitBatcher& operator=(const CommitBatcher&) = delete;

  // Runs `write` in the next batch and waits for the commit. A failed
  // commit fails every write of the batch (UNAVAILABLE or ABORTED).
  WriteOutcome Run(WorkspaceWrite write);
  // Queues every write at once, so they share batches (up to max_batch
  // each), and waits for all: a queue drain placing many workspaces costs
  // a few commits, not one per workspace. Outcomes in the order given.
  std::vector<WriteOutcome> RunAll(std::vector<WorkspaceWrite> writes);

 private:
  struct Pending {
    WorkspaceWrite write;
    WriteOutcome outcome;
    absl::Time queued;
    absl::Notification done;
  };

  void WriterLoop();
  void CommitBatch(std::vector<std::shared_ptr<Pending>>& batch);
  // Commits `writes` on the writer's own connection, opening it (again)
  // when needed; rolls back what a failure left open.
  absl::Status Commit(const std::vector<WorkspaceWrite>& writes, std::vector<WriteOutcome>& outcomes,
                      BatchStatements& stats);
  // (Re)opens the writer's connection; connection_ is null on failure.
  absl::Status OpenWriterConnection();
  // Tells db_ (and so health) whether the writer can commit.
  void SetFailing(bool failing) { db_->SetWriterFailing(failing); }
  void RefreshPlansWhenDue();  // Throws what libpqxx throws.

  static constexpr int64_t kFirstPlanRefresh = 16;
  static constexpr int64_t kPlanRefreshEvery = 4096;
  // How often an idle writer without a connection tries to reconnect.
  static constexpr absl::Duration kReconnectEvery = absl::Milliseconds(500);

  Database* const db_;
  const Options options_;
  const Observer observer_;
  absl::Mutex mu_;
  std::deque<std::shared_ptr<Pending>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Only the writer thread touches it.
  std::unique_ptr<Connection> connection_;
  int64_t batches_on_connection_ = 0;
  int64_t next_plan_refresh_ = kFirstPlanRefresh;
  std::thread writer_;
};

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_COMMIT_BATCHER_H_
