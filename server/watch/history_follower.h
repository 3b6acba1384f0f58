// Reads the change log's history of one kind of record (batch.h) as it
// grows and hands it to that kind's fanout: one read per wake-up, shared
// by every stream of the kind on the replica. It
// wakes on every commit's NOTIFY (this replica's own included) and at
// least once per `poll`; between reads it waits `gap`, so a busy writer's
// notifications share one read. While nobody watches it only moves its
// position to the head. After each read it gives quiet streams their
// bookmarks.
#ifndef WSCHED_SERVER_WATCH_HISTORY_FOLLOWER_H_
#define WSCHED_SERVER_WATCH_HISTORY_FOLLOWER_H_

#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/watch/fanout.h"
#include "server/watch/history_source.h"

namespace wsched::watch {

// How a follower of any kind reads.
struct FollowOptions {
  absl::Duration poll = absl::Seconds(1);
  absl::Duration gap = absl::Milliseconds(5);
  int page = 256; // Entries per read.
};

template <typename K> class BasicHistoryFollower {
public:
  using Options = FollowOptions;
  using Clock = std::function<absl::Time()>;

  BasicHistoryFollower(BasicHistorySource<K> *source, BasicFanout<K> *fanout,
                       Options options, Clock clock);
  ~BasicHistoryFollower(); // Stops the thread.
  BasicHistoryFollower(const BasicHistoryFollower &) = delete;
  BasicHistoryFollower &operator=(const BasicHistoryFollower &) = delete;

  void Start();
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);
  void Notify() ABSL_LOCKS_EXCLUDED(mu_);

  // Reads everything committed so far into the fanout (what the thread does
  // on each wake-up; tests call it directly).
  absl::Status FollowOnce();

 private:
  void Run();
  // Waits for a notification, `timeout` or Stop; false once stopping.
  bool Await(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);

  BasicHistorySource<K> *const source_;
  BasicFanout<K> *const fanout_;
  const Options options_;
  const Clock clock_;
  absl::Mutex mu_;
  bool notified_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// Defined in history_follower.cc for the two kinds.
extern template class BasicHistoryFollower<WorkspaceKind>;
extern template class BasicHistoryFollower<NodeKind>;

using HistoryFollower = BasicHistoryFollower<WorkspaceKind>;
using NodeHistoryFollower = BasicHistoryFollower<NodeKind>;

}  // namespace wsched::watch

#endif  // WSCHED_SERVER_WATCH_HISTORY_FOLLOWER_H_
