#include "server/store/call_watchdog.h"

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "absl/time/clock.h"

namespace wsched::store {
namespace {

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

WatchedSocket::WatchedSocket(int fd) : fd_(fd) {}

WatchedSocket::~WatchedSocket() {
  if (fd_ >= 0) close(fd_);
}

void WatchedSocket::Arm(absl::Duration bound) {
  bound_ = bound;
  if (bound == absl::InfiniteDuration() || fd_ < 0) return;
  // A deadline is never kUnarmed or kFired: the steady clock is far past 0.
  deadline_ns_.store(SteadyNanos() + absl::ToInt64Nanoseconds(bound), std::memory_order_release);
}

bool WatchedSocket::Disarm() {
  return deadline_ns_.exchange(kUnarmed, std::memory_order_acq_rel) != kFired;
}

bool WatchedSocket::AbandonIfLate(int64_t now_ns) {
  int64_t deadline = deadline_ns_.load(std::memory_order_acquire);
  if (deadline <= kUnarmed || now_ns < deadline) return false;
  // Only one of the owner's Disarm and this wins: a call that returned in
  // time is never abandoned after the fact.
  if (!deadline_ns_.compare_exchange_strong(deadline, kFired, std::memory_order_acq_rel)) {
    return false;
  }
  abandoned_.store(true, std::memory_order_release);
  // Wakes a thread blocked in poll/recv/send on this socket with EOF or
  // EPIPE; libpq reports a broken connection. The descriptor stays open
  // (it is ours), so no other socket can be hit.
  shutdown(fd_, SHUT_RDWR);
  return true;
}

CallWatchdog& CallWatchdog::Global() {
  static CallWatchdog* watchdog = new CallWatchdog();
  return *watchdog;
}

CallWatchdog::CallWatchdog() : thread_([this] { Run(); }) { thread_.detach(); }

void CallWatchdog::Watch(WatchedSocket* socket) {
  absl::MutexLock lock(&mu_);
  sockets_.insert(socket);
}

void CallWatchdog::Forget(WatchedSocket* socket) {
  absl::MutexLock lock(&mu_);
  sockets_.erase(socket);
}

absl::Time CallWatchdog::last_abandoned() const {
  absl::MutexLock lock(&mu_);
  return last_abandoned_;
}

void CallWatchdog::Run() {
  while (true) {
    absl::SleepFor(kTick);
    const int64_t now = SteadyNanos();
    absl::MutexLock lock(&mu_);
    for (WatchedSocket* socket : sockets_) {
      if (socket->AbandonIfLate(now)) {
        abandoned_total_++;
        last_abandoned_ = absl::Now();
      }
    }
  }
}

}  // namespace wsched::store
