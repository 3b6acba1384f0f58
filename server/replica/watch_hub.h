// Wakes the watchers of one workspace when its version moves, and only
// them. Watchers used to wait on the scheduler's own lock with a condition,
// which absl::Mutex re-evaluates for every waiter at every unlock: a
// thousand watch streams cost a thousand checks per placement. Here each
// watched id has its own condition variable under the hub's lock, and a
// publish for an id nobody watches is a hash lookup.
#ifndef WSCHED_SERVER_REPLICA_WATCH_HUB_H_
#define WSCHED_SERVER_REPLICA_WATCH_HUB_H_

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/node_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace wsched::replica {

class WatchHub {
 public:
  // Blocks until the version of `id` exceeds `after`, `timeout` passes
  // with no publish of `id` (a publish that does not get past `after` waits
  // anew; real time) or Stop() is called; returns the newest version the hub
  // knows of.
  // `current` reads the version the caller's state holds now. It is called
  // once, after the waiter is registered and without the hub's lock, so a
  // Publish that races with the call is never missed (versions only grow).
  int64_t Wait(const std::string& id, int64_t after, absl::Duration timeout,
               absl::FunctionRef<int64_t()> current) ABSL_LOCKS_EXCLUDED(mu_);
  // Tells the watchers of `id`, if any, that it reached `version`.
  void Publish(const std::string& id, int64_t version) ABSL_LOCKS_EXCLUDED(mu_);
  // Wakes every watcher; later waits return at once.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  size_t watched_ids() const ABSL_LOCKS_EXCLUDED(mu_);
  // How often a publish woke someone (for tests and metrics).
  int64_t wakeups() const ABSL_LOCKS_EXCLUDED(mu_);
  // Names this object's lock in its owner's lock order
  // (ABSL_ACQUIRED_BEFORE/AFTER in scheduler.h); const, so nothing can lock
  // it through this.
  const absl::Mutex& mutex() const ABSL_LOCK_RETURNED(mu_) { return mu_; }

 private:
  struct Watched {
    int64_t version = 0;
    int waiters = 0;
    absl::CondVar changed;
  };

  mutable absl::Mutex mu_;
  // Only ids someone waits on; node_hash_map keeps each entry in place
  // while its waiters sleep on it.
  absl::node_hash_map<std::string, Watched> watched_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t wakeups_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace wsched::replica

#endif  // WSCHED_SERVER_REPLICA_WATCH_HUB_H_
