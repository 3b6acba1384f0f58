#include "server/store/commit_batcher.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/store/pg_status.h"

namespace wsched::store {

CommitBatcher::CommitBatcher(Database* db, Options options, Observer observer)
    : db_(db), options_(options), observer_(std::move(observer)), writer_([this] { WriterLoop(); }) {}

CommitBatcher::~CommitBatcher() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  writer_.join();
}

WriteOutcome CommitBatcher::Run(WorkspaceWrite write) {
  auto pending = std::make_shared<Pending>();
  pending->write = std::move(write);
  pending->queued = absl::Now();
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return {absl::UnavailableError("shutting down")};
    queue_.push_back(pending);
  }
  pending->done.WaitForNotification();
  return std::move(pending->outcome);
}

void CommitBatcher::WriterLoop() {
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); };
  auto full = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || static_cast<int>(queue_.size()) >= options_.max_batch;
  };
  while (true) {
    std::vector<std::shared_ptr<Pending>> batch;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // Stopping and drained.
      if (options_.max_wait > absl::ZeroDuration()) {
        mu_.AwaitWithDeadline(absl::Condition(&full), queue_.front()->queued + options_.max_wait);
      }
      while (!queue_.empty() && static_cast<int>(batch.size()) < options_.max_batch) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    CommitBatch(batch);
  }
}

void CommitBatcher::CommitBatch(std::vector<std::shared_ptr<Pending>>& batch) {
  const absl::Time start = absl::Now();
  std::vector<WorkspaceWrite> writes;
  writes.reserve(batch.size());
  for (const auto& pending : batch) writes.push_back(pending->write);
  std::vector<WriteOutcome> outcomes;
  BatchStatements stats;
  absl::Status commit = Commit(writes, outcomes, stats);
  if (observer_) {
    observer_({static_cast<int>(batch.size()), stats.statements, stats.round_trips, absl::Now() - start,
               start - batch.front()->queued, commit.ok()});
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    if (commit.ok()) {
      batch[i]->outcome = std::move(outcomes[i]);
    } else {
      batch[i]->outcome = {commit};
    }
    batch[i]->done.Notify();
  }
}


absl::Status CommitBatcher::Commit(const std::vector<WorkspaceWrite>& writes,
                                   std::vector<WriteOutcome>& outcomes, BatchStatements& stats) {
  constexpr absl::string_view kWhat = "group commit";
  if (connection_ == nullptr || !connection_->is_open()) {
    auto connection = OpenConnection(db_->url());
    if (!connection.ok()) return absl::UnavailableError(absl::StrCat(kWhat, ": ", connection.status().message()));
    connection_ = std::move(*connection);
    try {
      // Every statement of a batch is a lookup by key. A generic plan made
      // while a table was nearly empty (a fresh install, a new pool) would
      // stay a sequential scan as the table grows, until an ANALYZE, and the
      // single writer would pay it on every batch; the foreign-key checks
      // of gpu_holds too. Planning each execution with the table's current
      // size costs far less than that.
      pqxx::nontransaction setup(*connection_);
      setup.exec0("SET plan_cache_mode = force_custom_plan");
    } catch (...) {
      connection_.reset();
      return StatusFromCurrentException(kWhat);
    }
  }
  absl::Status status;
  try {
    outcomes = CommitWrites(*connection_, writes, stats);
    return absl::OkStatus();
  } catch (...) {
    status = StatusFromCurrentException(kWhat);
  }
  // The failed batch may have left its transaction open (aborted). A
  // connection that broke is dropped and reopened for the next batch.
  if (absl::IsUnavailable(status)) {
    connection_.reset();
    return status;
  }
  try {
    pqxx::nontransaction(*connection_).exec0("ROLLBACK");
  } catch (...) {
    connection_.reset();
  }
  return status;
}

}  // namespace wsched::store
