#include "server/grpc/blocking_pool.h"

namespace wsched::grpc_api {

BlockingPool::BlockingPool(Options options) : options_(options) {}

BlockingPool::~BlockingPool() {
  std::vector<std::thread> threads;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    threads.swap(threads_);
  }
  for (std::thread& thread : threads) thread.join();
}

void BlockingPool::Submit(std::function<void()> work) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(work));
  // An idle thread takes it once mu_ is released (the waiters' condition
  // sees the queue); one is started only when none is free for it.
  if (idle_ >= static_cast<int>(queue_.size())) return;
  if (static_cast<int>(threads_.size()) >= options_.max_threads) return;
  threads_.emplace_back([this] { WorkerLoop(); });
}

int BlockingPool::threads() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(threads_.size());
}

int BlockingPool::idle_threads() const {
  absl::MutexLock lock(&mu_);
  return idle_;
}

void BlockingPool::WorkerLoop() {
  absl::MutexLock lock(&mu_);
  auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !queue_.empty() || stopping_;
  };
  while (true) {
    ++idle_;
    mu_.Await(absl::Condition(&has_work));
    --idle_;
    // Stopping: what was submitted still runs (each is a call that must
    // be answered), then the thread ends.
    if (queue_.empty()) return;
    std::function<void()> work = std::move(queue_.front());
    queue_.pop_front();
    mu_.Unlock();
    work();
    mu_.Lock();
  }
}

}  // namespace wsched::grpc_api
