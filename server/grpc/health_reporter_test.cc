#include "server/grpc/health_reporter.h"

#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::grpc_api {
namespace {

using ::testing::HasSubstr;

// Records what the reporter sets, as gRPC's default health service would
// store it; counts calls so tests see that unchanged verdicts set nothing.
class FakeHealth : public grpc::HealthCheckServiceInterface {
 public:
  void SetServingStatus(const std::string& service, bool serving) override {
    absl::MutexLock lock(&mu_);
    status_[service] = serving;
    order_.push_back(service);
    calls_++;
  }
  void SetServingStatus(bool serving) override {
    absl::MutexLock lock(&mu_);
    for (auto& [name, status] : status_) status = serving;
    calls_++;
  }
  std::map<std::string, bool> status() {
    absl::MutexLock lock(&mu_);
    return status_;
  }
  int calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }
  // The service names in the order they were set.
  std::vector<std::string> order() {
    absl::MutexLock lock(&mu_);
    return order_;
  }
  // Waits (up to 10 s) until "" has been set to `serving`.
  bool AwaitOverall(bool serving) {
    absl::MutexLock lock(&mu_);
    auto reached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      auto it = status_.find("");
      return it != status_.end() && it->second == serving;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(10));
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, bool> status_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> order_ ABSL_GUARDED_BY(mu_);
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
};

constexpr int kSchema = 12;

class HealthReporterTest : public ::testing::Test {
 protected:
  HealthReporterTest()
      : reporter_(&health_, Probes(), Options(), &metrics_, [this] { return Now(); }) {}

  HealthProbes Probes() {
    return {.schema_version = [this]() -> absl::StatusOr<int> {
              absl::MutexLock lock(&mu_);
              return schema_;
            },
            .feed_caught_up_at = [this] {
              absl::MutexLock lock(&mu_);
              return caught_up_at_;
            },
            .last_abandoned_call = [this] {
              absl::MutexLock lock(&mu_);
              return abandoned_at_;
            },
            .writer_failing_since = [this] {
              absl::MutexLock lock(&mu_);
              return writer_failing_since_;
            }};
  }
  void SetAbandonedAt(absl::Time at) {
    absl::MutexLock lock(&mu_);
    abandoned_at_ = at;
  }
  void SetWriterFailingSince(absl::Time at) {
    absl::MutexLock lock(&mu_);
    writer_failing_since_ = at;
  }
  static HealthReporterOptions Options() {
    return {.services = {"wsched.v1.ClassService", "wsched.v1.PlacementService"},
            .required_schema_version = kSchema,
            .max_feed_lag = absl::Seconds(30),
            .interval = absl::Milliseconds(10)};
  }
  absl::Time Now() {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void SetSchema(absl::StatusOr<int> schema) {
    absl::MutexLock lock(&mu_);
    schema_ = std::move(schema);
  }
  void SetCaughtUpAt(absl::Time at) {
    absl::MutexLock lock(&mu_);
    caught_up_at_ = at;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }
  bool MetricHas(const std::string& line) { return metrics_.Scrape().find(line) != std::string::npos; }

  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_) = absl::UnixEpoch() + absl::Hours(1);
  absl::StatusOr<int> schema_ ABSL_GUARDED_BY(mu_) = kSchema;
  absl::Time caught_up_at_ ABSL_GUARDED_BY(mu_) = absl::UnixEpoch() + absl::Hours(1);
  absl::Time abandoned_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Time writer_failing_since_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  FakeHealth health_;
  metrics::Metrics metrics_;
  HealthReporter reporter_;
};

TEST_F(HealthReporterTest, AllChecksPassingSetsEveryServiceNameServing) {
  HealthVerdict verdict = reporter_.CheckNow();
  EXPECT_TRUE(verdict.serving);
  EXPECT_EQ(verdict.reason, "");
  EXPECT_EQ(health_.status(), (std::map<std::string, bool>{{"", true},
                                                            {"liveness", true},
                                                            {"wsched.v1.ClassService", true},
                                                            {"wsched.v1.PlacementService", true}}));
  EXPECT_TRUE(MetricHas("wsched_health_serving 1"));
  EXPECT_TRUE(MetricHas("wsched_health_check_ok{check=\"database\"} 1"));
}

TEST_F(HealthReporterTest, UnreachableDatabaseIsNotServingUntilItAnswersAgain) {
  ASSERT_TRUE(reporter_.CheckNow().serving);
  SetSchema(absl::UnavailableError("connection refused"));
  HealthVerdict verdict = reporter_.CheckNow();
  EXPECT_FALSE(verdict.serving);
  EXPECT_FALSE(verdict.database_ok);
  EXPECT_THAT(verdict.reason, HasSubstr("database unreachable: connection refused"));
  auto status = health_.status();
  EXPECT_FALSE(status[""]);
  EXPECT_FALSE(status["wsched.v1.ClassService"]);
  EXPECT_FALSE(status["wsched.v1.PlacementService"]);
  EXPECT_TRUE(status["liveness"]) << "a database outage must not fail liveness";
  EXPECT_TRUE(MetricHas("wsched_health_serving 0"));
  EXPECT_TRUE(MetricHas("wsched_health_check_ok{check=\"database\"} 0"));

  SetSchema(kSchema);
  EXPECT_TRUE(reporter_.CheckNow().serving);
  EXPECT_TRUE(health_.status()[""]);
  EXPECT_TRUE(health_.status()["wsched.v1.ClassService"]);
}

