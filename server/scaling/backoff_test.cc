#include "server/scaling/backoff.h"

#include "gtest/gtest.h"

namespace wsched::scaling {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1'700'000'000);

TEST(BackoffTest, DoublesFromThirtySecondsUpToTenMinutes) {
  Backoff backoff;
  EXPECT_FALSE(backoff.Active(kStart));
  std::vector<absl::Duration> pauses;
  absl::Time now = kStart;
  for (int i = 0; i < 8; ++i) {
    backoff.RecordFailure(now);
    pauses.push_back(*backoff.ActiveUntil(now) - now);
    now = *backoff.ActiveUntil(now);  // The next failure comes after the pause.
  }
  EXPECT_EQ(pauses,
            (std::vector<absl::Duration>{absl::Seconds(30), absl::Seconds(60), absl::Seconds(120),
                                         absl::Seconds(240), absl::Seconds(480), absl::Minutes(10),
                                         absl::Minutes(10), absl::Minutes(10)}));
  EXPECT_EQ(backoff.consecutive_failures(), 8);
}

TEST(BackoffTest, EndsOnItsOwn) {
  Backoff backoff;
  backoff.RecordFailure(kStart);
  EXPECT_TRUE(backoff.Active(kStart + absl::Seconds(29)));
  EXPECT_FALSE(backoff.Active(kStart + absl::Seconds(30)));
  EXPECT_EQ(backoff.ActiveUntil(kStart + absl::Seconds(30)), std::nullopt);
}

TEST(BackoffTest, SuccessStartsOver) {
  Backoff backoff;
  backoff.RecordFailure(kStart);
  backoff.RecordFailure(kStart);
  backoff.RecordSuccess();
  EXPECT_FALSE(backoff.Active(kStart));
  backoff.RecordFailure(kStart);
  EXPECT_EQ(*backoff.ActiveUntil(kStart), kStart + absl::Seconds(30));
}

TEST(BackoffTest, AFailureNeverShortensAPause) {
  Backoff backoff({.initial = absl::Seconds(30), .max = absl::Seconds(40)});
  backoff.RecordFailure(kStart);
  backoff.RecordFailure(kStart);                      // Pause 40 s, until +40.
  backoff.RecordFailure(kStart - absl::Seconds(30));  // Would end at +10.
  EXPECT_EQ(*backoff.ActiveUntil(kStart), kStart + absl::Seconds(40));
}

}  // namespace
}  // namespace wsched::scaling
