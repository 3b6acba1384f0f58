// Leadership among replicas: a session-level PostgreSQL advisory lock held
// on a dedicated connection. If the leader dies, its session ends, the lock
// is released, and another replica's next TryAcquire wins.
#ifndef WSCHED_SERVER_STORE_LEADER_LOCK_H_
#define WSCHED_SERVER_STORE_LEADER_LOCK_H_

#include <memory>
#include <string>

#include "server/store/database.h"

namespace wsched::store {

class LeaderLock {
 public:
  LeaderLock(std::string url, int64_t key);
  ~LeaderLock();
  LeaderLock(const LeaderLock&) = delete;
  LeaderLock& operator=(const LeaderLock&) = delete;

  // True when this process holds the lock (acquiring it if free). Checks the
  // connection each time, so a broken session means no leadership.
  bool TryAcquire();
  void Release();

 private:
  const std::string url_;
  const int64_t key_;
  std::unique_ptr<Connection> connection_;
  bool held_ = false;
};

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_LEADER_LOCK_H_
