// Threads for handler bodies that block (a placement waits for its group
// commit), so that they never run on gRPC's callback threads: those few
// threads deliver every callback RPC's events, and one blocked there stalls
// them all (docs/architecture.md, "Callback handlers on the hot path").
//
// The pool grows like gRPC's synchronous server did, one thread per call
// in flight, up to `max_threads`, and keeps its threads: an idle one costs
// a stack, and the next burst finds it ready. Work beyond `max_threads`
// waits its turn in order.
#ifndef WSCHED_SERVER_GRPC_BLOCKING_POOL_H_
#define WSCHED_SERVER_GRPC_BLOCKING_POOL_H_

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace wsched::grpc_api {

class BlockingPool {
 public:
  struct Options {
    int max_threads = 1024;
  };
  explicit BlockingPool(Options options);
  // Runs what was submitted, then waits for every thread to exit.
  ~BlockingPool();
  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;

  void Submit(std::function<void()> work);

  int threads() const;       // Alive now.
  int idle_threads() const;  // Of those, waiting for work.

 private:
  void WorkerLoop();

  const Options options_;
  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
  int idle_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_BLOCKING_POOL_H_
