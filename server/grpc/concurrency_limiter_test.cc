#include "server/grpc/concurrency_limiter.h"

#include <optional>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::grpc_api {
namespace {

using ::testing::HasSubstr;

TEST(ConcurrencyLimiter, RefusesBeyondTheLimitPerKeyAndFreesOnRelease) {
  ConcurrencyLimiter limiter(2);
  auto a1 = limiter.Acquire("agent-a");
  auto a2 = limiter.Acquire("agent-a");
  ASSERT_TRUE(a1.ok() && a2.ok());
  auto a3 = limiter.Acquire("agent-a");
  ASSERT_FALSE(a3.ok());
  EXPECT_EQ(a3.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(a3.status().message()), HasSubstr("agent-a already has 2 calls"));
  // Another principal has its own budget.
  EXPECT_TRUE(limiter.Acquire("agent-b").ok());
  {
    ConcurrencyLimiter::Slot released = *std::move(a1);
  }
  EXPECT_EQ(limiter.InFlight("agent-a"), 1);
  EXPECT_TRUE(limiter.Acquire("agent-a").ok());
}

TEST(ConcurrencyLimiter, ZeroIsUnlimited) {
  ConcurrencyLimiter limiter(0);
  std::vector<ConcurrencyLimiter::Slot> held;
  for (int i = 0; i < 100; ++i) {
    auto slot = limiter.Acquire("owner");
    ASSERT_TRUE(slot.ok());
    held.push_back(*std::move(slot));
  }
  EXPECT_EQ(limiter.InFlight("owner"), 100);
  held.clear();
  EXPECT_EQ(limiter.InFlight("owner"), 0);
}

TEST(ConcurrencyLimiter, AMovedSlotReleasesOnce) {
  ConcurrencyLimiter limiter(1);
  std::optional<ConcurrencyLimiter::Slot> outer;
  {
    auto slot = limiter.Acquire("k");
    ASSERT_TRUE(slot.ok());
    outer.emplace(*std::move(slot));
  }  // The moved-from StatusOr's slot releases nothing.
  EXPECT_EQ(limiter.InFlight("k"), 1);
  outer.reset();
  EXPECT_EQ(limiter.InFlight("k"), 0);
}

}  // namespace
}  // namespace wsched::grpc_api
