// A session-level PostgreSQL advisory lock held as a lease
// (docs/architecture.md, "Leases"): the scaling leader's (leader_lock.h)
// and the placer's (placer_lock.h).
//
// Holding the lock is not enough to act on it: the session may be on a
// primary that hangs, or cut off, while another replica takes the lock
// on the new primary, or on the same one once the server has ended the
// session. So the holder proves its session alive at a fixed interval with
// a probe bounded by `probe` on this side (call_watchdog.h), and acts only
// within `lease / 2` of the start of its last successful probe. The
// session itself is told to end after `lease` without a word from this
// replica (idle_session_timeout, tcp_user_timeout), so the server releases
// the lock no earlier than `lease` after that probe started: the old holder
// has stopped acting `lease / 2` before another can take the lock.
#ifndef WSCHED_SERVER_STORE_LOCK_LEASE_H_
#define WSCHED_SERVER_STORE_LOCK_LEASE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/store/database.h"

namespace wsched::store {

struct LeaseOptions {
  // The bound of one probe (from this side).
  absl::Duration probe = absl::Seconds(1);
  // The lease: see the file comment. Must exceed twice the probe interval
  // plus the probe bound, or a live holder would lose its lease between
  // probes (CheckLeaseOptions).
  absl::Duration lease = absl::Seconds(6);
};

// INVALID_ARGUMENT naming the flag when `options` cannot keep a holder
// that probes every `interval` acting between two probes.
absl::Status CheckLeaseOptions(const LeaseOptions& options, absl::Duration interval);

class LockLease {
 public:
  // `name` is the session's application_name (pg_stat_activity).
  LockLease(std::string url, int64_t key, LeaseOptions options, std::string name);
  ~LockLease();
  LockLease(const LockLease&) = delete;
  LockLease& operator=(const LockLease&) = delete;

  // One probe, within options.probe: (re)connects when needed, takes the
  // lock if it is free (or proves the held one's session alive), then runs
  // `also` (more statements of the probe, told whether the lock is held).
  // Returns whether the lock is held; an error (DATABASE_UNAVAILABLE) when
  // the session failed, which voids the lease at once. Only one thread
  // probes.
  absl::StatusOr<bool> Probe(const std::function<void(Connection&, bool held)>& also = nullptr);
  // Whether this replica may act on the lock now: its last probe found it
  // held and started less than lease / 2 ago. Any thread.
  bool Held() const;
  // Closes the session, releasing the lock at once.
  void Release();

 private:
  void Drop();

  const std::string url_;
  const int64_t key_;
  const LeaseOptions options_;
  const std::string session_settings_;
  // The probing thread's.
  std::unique_ptr<Connection> connection_;
  bool held_ = false;
  // Steady-clock nanoseconds until which the holder may act; 0: not held.
  std::atomic<int64_t> valid_until_ns_{0};
};

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_LOCK_LEASE_H_
