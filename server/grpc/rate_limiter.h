// Calls per second per principal: a token bucket for every caller, with a
// rate and burst set per role (--rate_limits). The concurrency cap
// (concurrency_limiter.h) bounds how many calls one caller holds at once; this
// bounds how many it may start, so a caller whose calls are quick cannot
// still take the server's capacity by sending them in a tight loop.
#ifndef WSCHED_SERVER_GRPC_RATE_LIMITER_H_
#define WSCHED_SERVER_GRPC_RATE_LIMITER_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/grpc/principal.h"

namespace wsched::grpc_api {

// How fast one caller may go: `rate` calls per second on average, `burst`
// at once after a quiet spell. rate <= 0: unlimited.
struct RateLimit {
  double rate = 0;
  double burst = 0;
  bool unlimited() const { return rate <= 0; }
  friend bool operator==(const RateLimit&, const RateLimit&) = default;
};

// A pure token bucket: it holds up to `burst` tokens, gains `rate` per
// second, and each call takes one. Time comes from the caller, so tests
// move it by hand.
class TokenBucket {
 public:
  TokenBucket(RateLimit limit, absl::Time now);
  // Takes a token: nullopt when the call may go, else how long until the
  // next token (what RetryInfo advises).
  std::optional<absl::Duration> TryTake(absl::Time now);
  // Full again: it behaves as a new bucket would, so it can be forgotten.
  bool Full(absl::Time now) const;

 private:
  void Refill(absl::Time now);
  RateLimit limit_;
  double tokens_;
  absl::Time updated_;
};

// Limits per role; a role without an entry is unlimited.
using RateLimits = std::map<Role, RateLimit>;

// The defaults of --rate_limits: generous enough that a pool-wide agent
// token beating for thousands of nodes, or the control plane's hot path,
// is never throttled (see docs/operations.md).
RateLimits DefaultRateLimits();

// Parses --rate_limits entries "ROLE=RATE/BURST" ("agent=100/200",
// "control-plane=0" for unlimited) over DefaultRateLimits(); errors name
// the entry and the rule.
absl::StatusOr<RateLimits> ParseRateLimits(const std::vector<std::string>& entries);

// A principal's limit: the most generous of its roles' (an admin token that
// also holds control-plane is not held to the admin rate), with the role
// it came from.
std::pair<Role, RateLimit> LimitFor(const Principal& principal, const RateLimits& limits);

class RateLimiter {
 public:
  using Clock = std::function<absl::Time()>;
  // Called with the role of every refused call (for the metric).
  using OnRefused = std::function<void(Role)>;

  RateLimiter(RateLimits limits, Clock clock, OnRefused on_refused = nullptr);
  RateLimiter(const RateLimiter&) = delete;
  RateLimiter& operator=(const RateLimiter&) = delete;

  // OK, or RESOURCE_EXHAUSTED with reason TOO_MANY_REQUESTS and RetryInfo
  // saying when the principal's next call may go.
  absl::Status Admit(const Principal& principal);

  // Buckets held now (forgotten once full again, see Admit).
  size_t Buckets() const;

 private:
  const RateLimits limits_;
  const Clock clock_;
  const OnRefused on_refused_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, TokenBucket> buckets_ ABSL_GUARDED_BY(mu_);
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_RATE_LIMITER_H_
