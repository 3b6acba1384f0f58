// Keeps one replica's state in step with the change log: reads the entries
// committed after its position and hands them to the state as deltas; a
// full reload only at start and when entries were missed (a gap: pruned
// before this replica read them). Cost follows the change rate, not the
// fleet size (docs/architecture.md "Following the database (replica synchronisation)").
//
// The follower owns only its position and its own lock; what the entries
// mean is the sink's business, where they come from the source's, so both
// are replaced by fakes in unit tests.
#ifndef WSCHED_SERVER_REPLICA_FEED_FOLLOWER_H_
#define WSCHED_SERVER_REPLICA_FEED_FOLLOWER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/metrics/metrics.h"
#include "server/store/types.h"

namespace wsched::replica {

class FeedSource {
 public:
  virtual ~FeedSource() = default;
  // Entries with seq > `after` (ascending, at most `limit`) and the head.
  virtual absl::StatusOr<store::FeedRead> ReadSince(int64_t after, int limit) = 0;
};

class FeedSink {
 public:
  virtual ~FeedSink() = default;
  // Applies committed entries, in order. On error nothing is assumed
  // applied: the same entries come again.
  virtual absl::Status Apply(const std::vector<store::ChangeRecord>& records) = 0;
  // Rebuilds everything from the database; returns the log position the
  // rebuilt state reflects.
  virtual absl::StatusOr<int64_t> Reload() = 0;
};

class FeedFollower {
 public:
  using Clock = std::function<absl::Time()>;

  FeedFollower(FeedSource* source, FeedSink* sink, metrics::Metrics* metrics, Clock clock,
               int batch_limit = 512);
  ~FeedFollower();  // Stops the background thread.
  FeedFollower(const FeedFollower&) = delete;
  FeedFollower& operator=(const FeedFollower&) = delete;

  // Applies everything committed before the call (the first call reloads).
  // Callers use it to read their own writes: after CatchUp, every change
  // committed anywhere before it began is in the sink. Callers that arrive
  // while a catch-up runs share the next one: a burst of N callers costs two
  // reads, not N one after another.
  absl::Status CatchUp() ABSL_LOCKS_EXCLUDED(mu_);

  // Follows in the background: CatchUp on every Notify() and at least once
  // per `poll` (a lost notification delays, never loses, a change). After
  // each catch-up it waits `gap` before the next, so the notifications of a
  // busy writer (hundreds of commits a second) share one read instead of
  // costing one each: the mirror lags by at most `gap` more. CatchUp()
  // itself never waits for it.
  void StartFollowing(absl::Duration poll, absl::Duration gap = absl::ZeroDuration());
  // Ends the background thread; CatchUp still works.
  void StopFollowing();
  void Notify();

  // -1 before the first load.
  int64_t position() const;
  // When the last catch-up that reached the head began: every change
  // committed before then is applied (InfinitePast before the first load).
  // Health reads it for the feed lag; it never waits for a catch-up.
  absl::Time caught_up_at() const ABSL_LOCKS_EXCLUDED(caught_up_mu_);
  // Names this object's lock in its owner's lock order
  // (ABSL_ACQUIRED_BEFORE/AFTER in scheduler.h); const, so nothing can lock
  // it through this.
  const absl::Mutex& mutex() const ABSL_LOCK_RETURNED(mu_) { return mu_; }

 private:
  absl::Status CatchUpLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status FollowToHeadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ReloadLocked(absl::string_view reason) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Run(absl::Duration poll, absl::Duration gap);
  // Waits up to `timeout` for StopFollowing; true if it came.
  bool StoppedWithin(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(wake_mu_);

  FeedSource* const source_;
  FeedSink* const sink_;
  metrics::Metrics* const metrics_;
  const Clock clock_;
  const int batch_limit_;

  mutable absl::Mutex mu_;  // One catch-up at a time.
  int64_t position_ ABSL_GUARDED_BY(mu_) = -1;
  // Catch-ups begun so far (counted under mu_, read before taking it), and
  // the number of the last one that reached the head.
  std::atomic<int64_t> begun_{0};
  int64_t last_reached_head_ ABSL_GUARDED_BY(mu_) = 0;
  mutable absl::Mutex caught_up_mu_;  // Not mu_: a slow catch-up must not block readers.
  absl::Time caught_up_at_ ABSL_GUARDED_BY(caught_up_mu_) = absl::InfinitePast();

  absl::Mutex wake_mu_;
  bool notified_ ABSL_GUARDED_BY(wake_mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(wake_mu_) = false;
  std::thread thread_;
};

}  // namespace wsched::replica

#endif  // WSCHED_SERVER_REPLICA_FEED_FOLLOWER_H_
