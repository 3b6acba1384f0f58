// Caps the calls one principal has in flight at once, so a misbehaving
// agent or project owner (a retry loop, a compromised node) cannot hold
// every server thread and database connection while placements wait.
#ifndef WSCHED_SERVER_GRPC_CONCURRENCY_LIMITER_H_
#define WSCHED_SERVER_GRPC_CONCURRENCY_LIMITER_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace wsched::grpc_api {

class ConcurrencyLimiter {
 public:
  // A held call; releases its place when destroyed.
  class Slot {
   public:
    Slot(Slot&& other) noexcept : limiter_(other.limiter_), key_(std::move(other.key_)) {
      other.limiter_ = nullptr;
    }
    Slot& operator=(Slot&&) = delete;
    Slot(const Slot&) = delete;
    ~Slot() {
      if (limiter_ != nullptr) limiter_->Release(key_);
    }

   private:
    friend class ConcurrencyLimiter;
    Slot(ConcurrencyLimiter* limiter, std::string key) : limiter_(limiter), key_(std::move(key)) {}
    ConcurrencyLimiter* limiter_;
    std::string key_;
  };

  // limit <= 0: unlimited.
  explicit ConcurrencyLimiter(int limit) : limit_(limit) {}
  ConcurrencyLimiter(const ConcurrencyLimiter&) = delete;
  ConcurrencyLimiter& operator=(const ConcurrencyLimiter&) = delete;

  // RESOURCE_EXHAUSTED naming the principal and the limit when `key`
  // already has `limit` calls in flight. Refusing at once (instead of
  // queueing) keeps a flood from piling up threads inside the server.
  absl::StatusOr<Slot> Acquire(const std::string& key);

  int InFlight(const std::string& key) const;
  int limit() const { return limit_; }

 private:
  void Release(const std::string& key);

  const int limit_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, int> in_flight_ ABSL_GUARDED_BY(mu_);
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_CONCURRENCY_LIMITER_H_
