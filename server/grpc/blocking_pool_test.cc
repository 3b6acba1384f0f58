#include "server/grpc/blocking_pool.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace wsched::grpc_api {
namespace {

// Counts work that has started and holds it until released.
class Gate {
 public:
  void Enter() {
    absl::MutexLock lock(&mu_);
    ++entered_;
    auto open = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return open_; };
    mu_.Await(absl::Condition(&open));
  }
  void AwaitEntered(int n) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return entered_ >= n; };
    mu_.Await(absl::Condition(&reached));
  }
  void Open() {
    absl::MutexLock lock(&mu_);
    open_ = true;
  }

 private:
  absl::Mutex mu_;
  int entered_ ABSL_GUARDED_BY(mu_) = 0;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
};

TEST(BlockingPool, GivesEveryBlockedCallItsOwnThread) {
  BlockingPool pool({.max_threads = 64});
  Gate gate;
  for (int i = 0; i < 16; ++i) pool.Submit([&] { gate.Enter(); });
  // All 16 are inside at once: none waits behind another's commit.
  gate.AwaitEntered(16);
  EXPECT_EQ(pool.threads(), 16);
  gate.Open();
}

TEST(BlockingPool, ReusesAnIdleThreadInsteadOfStartingOne) {
  BlockingPool pool({.max_threads = 64});
  absl::Notification first;
  pool.Submit([&] { first.Notify(); });
  first.WaitForNotification();
  // The worker is free once it waits again; work submitted then finds it.
  while (pool.idle_threads() < 1) std::this_thread::yield();
  absl::Notification second;
  pool.Submit([&] { second.Notify(); });
  second.WaitForNotification();
  EXPECT_EQ(pool.threads(), 1);
}

TEST(BlockingPool, WorkBeyondTheCapWaitsItsTurnInOrder) {
  BlockingPool pool({.max_threads = 2});
  Gate gate;
  absl::Mutex mu;
  std::vector<int> finished;
  for (int i = 0; i < 5; ++i) {
    pool.Submit([&, i] {
      if (i < 2) gate.Enter();
      absl::MutexLock lock(&mu);
      finished.push_back(i);
    });
  }
  gate.AwaitEntered(2);
  EXPECT_EQ(pool.threads(), 2);
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(finished.empty()) << "queued work ran while both threads were held";
  }
  gate.Open();
  absl::MutexLock lock(&mu);
  auto all = [&finished]() { return finished.size() == 5; };
  mu.Await(absl::Condition(&all));
  // The queued three start in the order they were submitted.
  std::vector<int> queued(finished.begin(), finished.end());
  queued.erase(std::remove_if(queued.begin(), queued.end(), [](int i) { return i < 2; }),
               queued.end());
  EXPECT_EQ(queued, (std::vector<int>{2, 3, 4}));
}

TEST(BlockingPool, RunsWhatWasSubmittedBeforeItIsDestroyed) {
  int ran = 0;
  absl::Mutex mu;
  Gate gate;  // Outlives the pool, whose thread is inside it.
  {
    BlockingPool pool({.max_threads = 1});
    pool.Submit([&] { gate.Enter(); });
    for (int i = 0; i < 3; ++i) {
      pool.Submit([&] {
        absl::MutexLock lock(&mu);
        ++ran;
      });
    }
    gate.AwaitEntered(1);
    gate.Open();
  }
  absl::MutexLock lock(&mu);
  EXPECT_EQ(ran, 3);
}

}  // namespace
}  // namespace wsched::grpc_api
