// Clients placing one-GPU ("gpu-1x") workspaces as the control plane does,
// until stopped, for fault tests: each client uses a new id after every
// answer. Keeps the ids the server acknowledged (placed or pending), when
// each acknowledged call began and ended, and the codes of the failures.
#ifndef WSCHED_TESTS_SUPPORT_PLACING_LOAD_H_
#define WSCHED_TESTS_SUPPORT_PLACING_LOAD_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

namespace wsched::testing {

class PlacingLoad {
 public:
  using Clock = std::chrono::steady_clock;

  // `clients` threads, ids "<prefix>-<client>-<n>".
  PlacingLoad(std::shared_ptr<grpc::Channel> channel, std::string prefix, int clients);
  ~PlacingLoad();  // Stop().
  PlacingLoad(const PlacingLoad&) = delete;
  PlacingLoad& operator=(const PlacingLoad&) = delete;

  void Stop();
  std::set<std::string> acked();
  std::set<grpc::StatusCode> codes();
  // The message of the last INTERNAL answer ("" when none).
  std::string internal();
  // When the first call begun at or after `t` was acknowledged; nullopt:
  // none yet.
  std::optional<Clock::time_point> FirstAckOfACallStartedAfter(Clock::time_point t);

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::set<std::string> acked_;
  std::vector<std::pair<Clock::time_point, Clock::time_point>> acks_;  // Start, end.
  std::set<grpc::StatusCode> codes_;
  std::string internal_;
};

}  // namespace wsched::testing

#endif  // WSCHED_TESTS_SUPPORT_PLACING_LOAD_H_
