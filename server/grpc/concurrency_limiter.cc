#include "server/grpc/concurrency_limiter.h"

#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"

namespace wsched::grpc_api {
namespace {

// What RetryInfo advises: about the length of one ordinary call.
constexpr absl::Duration kRetryDelay = absl::Milliseconds(200);

}  // namespace

absl::StatusOr<ConcurrencyLimiter::Slot> ConcurrencyLimiter::Acquire(const std::string& key) {
  absl::MutexLock lock(&mu_);
  int& count = in_flight_[key];
  if (limit_ > 0 && count >= limit_) {
    // Back-pressure, not a quota: the caller retries after RetryInfo's
    // delay, by which time a call of its own has usually finished.
    return core::TooManyRequestsError(
        absl::StrCat(key, " already has ", count, " calls in flight, the most one caller may have ",
                     "(--max_concurrent_calls_per_principal); retry with backoff"),
        kRetryDelay,
        {{"principal", key},
         {"calls_in_flight", absl::StrCat(count)},
         {"max_calls_in_flight", absl::StrCat(limit_)}});
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
