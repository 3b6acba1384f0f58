#include "server/replica/drain_requests.h"

namespace wsched::replica {

void DrainRequests::Everything() {
  absl::MutexLock lock(&mu_);
  everything_ = true;
  requested_ = true;
}

void DrainRequests::Pool(const std::string& pool) {
  absl::MutexLock lock(&mu_);
  pools_.insert(pool);
  requested_ = true;
}

DrainRequests::Scope DrainRequests::Take() {
  absl::MutexLock lock(&mu_);
  Scope scope;
  scope.everything = everything_;
  scope.pools.swap(pools_);
  everything_ = false;
  return scope;
}

bool DrainRequests::Await(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || requested_; };
  mu_.AwaitWithTimeout(absl::Condition(&wake), timeout);
  const bool requested = requested_;
  requested_ = false;
  return requested;
}

void DrainRequests::Stop() {
  absl::MutexLock lock(&mu_);
  stopping_ = true;
}

bool DrainRequests::stopping() const {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

}  // namespace wsched::replica
