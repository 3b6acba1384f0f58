// Wakes a replica when another one commits: the change log's entries are
// announced with a NOTIFY (payload "<replica>:<seq>"), heard on a dedicated
// LISTEN connection. The entries themselves are read from the change log
// (change_log.h), so a lost notification delays a replica, never misleads it.
#ifndef WSCHED_SERVER_STORE_CHANGE_FEED_H_
#define WSCHED_SERVER_STORE_CHANGE_FEED_H_

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace wsched::store {

inline constexpr char kChangeChannel[] = "wsched_changes";

// This process's replica id (random per start).
const std::string& ReplicaId();

// Calls `on_change` (from its own thread) whenever another replica (or any,
// as `hears` says) publishes a change, and after every reconnect (notifications
// may have been missed while not listening). Stops on destruction. A listening
// connection hears nothing from a primary that hangs, nor from its successor:
// so while quiet it proves itself alive every kPingEvery with a query bounded
// by `probe` (call_watchdog.h), and reconnects (to the new primary, through the
// multi-host URL) when that fails.
class ChangeListener {
 public:
  static constexpr absl::Duration kPingEvery = absl::Seconds(1);

  // Whose commits wake it: other replicas' (a replica mirrors its own
  // already), or every replica's (the workspace streams follow them all).
  enum class Hears { kOtherReplicas, kEveryReplica };
  ChangeListener(std::string url, absl::Duration probe, std::function<void()> on_change,
                 Hears hears = Hears::kOtherReplicas);
  ~ChangeListener();

  // Blocks until the first LISTEN is in place (true) or `timeout` passes.
  bool WaitUntilListening(absl::Duration timeout);
  ChangeListener(const ChangeListener&) = delete;
  ChangeListener& operator=(const ChangeListener&) = delete;

 private:
  void Run();
  void Listen();  // Until stopped or the connection fails (throws).
  const std::string url_;
  const absl::Duration probe_;
  const std::function<void()> on_change_;
  const Hears hears_;
  std::atomic<bool> stop_{false};
  absl::Notification listening_;
  std::thread thread_;
};

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_CHANGE_FEED_H_
