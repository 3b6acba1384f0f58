// The libpq parameters wsched adds to the operator's database URL, and the
// lease options it refuses (no database needed).
#include <cstdlib>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/database.h"
#include "server/store/lock_lease.h"

namespace wsched::store {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kAll[] =
    "connect_timeout=2&keepalives=1&keepalives_idle=5&keepalives_interval=2&keepalives_count=3&"
    "tcp_user_timeout=10000";

class NetworkBoundsTest : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv("PGCONNECT_TIMEOUT"); }
};

TEST_F(NetworkBoundsTest, AUriWithoutParametersGetsThemAll) {
  EXPECT_EQ(WithNetworkBounds("postgresql://u@db:5432/wsched"),
            std::string("postgresql://u@db:5432/wsched?") + kAll);
}

TEST_F(NetworkBoundsTest, AMultiHostUriKeepsItsParametersAndGetsTheRest) {
  EXPECT_EQ(WithNetworkBounds("postgresql://u@a:5432,b:5432/wsched?target_session_attrs=read-write"),
            std::string("postgresql://u@a:5432,b:5432/wsched?target_session_attrs=read-write&") +
                kAll);
}

TEST_F(NetworkBoundsTest, WhatTheOperatorSetIsNeverReplaced) {
  std::string url = WithNetworkBounds(
      "postgres://u@db/wsched?connect_timeout=7&tcp_user_timeout=30000&keepalives=0");
  EXPECT_THAT(url, HasSubstr("connect_timeout=7"));
  EXPECT_THAT(url, HasSubstr("tcp_user_timeout=30000"));
  EXPECT_THAT(url, HasSubstr("keepalives=0"));
  EXPECT_THAT(url, Not(HasSubstr("connect_timeout=2")));
  EXPECT_THAT(url, Not(HasSubstr("tcp_user_timeout=10000")));
  EXPECT_THAT(url, Not(HasSubstr("keepalives=1")));
  EXPECT_THAT(url, HasSubstr("keepalives_idle=5"));
}

TEST_F(NetworkBoundsTest, AKeyValueStringGetsKeyValuePairs) {
  EXPECT_EQ(WithNetworkBounds("host=db dbname=wsched connect_timeout=4"),
            "host=db dbname=wsched connect_timeout=4 keepalives=1 keepalives_idle=5 "
            "keepalives_interval=2 keepalives_count=3 tcp_user_timeout=10000");
}

TEST_F(NetworkBoundsTest, PgConnectTimeoutInTheEnvironmentIsTheOperatorsChoice) {
  setenv("PGCONNECT_TIMEOUT", "9", 1);
  EXPECT_THAT(WithNetworkBounds("postgresql://db/wsched"), Not(HasSubstr("connect_timeout")));
  unsetenv("PGCONNECT_TIMEOUT");
}

TEST_F(NetworkBoundsTest, AUrlLibpqCannotParseIsLeftForConnectingToReport) {
  EXPECT_EQ(WithNetworkBounds("postgresql://db/wsched?nonsense=1"),
            "postgresql://db/wsched?nonsense=1");
  EXPECT_EQ(WithNetworkBounds("host=db 'unterminated"), "host=db 'unterminated");
}

TEST(LeaseOptions, HalfTheLeaseMustOutlastAProbeIntervalAndAProbe) {
  EXPECT_TRUE(CheckLeaseOptions({.probe = absl::Seconds(1), .lease = absl::Seconds(6)},
                                absl::Milliseconds(250))
                  .ok());
  absl::Status short_lease = CheckLeaseOptions(
      {.probe = absl::Seconds(1), .lease = absl::Seconds(2)}, absl::Milliseconds(250));
  EXPECT_EQ(short_lease.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(short_lease.message(), HasSubstr("--leader_lease"));
  EXPECT_THAT(CheckLeaseOptions({.probe = absl::ZeroDuration()}, absl::Milliseconds(250)).message(),
              HasSubstr("--database_probe_timeout"));
}

}  // namespace
}  // namespace wsched::store
