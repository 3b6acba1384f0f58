// Per-principal rate limits through the real server and PostgreSQL: a
// caller gets its burst, then RESOURCE_EXHAUSTED TOO_MANY_REQUESTS with the
// wait in RetryInfo, then goes again after that wait; other callers and
// unlimited roles are untouched, and the refusal is counted per role.
#include <chrono>
#include <thread>

#include "gmock/gmock.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "wsched/v1/settings.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;

class RateLimitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::ServerConfig config{db_.url(), testing::SourcePath("classes/saas.yaml")};
    // One call per second, two at once, for project owners; admins unlimited.
    config.extra_flags = {"--rate_limits=project-owner=1/2,admin=0"};
    config.metrics = true;
    server_ = std::make_unique<testing::ServerProcess>(config);
    ASSERT_TRUE(server_->started());
    settings_ = v1::SettingsService::NewStub(server_->channel());
  }

  grpc::Status Get(const std::string& token) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    testing::Authorize(context, token);
    v1::GetProjectSettingsRequest request;
    request.set_project_id("p-42");
    v1::ProjectSettings response;
    return settings_->GetProjectSettings(&context, request, &response);
  }

  testing::TestDatabase db_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::SettingsService::Stub> settings_;
};

TEST_F(RateLimitTest, BurstThenRetryInfoThenAllowedAfterTheAdvisedWait) {
  ASSERT_TRUE(Get(testing::kOwnerToken).ok());
  ASSERT_TRUE(Get(testing::kOwnerToken).ok());
  grpc::Status refused = Get(testing::kOwnerToken);
  ASSERT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  EXPECT_THAT(refused.error_message(), HasSubstr("--rate_limits"));
  google::rpc::Status rpc;
  ASSERT_TRUE(rpc.ParseFromString(refused.error_details()));
  google::rpc::ErrorInfo info;
  google::rpc::RetryInfo retry;
  bool has_info = false, has_retry = false;
  for (const auto& any : rpc.details()) {
    if (any.Is<google::rpc::ErrorInfo>()) has_info = any.UnpackTo(&info);
    if (any.Is<google::rpc::RetryInfo>()) has_retry = any.UnpackTo(&retry);
    EXPECT_FALSE(any.Is<google::rpc::QuotaFailure>()) << "back-pressure, not a quota";
  }
  ASSERT_TRUE(has_info && has_retry);
  EXPECT_EQ(info.reason(), "TOO_MANY_REQUESTS");
  EXPECT_EQ(info.metadata().at("principal"), "owner-p42");
  EXPECT_EQ(info.metadata().at("role"), "project-owner");
  auto delay = std::chrono::seconds(retry.retry_delay().seconds()) +
               std::chrono::nanoseconds(retry.retry_delay().nanos());
  EXPECT_GT(delay, std::chrono::milliseconds(0));
  EXPECT_LE(delay, std::chrono::seconds(1));

  // An unlimited role is not held back meanwhile.
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(Get(testing::kAdminToken).ok()) << i;
  EXPECT_THAT(testing::HttpGet(server_->metrics_port(), "/metrics"),
              HasSubstr("wsched_rate_limited_total{role=\"project-owner\"} 1"));

  // The advised wait is what a client does; then the same call goes.
  std::this_thread::sleep_for(delay);
  EXPECT_TRUE(Get(testing::kOwnerToken).ok());
}

}  // namespace
}  // namespace wsched
