// Leadership among replicas: a session-level PostgreSQL advisory lock held
// as a lease (lock_lease.h, docs/architecture.md "Leases"). If the leader
// dies, its session ends, the lock is released, and another replica's next
// TryAcquire wins; if its session stops answering, it stops leading within
// the lease, before another replica can take the lock.
#ifndef WSCHED_SERVER_STORE_LEADER_LOCK_H_
#define WSCHED_SERVER_STORE_LEADER_LOCK_H_

#include <memory>
#include <string>

#include "server/store/database.h"
#include "server/store/lock_lease.h"

namespace wsched::store {

class LeaderLock {
 public:
  LeaderLock(std::string url, int64_t key, LeaseOptions lease = {});
  ~LeaderLock();
  LeaderLock(const LeaderLock&) = delete;
  LeaderLock& operator=(const LeaderLock&) = delete;

  // One probe (call it at a fixed interval, from one thread): true when this
  // process holds the lock (acquiring it if free) on a session that has just
  // answered within the probe bound.
  bool TryAcquire();
  // Whether this process may act as the leader now (its lease runs); any
  // thread. Check it before each action: a TryAcquire long ago proves nothing.
  bool Holds() const { return lease_.Held(); }
  void Release();

 private:
  LockLease lease_;
};

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_LEADER_LOCK_H_
