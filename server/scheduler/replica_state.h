// The FeedFollower's sink for a Scheduler: its in-memory state.
#ifndef WSCHED_SERVER_SCHEDULER_REPLICA_STATE_H_
#define WSCHED_SERVER_SCHEDULER_REPLICA_STATE_H_

#include "server/scheduler/scheduler.h"

namespace wsched::scheduler {

class Scheduler::StateSink : public FeedSink {
 public:
  explicit StateSink(Scheduler* scheduler) : scheduler_(scheduler) {}
  absl::Status Apply(const std::vector<store::ChangeRecord>& records) override {
    return scheduler_->ApplyRecords(records);
  }
  absl::StatusOr<int64_t> Reload() override { return scheduler_->ReloadState(); }

 private:
  Scheduler* const scheduler_;
};

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_REPLICA_STATE_H_
