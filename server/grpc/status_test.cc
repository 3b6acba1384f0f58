#include "server/grpc/status.h"

#include <gtest/gtest.h>

#include "wsched/v1/errors.pb.h"
#include "google/rpc/error_details.pb.h"
#include "server/core/error_reason.h"

namespace wsched::grpc_api {
namespace {

google::rpc::Status Parsed(const grpc::Status& status) {
  google::rpc::Status rpc;
  EXPECT_TRUE(rpc.ParseFromString(status.error_details()));
  return rpc;
}

template <typename T>
std::optional<T> Find(const google::rpc::Status& rpc) {
  for (const auto& any : rpc.details()) {
    T out;
    if (any.UnpackTo(&out)) return out;
  }
  return std::nullopt;
}

TEST(StatusTest, OkHasNoDetails) {
  grpc::Status ok = ToGrpc(absl::OkStatus());
  EXPECT_TRUE(ok.ok());
  EXPECT_TRUE(ok.error_details().empty());
}

TEST(StatusTest, CoreReasonsAreTheProtoEnumWithoutItsPrefix) {
  const auto* descriptor = v1::ErrorReason_descriptor();
  EXPECT_EQ(descriptor->value_count(), static_cast<int>(core::AllErrorReasons().size()) + 1);
  for (core::ErrorReason reason : core::AllErrorReasons()) {
    const auto* value = descriptor->FindValueByNumber(static_cast<int>(reason));
    ASSERT_NE(value, nullptr) << core::ErrorReasonName(reason);
    EXPECT_EQ(value->name(), "ERROR_REASON_" + std::string(core::ErrorReasonName(reason)));
  }
}

TEST(StatusTest, UntaggedErrorsGetTheGenericReasonOfTheirCode) {
  grpc::Status status = ToGrpc(absl::InternalError("boom"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(status.error_message(), "boom");
  google::rpc::Status rpc = Parsed(status);
  EXPECT_EQ(rpc.code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(rpc.message(), "boom");
  ASSERT_EQ(rpc.details_size(), 1);
  auto info = Find<google::rpc::ErrorInfo>(rpc);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->reason(), "INTERNAL_ERROR");
  EXPECT_EQ(info->domain(), "wsched.io");
  EXPECT_EQ(Find<google::rpc::ErrorInfo>(Parsed(ToGrpc(absl::NotFoundError("x"))))->reason(),
            "RESOURCE_NOT_FOUND");
}

TEST(StatusTest, FieldViolationsBecomeBadRequest) {
  google::rpc::Status rpc =
      Parsed(ToGrpc(core::InvalidFieldError("node.gpus[1].uuid", "is required")));
  EXPECT_EQ(rpc.code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Find<google::rpc::ErrorInfo>(rpc)->reason(), "INVALID_FIELD");
  auto bad = Find<google::rpc::BadRequest>(rpc);
  ASSERT_TRUE(bad.has_value());
  ASSERT_EQ(bad->field_violations_size(), 1);
  EXPECT_EQ(bad->field_violations(0).field(), "node.gpus[1].uuid");
  EXPECT_EQ(bad->field_violations(0).description(), "is required");
}

TEST(StatusTest, QuotaFailureCarriesTheFigures) {
  google::rpc::Status rpc =
      Parsed(ToGrpc(core::OrgGpuQuotaExceededError("acme", "gpu-a", 3, 4, 2)));
  EXPECT_EQ(rpc.code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  auto info = *Find<google::rpc::ErrorInfo>(rpc);
  EXPECT_EQ(info.reason(), "ORG_GPU_QUOTA_EXCEEDED");
  EXPECT_EQ(info.metadata().at("org"), "acme");
  EXPECT_EQ(info.metadata().at("gpu_quota"), "4");
  auto quota = Find<google::rpc::QuotaFailure>(rpc);
  ASSERT_TRUE(quota.has_value());
  EXPECT_EQ(quota->violations(0).subject(), "org:acme");
  EXPECT_FALSE(Find<google::rpc::RetryInfo>(rpc).has_value());
}

TEST(StatusTest, BackPressureCarriesRetryInfo) {
  google::rpc::Status rpc =
      Parsed(ToGrpc(core::TooManyRequestsError("busy", absl::Milliseconds(1500))));
  EXPECT_EQ(rpc.code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(Find<google::rpc::ErrorInfo>(rpc)->reason(), "TOO_MANY_REQUESTS");
  auto retry = Find<google::rpc::RetryInfo>(rpc);
  ASSERT_TRUE(retry.has_value());
  EXPECT_EQ(retry->retry_delay().seconds(), 1);
  EXPECT_EQ(retry->retry_delay().nanos(), 500000000);
  EXPECT_FALSE(Find<google::rpc::QuotaFailure>(rpc).has_value());
}

TEST(StatusTest, VersionMismatchCarriesPreconditionFailure) {
  google::rpc::Status rpc = Parsed(ToGrpc(core::VersionMismatchError("class", "gpu-a", 7, 5)));
  EXPECT_EQ(rpc.code(), grpc::StatusCode::ABORTED);
  auto info = *Find<google::rpc::ErrorInfo>(rpc);
  EXPECT_EQ(info.reason(), "VERSION_MISMATCH");
  EXPECT_EQ(info.metadata().at("current_version"), "7");
  auto failure = Find<google::rpc::PreconditionFailure>(rpc);
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->violations(0).type(), "VERSION");
  EXPECT_EQ(failure->violations(0).subject(), "class/gpu-a");
}

TEST(StatusTest, NotFoundCarriesResourceInfo) {
  google::rpc::Status rpc =
      Parsed(ToGrpc(core::NotFoundError(core::ErrorReason::kPoolNotFound, "pool", "gpu-x")));
  EXPECT_EQ(rpc.code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Find<google::rpc::ErrorInfo>(rpc)->reason(), "POOL_NOT_FOUND");
  auto resource = Find<google::rpc::ResourceInfo>(rpc);
  ASSERT_TRUE(resource.has_value());
  EXPECT_EQ(resource->resource_type(), "pool");
  EXPECT_EQ(resource->resource_name(), "gpu-x");
}

}  // namespace
}  // namespace wsched::grpc_api
