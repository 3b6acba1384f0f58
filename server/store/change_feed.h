// Tells other replicas that the shared state changed, so they refresh their
// snapshots: a NOTIFY on commit, a LISTEN on a dedicated connection.
#ifndef WSCHED_SERVER_STORE_CHANGE_FEED_H_
#define WSCHED_SERVER_STORE_CHANGE_FEED_H_

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

#include <pqxx/pqxx>

namespace wsched::store {

// This process's replica id (random per start), the NOTIFY payload.
const std::string& ReplicaId();

// Queues a notification, delivered when `txn` commits.
void NotifyChange(pqxx::work& txn);

// Calls `on_change` (from its own thread) whenever ANOTHER replica commits a
// change, and after every reconnect (changes may have been missed while not
// listening). Stops on destruction.
class ChangeListener {
 public:
  ChangeListener(std::string url, std::function<void()> on_change);
  ~ChangeListener();

  // Blocks until the first LISTEN is in place (true) or `timeout` passes.
  // A caller that reads the state after this misses no change.
  bool WaitUntilListening(absl::Duration timeout);
  ChangeListener(const ChangeListener&) = delete;
  ChangeListener& operator=(const ChangeListener&) = delete;

 private:
  void Run();
  const std::string url_;
  const std::function<void()> on_change_;
  std::atomic<bool> stop_{false};
  absl::Notification listening_;
  std::thread thread_;
};

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_CHANGE_FEED_H_
