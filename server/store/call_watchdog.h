// Bounds every wait on a PostgreSQL connection from this side of it.
//
// A primary that hangs (a paused VM, a SIGSTOPped postmaster, a host whose
// storage froze) keeps its sockets open, and its kernel keeps acknowledging
// what is sent: TCP keepalives and tcp_user_timeout never fire, and neither
// does the server's statement_timeout, since the server does not run. A
// thread waiting in libpq for that server's answer waits forever. So a
// connection is armed with a deadline before each call (an atomic store, no
// round trip), and one watchdog thread checks the armed connections every
// kTick: a connection still armed past its deadline is shut down (shutdown(2)
// on a duplicate of its socket), which wakes the waiting thread with a broken
// connection at once. The connection is then marked abandoned; its owner
// drops it and the next call reconnects, through the multi-host URL, to
// whichever server is primary by then.
#ifndef WSCHED_SERVER_STORE_CALL_WATCHDOG_H_
#define WSCHED_SERVER_STORE_CALL_WATCHDOG_H_

#include <atomic>
#include <cstdint>
#include <set>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace wsched::store {

// What the watchdog watches: a socket and the deadline of the call in
// flight on it. Owned by a Connection (connection.h), which registers it for
// its whole life.
class WatchedSocket {
 public:
  // `fd` is a duplicate of the connection's socket that this object owns:
  // libpq may close its own descriptor (and the number be reused by another
  // socket) while a call is still armed; the duplicate keeps naming the
  // connection's socket until the destructor closes it.
  explicit WatchedSocket(int fd);
  ~WatchedSocket();
  WatchedSocket(const WatchedSocket&) = delete;
  WatchedSocket& operator=(const WatchedSocket&) = delete;

  // The call that follows may wait `bound` at most (infinite: unbounded).
  void Arm(absl::Duration bound);
  // The call returned. False when the watchdog abandoned the connection
  // first: it must not be used again (even if the call itself succeeded).
  bool Disarm();
  // The watchdog shut the socket down; the connection is useless.
  bool abandoned() const { return abandoned_.load(std::memory_order_acquire); }
  // The bound of the call that was abandoned (for the error message).
  absl::Duration bound() const { return bound_; }

 private:
  friend class CallWatchdog;
  // Called by the watchdog with its lock held: shuts the socket down when
  // the armed deadline (steady clock, ns) has passed.
  bool AbandonIfLate(int64_t now_ns);

  static constexpr int64_t kUnarmed = 0;
  static constexpr int64_t kFired = -1;
  const int fd_;
  absl::Duration bound_ = absl::InfiniteDuration();  // Only the owner's thread.
  std::atomic<int64_t> deadline_ns_{kUnarmed};
  std::atomic<bool> abandoned_{false};
};

// The process's one watchdog thread (started on first use, never stopped:
// connections outlive static destruction order).
class CallWatchdog {
 public:
  // How late a connection may be abandoned after its deadline, at most.
  static constexpr absl::Duration kTick = absl::Milliseconds(50);

  static CallWatchdog& Global();

  void Watch(WatchedSocket* socket) ABSL_LOCKS_EXCLUDED(mu_);
  // After this returns the watchdog no longer touches `socket`.
  void Forget(WatchedSocket* socket) ABSL_LOCKS_EXCLUDED(mu_);

  // Calls abandoned since the start, and when the last one was.
  int64_t abandoned_total() const { return abandoned_total_.load(); }
  absl::Time last_abandoned() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  CallWatchdog();
  void Run();

  std::atomic<int64_t> abandoned_total_{0};
  mutable absl::Mutex mu_;
  std::set<WatchedSocket*> sockets_ ABSL_GUARDED_BY(mu_);
  absl::Time last_abandoned_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::thread thread_;
};

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_CALL_WATCHDOG_H_
