#include "server/store/commit_batcher.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/core/error_reason.h"
#include "server/store/connection.h"
#include "server/store/pg_status.h"
#include "server/store/write_batch.h"

namespace wsched::store {
namespace {

absl::Status ShuttingDown() {
  return core::WithReason(absl::UnavailableError("shutting down"), core::ErrorReason::kShuttingDown);
}

}  // namespace

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
    if (stopping_) return {ShuttingDown()};
    queue_.push_back(pending);
  }
  pending->done.WaitForNotification();
  return std::move(pending->outcome);
}

std::vector<WriteOutcome> CommitBatcher::RunAll(std::vector<WorkspaceWrite> writes) {
  std::vector<std::shared_ptr<Pending>> pending;
  const absl::Time now = absl::Now();
  for (WorkspaceWrite& write : writes) {
    auto entry = std::make_shared<Pending>();
    entry->write = std::move(write);
    entry->queued = now;
    pending.push_back(std::move(entry));
  }
  std::vector<WriteOutcome> outcomes(pending.size());
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      for (WriteOutcome& outcome : outcomes) outcome = {ShuttingDown()};
      return outcomes;
    }
    for (const auto& entry : pending) queue_.push_back(entry);
  }
  for (size_t i = 0; i < pending.size(); ++i) {
    pending[i]->done.WaitForNotification();
    outcomes[i] = std::move(pending[i]->outcome);
  }
  return outcomes;
}

void CommitBatcher::WriterLoop() {
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); };
  auto full = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || static_cast<int>(queue_.size()) >= options_.max_batch;
  };
  // Connect and prepare before the first write comes, so the first callers
  // after a start or a failover do not also wait for that. (The backend's
  // first batch is still slower, 60-80 ms here: it loads its catalog caches.)
  // On failure the writer tries again while idle, or with the first batch.
  (void)OpenWriterConnection();
  while (true) {
    std::vector<std::shared_ptr<Pending>> batch;
    bool reconnect = false;
    {
      absl::MutexLock lock(&mu_);
      if (connection_ == nullptr) {
        // Without a connection (the database was lost): reconnect while
        // idle, so the writer finds the new primary before the next caller
        // comes and health learns that it can commit again.
        reconnect = !mu_.AwaitWithTimeout(absl::Condition(&ready), kReconnectEvery);
      } else {
        mu_.Await(absl::Condition(&ready));
      }
      if (!reconnect) {
        if (queue_.empty()) return;  // Stopping and drained.
        if (options_.max_wait > absl::ZeroDuration()) {
          mu_.AwaitWithDeadline(absl::Condition(&full), queue_.front()->queued + options_.max_wait);
        }
        while (!queue_.empty() && static_cast<int>(batch.size()) < options_.max_batch) {
          batch.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      }
    }
    if (reconnect) {
      (void)OpenWriterConnection();
      continue;
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

absl::Status CommitBatcher::OpenWriterConnection() {
  connection_.reset();
  const absl::Duration bound = db_->bounds().call;
  // application_name: so pg_stat_activity tells the writer from the pooled
  // connections.
  auto connection = OpenConnection(
      db_->url(),
      absl::StrCat(CallSessionSettings(bound), "; SET application_name = 'wsched group commit'"),
      bound);
  if (!connection.ok()) {
    SetFailing(true);
    return Prefixed("group commit", connection.status());
  }
  batches_on_connection_ = 0;
  next_plan_refresh_ = kFirstPlanRefresh;
  absl::Status status;
  {
    BoundedCall call(**connection, bound);
    try {
      PrepareWriteStatements(**connection);
    } catch (...) {
      status = StatusFromCurrentException("group commit");
    }
  }
  status = ExplainAbandoned(**connection, "group commit", std::move(status));
  if (!status.ok()) {
    SetFailing(absl::IsUnavailable(status));
    return status;
  }
  connection_ = std::move(*connection);
  SetFailing(false);
  return absl::OkStatus();
}

// Every statement of a batch is a lookup by key, and PostgreSQL keeps a
// prepared statement's generic plan. One made while a table was nearly empty
// (a fresh install, the first minute of a new pool) is a sequential scan and
// would stay one as the table grows, until autovacuum's next ANALYZE: the
// single writer paid 4 ms a batch for it (docs/performance.md), the foreign
// key checks of gpu_holds too. So the writer drops its plans after 16, 32,
// 64, ... batches and then every 4096: at most a doubling of a table since
// its plans were made. Planning every execution (force_custom_plan) also
// works but costs more PostgreSQL CPU per batch than this.
void CommitBatcher::RefreshPlansWhenDue() {
  if (++batches_on_connection_ < next_plan_refresh_) return;
  next_plan_refresh_ = std::min(next_plan_refresh_ * 2, next_plan_refresh_ + kPlanRefreshEvery);
  pqxx::nontransaction(*connection_).exec0("DISCARD PLANS");
}

absl::Status CommitBatcher::Commit(const std::vector<WorkspaceWrite>& writes,
                                   std::vector<WriteOutcome>& outcomes, BatchStatements& stats) {
  if (connection_ == nullptr || !connection_->usable()) {
    if (absl::Status opened = OpenWriterConnection(); !opened.ok()) return opened;
  }
  absl::Status status;
  {
    // The writer never waits on one connection longer than the call bound:
    // past it the watchdog abandons the connection, this batch's callers
    // get DATABASE_UNAVAILABLE, and the next batch reconnects.
    BoundedCall call(*connection_, db_->bounds().call);
    try {
      RefreshPlansWhenDue();
      outcomes = CommitWrites(*connection_, writes, stats, options_.budget_interval);
    } catch (...) {
      status = StatusFromCurrentException("group commit");
    }
  }
  status = ExplainAbandoned(*connection_, "group commit", std::move(status));
  if (connection_->watched().abandoned()) db_->pool().DropIdle();  // Most likely as stuck.
  if (status.ok() && connection_->usable()) {
    SetFailing(false);
    return status;
  }
  if (status.ok()) {
    // Committed, but abandoned just after: the next batch reconnects.
    connection_.reset();
    return status;
  }
  // The failed batch may have left its transaction open (aborted). A
  // connection that broke is dropped and reopened for the next batch.
  if (absl::IsUnavailable(status)) {
    SetFailing(true);
    connection_.reset();
    return status;
  }
  try {
    BoundedCall call(*connection_, db_->bounds().call);
    pqxx::nontransaction(*connection_).exec0("ROLLBACK");
  } catch (...) {
    connection_.reset();
  }
  if (connection_ != nullptr && !connection_->usable()) connection_.reset();
  return status;
}

}  // namespace wsched::store
