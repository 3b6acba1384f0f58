#include "server/core/error_reason.h"

#include <set>

#include <gtest/gtest.h>

#include "absl/status/statusor.h"

namespace wsched::core {
namespace {

TEST(ErrorReasonTest, NamesAreUniqueAndNumbersDense) {
  std::set<absl::string_view> names;
  int expected = 1;
  for (ErrorReason reason : AllErrorReasons()) {
    EXPECT_EQ(static_cast<int>(reason), expected++);
    EXPECT_NE(ErrorReasonName(reason), "UNSPECIFIED");
    EXPECT_TRUE(names.insert(ErrorReasonName(reason)).second) << ErrorReasonName(reason);
    EXPECT_NE(ErrorReasonCode(reason), absl::StatusCode::kOk);
  }
  EXPECT_EQ(ErrorReasonName(static_cast<ErrorReason>(9999)), "UNSPECIFIED");
}

TEST(ErrorReasonTest, EveryErrorCodeHasAGenericReasonOfThatCode) {
  for (int code = 1; code <= 16; ++code) {
    auto c = static_cast<absl::StatusCode>(code);
    ErrorReason generic = GenericReasonFor(c);
    ASSERT_NE(generic, ErrorReason::kUnspecified) << code;
    if (c != absl::StatusCode::kUnknown && c != absl::StatusCode::kDataLoss) {
      EXPECT_EQ(ErrorReasonCode(generic), c) << ErrorReasonName(generic);
    }
  }
}

TEST(ErrorReasonTest, DetailsRoundTripThroughThePayload) {
  ErrorDetails d;
  d.reason = ErrorReason::kInvalidField;
  d.metadata = {{"a", "1"}, {"with:colon", "line\nbreak"}, {"", ""}};
  d.field_violations = {{"settings.allowed_classes[2]", "class x does not exist"}};
  d.quota_violations = {{"org:acme", "12:34"}};
  d.precondition_violations = {{"VERSION", "class/x", ""}};
  d.resource = ResourceRef{"class", "x", "desc"};
  d.retry_delay = absl::Milliseconds(1500);
  absl::Status status = WithDetails(absl::InvalidArgumentError("bad"), d);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "bad");
  std::optional<ErrorDetails> back = DetailsOf(status);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, d);
}

TEST(ErrorReasonTest, PayloadSurvivesStatusOrPropagation) {
  auto inner = []() -> absl::StatusOr<int> {
    return NotFoundError(ErrorReason::kClassNotFound, "class", "gpu-x");
  };
  auto outer = [&]() -> absl::Status {
    absl::StatusOr<int> v = inner();
    if (!v.ok()) return v.status();
    return absl::OkStatus();
  };
  absl::Status status = outer();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "class gpu-x does not exist");
  ASSERT_TRUE(DetailsOf(status).has_value());
  EXPECT_EQ(DetailsOf(status)->reason, ErrorReason::kClassNotFound);
  EXPECT_EQ(DetailsOf(status)->resource, (ResourceRef{"class", "gpu-x", status.message().data()}));
}

TEST(ErrorReasonTest, UntaggedAndDamagedPayloadsReadAsNone) {
  EXPECT_FALSE(DetailsOf(absl::InternalError("x")).has_value());
  absl::Status damaged = absl::InternalError("x");
  damaged.SetPayload(kErrorDetailsTypeUrl, absl::Cord("R99:1"));
  EXPECT_FALSE(DetailsOf(damaged).has_value());
  damaged.SetPayload(kErrorDetailsTypeUrl, absl::Cord("Z1:1"));
  EXPECT_FALSE(DetailsOf(damaged).has_value());
}

TEST(ErrorReasonTest, OkStaysOkWithoutPayload) {
  absl::Status ok = WithReason(absl::OkStatus(), ErrorReason::kNodeLost);
  EXPECT_TRUE(ok.ok());
  EXPECT_FALSE(DetailsOf(ok).has_value());
}

TEST(ErrorReasonTest, InvalidFieldNamesTheFieldAndTheRule) {
  absl::Status status = InvalidFieldError("page_size", "must be >= 0");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "page_size: must be >= 0");
  EXPECT_EQ(DetailsOf(status)->field_violations,
            (std::vector<FieldViolation>{{"page_size", "must be >= 0"}}));
}

TEST(ErrorReasonTest, ErrorLinesBecomeOneViolationEach) {
  absl::Status status =
      InvalidFieldLinesError({"classes[2].gpu.count: must be >= 0", "no path here"});
  EXPECT_EQ(status.message(), "classes[2].gpu.count: must be >= 0\nno path here");
  EXPECT_EQ(DetailsOf(status)->field_violations,
            (std::vector<FieldViolation>{{"classes[2].gpu.count", "must be >= 0"},
                                         {"", "no path here"}}));
}

TEST(ErrorReasonTest, VersionMismatchCarriesBothVersions) {
  absl::Status status = VersionMismatchError("class", "gpu-a", 7, 5);
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(status.message(),
            "class gpu-a is at version 7, not expected_version 5: it changed since you read it; "
            "re-read and retry");
  ErrorDetails d = *DetailsOf(status);
  EXPECT_EQ(d.reason, ErrorReason::kVersionMismatch);
  EXPECT_EQ(d.metadata.at("current_version"), "7");
  EXPECT_EQ(d.metadata.at("expected_version"), "5");
  ASSERT_EQ(d.precondition_violations.size(), 1u);
  EXPECT_EQ(d.precondition_violations[0].type, "VERSION");
  EXPECT_EQ(d.precondition_violations[0].subject, "class/gpu-a");
}

TEST(ErrorReasonTest, QuotaAndBackPressureAreTellApart) {
  absl::Status quota = OrgGpuQuotaExceededError("acme", "gpu-a", 3, 4, 2);
  absl::Status busy = TooManyRequestsError("busy", absl::Seconds(1));
  EXPECT_EQ(quota.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(busy.code(), absl::StatusCode::kResourceExhausted);
  ErrorDetails q = *DetailsOf(quota);
  ErrorDetails b = *DetailsOf(busy);
  EXPECT_EQ(q.reason, ErrorReason::kOrgGpuQuotaExceeded);
  EXPECT_EQ(q.metadata.at("gpu_quota"), "4");
  EXPECT_EQ(q.metadata.at("gpus_held"), "3");
  EXPECT_EQ(q.metadata.at("gpus_requested"), "2");
  EXPECT_EQ(q.quota_violations.at(0).subject, "org:acme");
  EXPECT_FALSE(q.retry_delay.has_value());
  EXPECT_EQ(b.reason, ErrorReason::kTooManyRequests);
  EXPECT_EQ(b.retry_delay, absl::Seconds(1));
  EXPECT_TRUE(b.quota_violations.empty());
}

}  // namespace
}  // namespace wsched::core
