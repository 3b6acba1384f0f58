#include "server/grpc/rate_limiter.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/error_reason.h"

namespace wsched::grpc_api {
namespace {

using ::testing::HasSubstr;

Principal Caller(std::string name, Role role) {
  Principal p;
  p.name = std::move(name);
  p.roles = {role};
  return p;
}

TEST(TokenBucket, AllowsTheBurstThenAdvisesTheWaitForTheNextToken) {
  absl::Time t0 = absl::FromUnixSeconds(1000);
  TokenBucket bucket({.rate = 2, .burst = 3}, t0);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bucket.TryTake(t0), std::nullopt) << i;
  EXPECT_EQ(bucket.TryTake(t0), absl::Milliseconds(500));
  EXPECT_EQ(bucket.TryTake(t0 + absl::Milliseconds(200)), absl::Milliseconds(300));
  EXPECT_EQ(bucket.TryTake(t0 + absl::Milliseconds(500)), std::nullopt);
  EXPECT_FALSE(bucket.Full(t0 + absl::Seconds(1)));
  EXPECT_TRUE(bucket.Full(t0 + absl::Seconds(2)));
}

TEST(TokenBucket, NeverHoldsMoreThanTheBurstAndIgnoresAClockGoingBack) {
  absl::Time t0 = absl::FromUnixSeconds(1000);
  TokenBucket bucket({.rate = 10, .burst = 2}, t0);
  absl::Time later = t0 + absl::Hours(1);
  EXPECT_EQ(bucket.TryTake(later), std::nullopt);
  EXPECT_EQ(bucket.TryTake(later), std::nullopt);
  EXPECT_NE(bucket.TryTake(later), std::nullopt);
  EXPECT_NE(bucket.TryTake(later - absl::Minutes(1)), std::nullopt);
}

TEST(RateLimiter, BurstThenTooManyRequestsWithRetryDelayThenAllowedAsTheClockMoves) {
  absl::Time now = absl::FromUnixSeconds(5000);
  std::vector<Role> refused;
  RateLimiter limiter({{Role::kAgent, {.rate = 1, .burst = 2}}}, [&] { return now; },
                      [&](Role role) { refused.push_back(role); });
  Principal node = Caller("pool-a/node-1", Role::kAgent);
  EXPECT_TRUE(limiter.Admit(node).ok());
  EXPECT_TRUE(limiter.Admit(node).ok());
  absl::Status refusal = limiter.Admit(node);
  EXPECT_EQ(refusal.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(refusal.message()), HasSubstr("pool-a/node-1 sent more than 1 calls"));
  auto details = core::DetailsOf(refusal);
  ASSERT_TRUE(details.has_value());
  EXPECT_EQ(details->reason, core::ErrorReason::kTooManyRequests);
  EXPECT_EQ(details->retry_delay, absl::Seconds(1));
  EXPECT_EQ(details->metadata.at("role"), "agent");
  EXPECT_EQ(refused, std::vector<Role>{Role::kAgent});
  // Another caller of the same role has a bucket of its own.
  EXPECT_TRUE(limiter.Admit(Caller("pool-a/node-2", Role::kAgent)).ok());
  now += absl::Milliseconds(999);
  EXPECT_FALSE(limiter.Admit(node).ok());
  now += absl::Milliseconds(1);
  EXPECT_TRUE(limiter.Admit(node).ok());
}

TEST(RateLimiter, UnlimitedRolesAndTheMostGenerousRoleOfAPrincipal) {
  absl::Time now = absl::FromUnixSeconds(5000);
  RateLimiter limiter({{Role::kAdmin, {.rate = 1, .burst = 1}}}, [&] { return now; });
  Principal both = Caller("ops", Role::kAdmin);
  both.roles.insert(Role::kControlPlane);  // No entry: unlimited, and it wins.
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(limiter.Admit(both).ok()) << i;
  EXPECT_EQ(limiter.Buckets(), 0u);
  Principal admin = Caller("admin", Role::kAdmin);
  EXPECT_TRUE(limiter.Admit(admin).ok());
  EXPECT_FALSE(limiter.Admit(admin).ok());
}

TEST(ParseRateLimits, OverridesTheDefaultsPerRole) {
  auto limits = ParseRateLimits({"agent=100/300", "project-owner=5", "control-plane=0"});
  ASSERT_TRUE(limits.ok()) << limits.status();
  EXPECT_EQ(limits->at(Role::kAgent), (RateLimit{.rate = 100, .burst = 300}));
  EXPECT_EQ(limits->at(Role::kProjectOwner), (RateLimit{.rate = 5, .burst = 5}));
  EXPECT_TRUE(limits->at(Role::kControlPlane).unlimited());
  EXPECT_EQ(limits->at(Role::kAdmin), DefaultRateLimits().at(Role::kAdmin));
}

TEST(ParseRateLimits, NamesTheBadEntryAndTheRule) {
  EXPECT_THAT(std::string(ParseRateLimits({"robot=5"}).status().message()),
              HasSubstr("--rate_limits: robot=5: unknown role \"robot\""));
  EXPECT_THAT(std::string(ParseRateLimits({"agent=fast"}).status().message()),
              HasSubstr("agent=fast: RATE must be a number >= 0"));
  EXPECT_THAT(std::string(ParseRateLimits({"agent=5/0"}).status().message()),
              HasSubstr("agent=5/0: BURST must be a number >= 1"));
  EXPECT_THAT(std::string(ParseRateLimits({"agent=-1"}).status().message()),
              HasSubstr("RATE must be a number >= 0"));
}

}  // namespace
}  // namespace wsched::grpc_api
