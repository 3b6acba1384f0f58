#include "server/watch/outbox.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"

namespace wsched::watch {

template <typename K>
BasicOutbox<K>::BasicOutbox(size_t limit, std::function<void()> on_ready)
    : limit_(limit), on_ready_(std::move(on_ready)) {}

template <typename K> void BasicOutbox<K>::NotifyIf(bool ready) {
  if (ready) on_ready_();
}

template <typename K> void BasicOutbox<K>::Deliver(Batch batch) {
  bool ready = false;
  {
    absl::MutexLock lock(&mu_);
    if (closed_ || end_) return;
    if (queue_.size() >= limit_) {
      // What is buffered is dropped: the reader resumes from what it got
      // whole, which Take names once no write is in flight.
      queue_.clear();
      overflowed_ = true;
      end_ = absl::OkStatus();
      ready = true;
    } else {
      ready = queue_.empty();
      queue_.push_back(std::move(batch));
    }
  }
  NotifyIf(ready);
}

template <typename K> void BasicOutbox<K>::Abandon(absl::Status why) {
  End(std::move(why));
}

template <typename K> void BasicOutbox<K>::End(absl::Status why) {
  bool ready = false;
  {
    absl::MutexLock lock(&mu_);
    if (closed_ || end_) return;
    end_ = std::move(why);
    ready = queue_.empty();
  }
  NotifyIf(ready);
}

template <typename K> bool BasicOutbox<K>::Put(Batch batch) {
  bool ready = false;
  {
    absl::MutexLock lock(&mu_);
    auto room = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return closed_ || end_.has_value() || queue_.size() < limit_;
    };
    mu_.Await(absl::Condition(&room));
    if (closed_ || end_) return false;
    ready = queue_.empty();
    queue_.push_back(std::move(batch));
  }
  NotifyIf(ready);
  return true;
}

template <typename K> typename BasicOutbox<K>::Next BasicOutbox<K>::Take() {
  Run run = TakeRun(1);
  Next next;
  if (!run.batches.empty()) next.batch = std::move(run.batches.front());
  next.end = std::move(run.end);
  next.more = run.more;
  return next;
}

template <typename K>
typename BasicOutbox<K>::Run BasicOutbox<K>::TakeRun(size_t max_changes) {
  absl::MutexLock lock(&mu_);
  Run run;
  if (!queue_.empty()) {
    run.batches.push_back(std::move(queue_.front()));
    queue_.pop_front();
    while (run.batches.front().kind == Batch::Kind::kChanges && !queue_.empty() &&
           queue_.front().kind == Batch::Kind::kChanges && run.batches.size() < max_changes) {
      run.batches.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    run.more = !queue_.empty();
  } else if (overflowed_) {
    // Take runs only between writes: sent_ is the last version the reader has.
    run.end = core::ReasonError(
        absl::StrCat("this stream fell ", limit_,
                     " messages behind (--watch_buffer); resume from version ", sent_),
        {.reason = core::ErrorReason::kWatchTooSlow,
         .metadata = {{"last_version", absl::StrCat(sent_)}, {"buffer", absl::StrCat(limit_)}},
         .retry_delay = absl::ZeroDuration()});
  } else if (end_) {
    run.end = *end_;
  }
  return run;
}

template <typename K> void BasicOutbox<K>::Sent(int64_t version) {
  absl::MutexLock lock(&mu_);
  if (version > sent_) sent_ = version;
}

template <typename K> void BasicOutbox<K>::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  queue_.clear();
}

template class BasicOutbox<WorkspaceKind>;
template class BasicOutbox<NodeKind>;

}  // namespace wsched::watch
