#include "server/grpc/concurrency_limiter.h"

#include "absl/strings/str_cat.h"

namespace wsched::grpc_api {

absl::StatusOr<ConcurrencyLimiter::Slot> ConcurrencyLimiter::Acquire(const std::string& key) {
  absl::MutexLock lock(&mu_);
  int& count = in_flight_[key];
  if (limit_ > 0 && count >= limit_) {
    return absl::ResourceExhaustedError(
        absl::StrCat(key, " already has ", count, " calls in flight, the most one caller may have ",
                     "(--max_concurrent_calls_per_principal); retry with backoff"));
  }
  ++count;
  return Slot(this, key);
}

void ConcurrencyLimiter::Release(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = in_flight_.find(key);
  if (it == in_flight_.end()) return;
  if (--it->second <= 0) in_flight_.erase(it);  // Keeps the map as small as the callers now.
}

int ConcurrencyLimiter::InFlight(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = in_flight_.find(key);
  return it == in_flight_.end() ? 0 : it->second;
}

}  // namespace wsched::grpc_api