TEST_F(HealthReporterTest, IncompleteMigrationsAreNotServing) {
  SetSchema(kSchema - 1);
  HealthVerdict verdict = reporter_.CheckNow();
  EXPECT_FALSE(verdict.serving);
  EXPECT_TRUE(verdict.database_ok);
  EXPECT_FALSE(verdict.schema_ok);
  EXPECT_THAT(verdict.reason, HasSubstr("schema version 11, this binary needs 12"));
  EXPECT_FALSE(health_.status()[""]);
  // A newer schema (a newer replica migrated during a rolling upgrade) is complete.
  SetSchema(kSchema + 1);
  EXPECT_TRUE(reporter_.CheckNow().serving);
}

TEST_F(HealthReporterTest, FeedLagPastTheLimitIsNotServingAndClearsWhenCaughtUp) {
  Advance(absl::Seconds(30));
  EXPECT_TRUE(reporter_.CheckNow().serving) << "exactly at the limit still serves";
  Advance(absl::Seconds(1));
  HealthVerdict verdict = reporter_.CheckNow();
  EXPECT_FALSE(verdict.serving);
  EXPECT_TRUE(verdict.database_ok);
  EXPECT_FALSE(verdict.feed_ok);
  EXPECT_THAT(verdict.reason, HasSubstr("change feed behind by 31s"));
  EXPECT_TRUE(MetricHas("wsched_health_check_ok{check=\"feed\"} 0"));
  SetCaughtUpAt(Now());
  EXPECT_TRUE(reporter_.CheckNow().serving);
}

TEST_F(HealthReporterTest, AnAbandonedCallIsNotServingUntilAProbeBegunAfterItIsAnswered) {
  ASSERT_TRUE(reporter_.CheckNow().serving);
  // Abandoned at the moment this check's probe begins (the clock does not
  // move during it): the probe's answer may predate the hang.
  SetAbandonedAt(Now());
  HealthVerdict verdict = reporter_.CheckNow();
  EXPECT_FALSE(verdict.serving);
  EXPECT_TRUE(verdict.database_ok);
  EXPECT_FALSE(verdict.calls_ok);
  EXPECT_THAT(verdict.reason, HasSubstr("a database call got no answer within its bound 0 ago"));
  EXPECT_TRUE(MetricHas("wsched_health_check_ok{check=\"database_calls\"} 0"));
  // The next check's probe begins later and is answered: SERVING by itself.
  Advance(absl::Seconds(1));
  verdict = reporter_.CheckNow();
  EXPECT_TRUE(verdict.serving) << verdict.reason;
  EXPECT_TRUE(verdict.calls_ok);
}

TEST_F(HealthReporterTest, AWriterThatCannotCommitIsNotServingUntilItCan) {
  SetWriterFailingSince(Now() - absl::Seconds(3));
  HealthVerdict verdict = reporter_.CheckNow();
  EXPECT_FALSE(verdict.serving);
  EXPECT_FALSE(verdict.writer_ok);
  EXPECT_THAT(verdict.reason, HasSubstr("group commit cannot commit for 3s"));
  EXPECT_TRUE(MetricHas("wsched_health_check_ok{check=\"writer\"} 0"));
  SetWriterFailingSince(absl::InfiniteFuture());
  EXPECT_TRUE(reporter_.CheckNow().serving);
}

TEST_F(HealthReporterTest, NeverCaughtUpIsNotServing) {
  SetCaughtUpAt(absl::InfinitePast());
  EXPECT_FALSE(reporter_.CheckNow().feed_ok);
}

TEST_F(HealthReporterTest, EveryFailedCheckIsNamed) {
  SetSchema(absl::UnavailableError("down"));
  Advance(absl::Minutes(5));
  HealthVerdict verdict = reporter_.CheckNow();
  EXPECT_THAT(verdict.reason, HasSubstr("database unreachable"));
  EXPECT_THAT(verdict.reason, HasSubstr("change feed behind"));
}

// A readiness probe or watcher that sees "" change must find every named
// service changed already, in both directions.
TEST_F(HealthReporterTest, TheOverallStatusIsSetAfterEveryNamedService) {
  reporter_.CheckNow();
  SetSchema(absl::UnavailableError("down"));
  reporter_.CheckNow();
  SetSchema(kSchema);
  reporter_.CheckNow();
  std::vector<std::string> order = health_.order();
  std::vector<std::string> one_change = {"wsched.v1.ClassService", "wsched.v1.PlacementService",
                                         ""};
  std::vector<std::string> want = one_change;
  want.push_back("liveness");
  for (int i = 0; i < 2; ++i) want.insert(want.end(), one_change.begin(), one_change.end());
  EXPECT_EQ(order, want);
}

TEST_F(HealthReporterTest, AnUnchangedVerdictSetsNothing) {
  reporter_.CheckNow();
  int calls = health_.calls();
  reporter_.CheckNow();
  reporter_.CheckNow();
  EXPECT_EQ(health_.calls(), calls);
}

TEST_F(HealthReporterTest, TheThreadChecksOnItsOwnAndRecovers) {
  reporter_.Start();
  ASSERT_TRUE(health_.AwaitOverall(true));
  SetSchema(absl::UnavailableError("down"));
  EXPECT_TRUE(health_.AwaitOverall(false));
  SetSchema(kSchema);
  EXPECT_TRUE(health_.AwaitOverall(true));
  reporter_.Stop();
}

}  // namespace
}  // namespace wsched::grpc_api
