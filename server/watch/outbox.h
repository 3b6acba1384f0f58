// One stream's bounded buffer between those who produce its messages (the
// fanout, and the stream's own listing and catch-up) and the transport
// that writes them. The fanout is never made to wait: a stream whose
// buffer is full is ended (WATCH_TOO_SLOW, with the last version it was
// sent whole) and resumes. The stream's own listing and catch-up instead
// wait for room: they are the stream's own work, paced by its reader.
#ifndef WSCHED_SERVER_WATCH_OUTBOX_H_
#define WSCHED_SERVER_WATCH_OUTBOX_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "server/watch/batch.h"
#include "server/watch/fanout.h"

namespace wsched::watch {

template <typename K> class BasicOutbox final : public BasicSubscriber<K> {
public:
  using Batch = BasicBatch<K>;

  // `on_ready` is called, without the outbox's lock, when there is
  // something to take or the stream must end; it must not block (the
  // fanout's lock may be held).
  BasicOutbox(size_t limit, std::function<void()> on_ready);

  // The fanout's side: never waits.
  void Deliver(Batch batch) override ABSL_LOCKS_EXCLUDED(mu_);
  void Abandon(absl::Status why) override ABSL_LOCKS_EXCLUDED(mu_);

  // The stream's own side: waits while the buffer is full; false once the
  // outbox is closed (the stream ended).
  bool Put(Batch batch) ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the stream with `why` after what is buffered is sent.
  void End(absl::Status why) ABSL_LOCKS_EXCLUDED(mu_);

  // The transport's side, between writes: the next message, else the
  // status to end with, else nothing for now.
  struct Next {
    std::optional<Batch> batch;
    std::optional<absl::Status> end;
    bool more = false;  // Another batch waits behind this one.
  };
  Next Take() ABSL_LOCKS_EXCLUDED(mu_);
  // The same, but up to `max_changes` kChanges batches in a row at once:
  // one message for a stream that is behind instead of one per version.
  struct Run {
    std::vector<Batch> batches;
    std::optional<absl::Status> end;
    bool more = false;
  };
  Run TakeRun(size_t max_changes) ABSL_LOCKS_EXCLUDED(mu_);
  // The transport wrote everything up to `version` whole.
  void Sent(int64_t version) ABSL_LOCKS_EXCLUDED(mu_);
  // The stream is over: producers stop, waiting ones return false.
  void Close() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void NotifyIf(bool ready);

  const size_t limit_;
  const std::function<void()> on_ready_;
  absl::Mutex mu_;
  std::deque<Batch> queue_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Status> end_ ABSL_GUARDED_BY(mu_);
  bool overflowed_ ABSL_GUARDED_BY(mu_) = false;  // Ends with WATCH_TOO_SLOW.
  int64_t sent_ ABSL_GUARDED_BY(mu_) = 0;  // The last version written whole.
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

// Defined in outbox.cc for the two kinds.
extern template class BasicOutbox<WorkspaceKind>;
extern template class BasicOutbox<NodeKind>;

using Outbox = BasicOutbox<WorkspaceKind>;
using NodeOutbox = BasicOutbox<NodeKind>;

}  // namespace wsched::watch

#endif  // WSCHED_SERVER_WATCH_OUTBOX_H_
