// store::Prefixed adds context to a status and keeps everything a caller
// reads from it: the code, the reason and RetryInfo, and any other payload.
#include "server/store/pg_status.h"

#include "absl/strings/cord.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/error_reason.h"

namespace wsched::store {
namespace {

TEST(Prefixed, KeepsTheCodeTheDetailsAndEveryPayload) {
  absl::Status unavailable = core::DatabaseUnavailableError("database unreachable: refused");
  unavailable.SetPayload("type.example/other", absl::Cord("kept"));
  absl::Status prefixed = Prefixed("group commit", unavailable);
  EXPECT_EQ(prefixed.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(prefixed.message(), "group commit: database unreachable: refused");
  std::optional<core::ErrorDetails> details = core::DetailsOf(prefixed);
  ASSERT_TRUE(details.has_value());
  EXPECT_EQ(details, core::DetailsOf(unavailable));
  EXPECT_EQ(details->reason, core::ErrorReason::kDatabaseUnavailable);
  EXPECT_TRUE(details->retry_delay.has_value());
  EXPECT_EQ(prefixed.GetPayload("type.example/other"), absl::Cord("kept"));
}

TEST(Prefixed, OkStaysOkAndAnUntaggedStatusStaysUntagged) {
  EXPECT_TRUE(Prefixed("group commit", absl::OkStatus()).ok());
  absl::Status plain = Prefixed("group commit", absl::InternalError("SQL error"));
  EXPECT_EQ(plain, absl::InternalError("group commit: SQL error"));
  EXPECT_FALSE(core::DetailsOf(plain).has_value());
}

}  // namespace
}  // namespace wsched::store
