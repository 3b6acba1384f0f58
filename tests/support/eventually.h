// Waits for a condition the server announces no event for (a row another
// process's sweep deletes, a replica applying the change feed): polls it
// until it holds or `timeout` passes. Where an event exists (a watch
// stream, a log line, a port file), wait for that instead.
#ifndef WSCHED_TESTS_SUPPORT_EVENTUALLY_H_
#define WSCHED_TESTS_SUPPORT_EVENTUALLY_H_

#include <chrono>
#include <functional>
#include <thread>

namespace wsched::testing {

inline bool Eventually(const std::function<bool()>& done, int seconds = 10,
                       std::chrono::milliseconds poll = std::chrono::milliseconds(50)) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(poll);
  }
  return done();
}

}  // namespace wsched::testing

#endif  // WSCHED_TESTS_SUPPORT_EVENTUALLY_H_
