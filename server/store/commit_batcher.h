// Group commit: placements that arrive together are committed together, in
// one transaction, so throughput is not capped at one fsync per placement
// (the LevelDB DBImpl::Write idea). Each job runs in its own savepoint, so a
// job that loses a race rolls back alone and the rest still commit.
#ifndef WSCHED_SERVER_STORE_COMMIT_BATCHER_H_
#define WSCHED_SERVER_STORE_COMMIT_BATCHER_H_

#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "server/store/change_log.h"
#include "server/store/database.h"

namespace wsched::store {

class CommitBatcher {
 public:
  // A job records what it changed in its ChangeSet; the batch publishes the
  // changes of its successful jobs as one change-log entry, at the end.
  using Job = std::function<absl::Status(pqxx::work&, ChangeSet&)>;

  struct Stats {
    int64_t transactions = 0;
    int64_t jobs = 0;
  };

  // `writers` threads each take whatever is queued (up to max_batch) and
  // commit it; more than one lets a batch fill while another commits.
  CommitBatcher(Database* db, int writers, int max_batch);
  ~CommitBatcher();  // Stops after draining the queue.
  CommitBatcher(const CommitBatcher&) = delete;
  CommitBatcher& operator=(const CommitBatcher&) = delete;

  // Runs `job` in the next batch and waits for the commit. The job's own
  // error rolls back only its savepoint; a failed commit fails every job of
  // the batch.
  absl::Status Run(Job job);

  Stats stats() const;

 private:
  struct Pending {
    Job job;
    absl::Status result;
    absl::Notification done;
  };

  void WriterLoop();
  void CommitBatch(std::vector<std::shared_ptr<Pending>>& batch);

  Database* const db_;
  const int max_batch_;
  mutable absl::Mutex mu_;
  std::deque<std::shared_ptr<Pending>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  Stats stats_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> writers_;
};

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_COMMIT_BATCHER_H_
