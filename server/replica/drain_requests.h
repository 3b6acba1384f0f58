// What the next drain of the pending queue must try, and the background
// loop's wake-up: everything, or the pools where capacity came back or
// changed (QueueDrain::Drain).
#ifndef WSCHED_SERVER_REPLICA_DRAIN_REQUESTS_H_
#define WSCHED_SERVER_REPLICA_DRAIN_REQUESTS_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace wsched::replica {

class DrainRequests {
 public:
  DrainRequests() = default;
  DrainRequests(const DrainRequests&) = delete;
  DrainRequests& operator=(const DrainRequests&) = delete;

  // Asked by the replica mirror (under its lock) and the inventory.
  void Everything() ABSL_LOCKS_EXCLUDED(mu_);
  void Pool(const std::string& pool) ABSL_LOCKS_EXCLUDED(mu_);

  // What a drain tries: the pools asked for since the last one, or
  // everything. Taking it clears it.
  struct Scope {
    bool everything = false;
    absl::flat_hash_set<std::string> pools;
  };
  Scope Take() ABSL_LOCKS_EXCLUDED(mu_);

  // Waits up to `timeout` for a request or the stop; true when a drain was
  // asked for since the last wait (the request stays for Take).
  bool Await(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);
  bool stopping() const ABSL_LOCKS_EXCLUDED(mu_);

  // Taken under the replica mirror's lock, never the reverse.
  const absl::Mutex& mutex() const ABSL_LOCK_RETURNED(mu_) { return mu_; }

 private:
  // Guards the requests and the stop: the mirror and the inventory ask,
  // the background loop waits and the drain takes.
  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool requested_ ABSL_GUARDED_BY(mu_) = false;  // Wakes the loop.
  bool everything_ ABSL_GUARDED_BY(mu_) = true;  // The first drain tries all.
  absl::flat_hash_set<std::string> pools_ ABSL_GUARDED_BY(mu_);
};

}  // namespace wsched::replica

#endif  // WSCHED_SERVER_REPLICA_DRAIN_REQUESTS_H_
