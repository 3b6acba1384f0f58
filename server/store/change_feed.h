// Tells other replicas that the shared state changed, so they refresh their
// snapshots: a NOTIFY on commit, a LISTEN on a dedicated connection.
#ifndef WSCHED_SERVER_STORE_CHANGE_FEED_H_
#define WSCHED_SERVER_STORE_CHANGE_FEED_H_

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include <pqxx/pqxx>

namespace wsched::store {

// This process's replica id (random per start), the NOTIFY payload.
const std::string& ReplicaId();

// Queues a notification, delivered when `txn` commits.
void NotifyChange(pqxx::work& txn);

// Calls `on_change` (from its own thread) whenever ANOTHER replica commits a
// change. Reconnects after errors. Stops on destruction.
class ChangeListener {
 public:
  ChangeListener(std::string url, std::function<void()> on_change);
  ~ChangeListener();
  ChangeListener(const ChangeListener&) = delete;
  ChangeListener& operator=(const ChangeListener&) = delete;

 private:
  void Run();
  const std::string url_;
  const std::function<void()> on_change_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_CHANGE_FEED_H_
