// The placement lock (docs/architecture.md "One placer, many front doors"):
// a session-level advisory lock, like the scaling leader's (leader_lock.h),
// plus the `placer` row (migration 0013) that tells the other replicas where
// to forward. The row is written on the session that holds the lock, so it
// cannot be overwritten by a replica whose session has already ended. The
// lock is held as a lease (lock_lease.h, docs/architecture.md "Leases").
#ifndef WSCHED_SERVER_STORE_PLACER_LOCK_H_
#define WSCHED_SERVER_STORE_PLACER_LOCK_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/store/database.h"
#include "server/store/lock_lease.h"

namespace wsched::store {

struct PlacerRecord {
  std::string replica;  // store::ReplicaId() of the placer.
  std::string address;  // host:port its peers forward to.
  absl::Time since;     // When it took the lock.
};

struct PlacerPoll {
  bool held = false;                  // This session holds the lock.
  std::optional<PlacerRecord> placer;  // What the row says; nullopt: nobody yet.
};

class PlacerLock {
 public:
  explicit PlacerLock(std::string url, LeaseOptions lease = {});
  ~PlacerLock();
  PlacerLock(const PlacerLock&) = delete;
  PlacerLock& operator=(const PlacerLock&) = delete;

  // Takes the lock if it is free. While held, makes sure the row names
  // `replica` at `address`. Returns whether this session holds the lock and
  // who the row names; an error when the database cannot be reached, which
  // also means this replica holds nothing.
  absl::StatusOr<PlacerPoll> Poll(const std::string& replica, const std::string& address);
  // Whether this replica may act as the placer now (its lease runs); any
  // thread.
  bool Holds() const { return lease_.Held(); }
  // Gives the lock up at once (closing the session), for a clean shutdown.
  void Release();

 private:
  LockLease lease_;
};

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_PLACER_LOCK_H_
