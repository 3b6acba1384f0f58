#include "server/store/commit_batcher.h"

#include "server/store/pg_status.h"

namespace wsched::store {

CommitBatcher::CommitBatcher(Database* db, int writers, int max_batch)
    : db_(db), max_batch_(max_batch) {
  for (int i = 0; i < writers; ++i) writers_.emplace_back([this] { WriterLoop(); });
}

CommitBatcher::~CommitBatcher() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (auto& writer : writers_) writer.join();
}

absl::Status CommitBatcher::Run(Job job) {
  auto pending = std::make_shared<Pending>();
  pending->job = std::move(job);
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return absl::UnavailableError("shutting down");
    queue_.push_back(pending);
  }
  pending->done.WaitForNotification();
  return pending->result;
}

CommitBatcher::Stats CommitBatcher::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void CommitBatcher::WriterLoop() {
  while (true) {
    std::vector<std::shared_ptr<Pending>> batch;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](CommitBatcher* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
            return self->stopping_ || !self->queue_.empty();
          },
          this));
      if (queue_.empty()) return;  // Stopping and drained.
      while (!queue_.empty() && static_cast<int>(batch.size()) < max_batch_) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      stats_.transactions++;
      stats_.jobs += batch.size();
    }
    CommitBatch(batch);
  }
}

void CommitBatcher::CommitBatch(std::vector<std::shared_ptr<Pending>>& batch) {
  absl::Status commit = db_->InTransaction("group commit", [&](pqxx::work& txn) -> absl::Status {
    ChangeSet published;
    for (auto& pending : batch) {
      // A savepoint per job: a job that loses a race rolls back alone.
      txn.exec("SAVEPOINT job");
      bool ok = false;
      ChangeSet changes;
      try {
        pending->result = pending->job(txn, changes);
        ok = pending->result.ok();
        if (ok) published.Append(changes);
      } catch (...) {
        pending->result = StatusFromCurrentException("placement commit");
      }
      txn.exec(ok ? "RELEASE SAVEPOINT job" : "ROLLBACK TO SAVEPOINT job");
    }
    // Last: it holds the change-log head until COMMIT. It also proves the
    // transaction healthy (PostgreSQL answers a COMMIT of a failed
    // transaction with a silent rollback).
    PublishChanges(txn, published);
    txn.exec("SELECT 1");
    return absl::OkStatus();
  });
  for (auto& pending : batch) {
    if (!commit.ok() && pending->result.ok()) pending->result = commit;
    pending->done.Notify();
  }
}

}  // namespace wsched::store
