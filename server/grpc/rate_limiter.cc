#include "server/grpc/rate_limiter.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/core/error_reason.h"

namespace wsched::grpc_api {
namespace {

// Past this many buckets, Admit forgets the full ones: a full bucket is what
// a new one would be, so the map stays as small as the recent callers.
constexpr size_t kForgetAbove = 4096;

absl::StatusOr<RateLimit> ParseLimit(absl::string_view entry, absl::string_view value) {
  std::vector<absl::string_view> parts = absl::StrSplit(value, '/');
  RateLimit limit;
  if (parts.size() > 2 || !absl::SimpleAtod(parts[0], &limit.rate) || !std::isfinite(limit.rate) ||
      limit.rate < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--rate_limits: ", entry, ": RATE must be a number >= 0 (0 = unlimited), as ROLE=RATE/BURST"));
  }
  limit.burst = std::max(limit.rate, 1.0);  // Without BURST: one second's worth.
  if (parts.size() == 2 &&
      (!absl::SimpleAtod(parts[1], &limit.burst) || !std::isfinite(limit.burst) || limit.burst < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--rate_limits: ", entry, ": BURST must be a number >= 1"));
  }
  return limit;
}

}  // namespace

TokenBucket::TokenBucket(RateLimit limit, absl::Time now)
    : limit_(limit), tokens_(limit.burst), updated_(now) {}

void TokenBucket::Refill(absl::Time now) {
  if (now <= updated_) return;  // A clock that steps back gives nothing.
  tokens_ = std::min(limit_.burst, tokens_ + absl::ToDoubleSeconds(now - updated_) * limit_.rate);
  updated_ = now;
}

std::optional<absl::Duration> TokenBucket::TryTake(absl::Time now) {
  if (limit_.unlimited()) return std::nullopt;
  Refill(now);
  if (tokens_ >= 1) {
    tokens_ -= 1;
    return std::nullopt;
  }
  // Rounded up to the millisecond: retrying at the advised moment succeeds.
  double seconds = (1 - tokens_) / limit_.rate;
  return absl::Milliseconds(std::ceil(seconds * 1000));
}

bool TokenBucket::Full(absl::Time now) const {
  if (limit_.unlimited()) return true;
  double tokens = tokens_ + absl::ToDoubleSeconds(std::max(now - updated_, absl::ZeroDuration())) *
                                limit_.rate;
  return tokens >= limit_.burst;
}

RateLimits DefaultRateLimits() {
  return {
      // The hot path: placements are never throttled by default.
      {Role::kControlPlane, {.rate = 0, .burst = 0}},
      // One pool-wide agent token may speak for thousands of nodes.
      {Role::kAgent, {.rate = 5000, .burst = 10000}},
      {Role::kAdmin, {.rate = 1000, .burst = 2000}},
      {Role::kProjectOwner, {.rate = 50, .burst = 200}},
      {Role::kActuator, {.rate = 50, .burst = 200}},
  };
}

absl::StatusOr<RateLimits> ParseRateLimits(const std::vector<std::string>& entries) {
  RateLimits limits = DefaultRateLimits();
  for (const std::string& entry : entries) {
    if (entry.empty()) continue;
    std::pair<std::string, std::string> kv = absl::StrSplit(entry, absl::MaxSplits('=', 1));
    auto role = ParseRole(kv.first);
    if (!role.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--rate_limits: ", entry, ": ", role.status().message()));
    }
    auto limit = ParseLimit(entry, kv.second);
    if (!limit.ok()) return limit.status();
    limits[*role] = *limit;
  }
  return limits;
}

std::pair<Role, RateLimit> LimitFor(const Principal& principal, const RateLimits& limits) {
  std::optional<std::pair<Role, RateLimit>> best;
  for (Role role : principal.roles) {
    auto it = limits.find(role);
    RateLimit limit = it == limits.end() ? RateLimit{} : it->second;
    if (limit.unlimited()) return {role, limit};
    if (!best || limit.rate > best->second.rate ||
        (limit.rate == best->second.rate && limit.burst > best->second.burst)) {
      best.emplace(role, limit);
    }
  }
  if (!best) return {Role::kAdmin, RateLimit{}};  // No role: refused by Authorize before this.
  return *best;
}

RateLimiter::RateLimiter(RateLimits limits, Clock clock, OnRefused on_refused)
    : limits_(std::move(limits)), clock_(std::move(clock)), on_refused_(std::move(on_refused)) {}

absl::Status RateLimiter::Admit(const Principal& principal) {
  auto [role, limit] = LimitFor(principal, limits_);
  if (limit.unlimited()) return absl::OkStatus();
  absl::Time now = clock_();
  std::optional<absl::Duration> wait;
  {
    absl::MutexLock lock(&mu_);
    if (buckets_.size() > kForgetAbove) {
      absl::erase_if(buckets_, [now](const auto& entry) { return entry.second.Full(now); });
    }
    auto it = buckets_.try_emplace(principal.name, limit, now).first;
    wait = it->second.TryTake(now);
  }
  if (!wait) return absl::OkStatus();
  if (on_refused_) on_refused_(role);
  // Back-pressure, not a quota: the same request succeeds after the delay.
  return core::TooManyRequestsError(
      absl::StrCat(principal.name, " sent more than ", limit.rate, " calls per second (burst ",
                   limit.burst, ") allowed to role ", RoleName(role),
                   " (--rate_limits); retry after ", absl::FormatDuration(*wait)),
      *wait,
      {{"principal", principal.name},
       {"role", RoleName(role)},
       {"rate_per_second", absl::StrCat(limit.rate)},
       {"burst", absl::StrCat(limit.burst)}});
}

size_t RateLimiter::Buckets() const {
  absl::MutexLock lock(&mu_);
  return buckets_.size();
}

}  // namespace wsched::grpc_api
