// The server skeleton end to end: health, reflection, metrics, auth,
// shutdown, and clear start-up errors.
#include <csignal>

#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;

TEST(Foundation, HealthIsServingAndMetricsShowRpcs) {
  testing::TestDatabase db;
  testing::ServerConfig config{db.url()};
  config.metrics = true;
  testing::ServerProcess server(config);
  ASSERT_TRUE(server.started());
  auto health = grpc::health::v1::Health::NewStub(server.channel());
  grpc::ClientContext context;
  grpc::health::v1::HealthCheckRequest request;
  grpc::health::v1::HealthCheckResponse response;
  ASSERT_TRUE(health->Check(&context, request, &response).ok());
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  std::string metrics = testing::HttpGet(server.metrics_port(), "/metrics");
  EXPECT_THAT(metrics, HasSubstr("wsched_rpc_requests_total{"));
  EXPECT_THAT(metrics, HasSubstr("method=\"/grpc.health.v1.Health/Check\""));
  EXPECT_THAT(metrics, HasSubstr("wsched_rpc_duration_seconds_bucket"));
  EXPECT_EQ(server.Stop(), 0);
}

TEST(Foundation, SigtermStopsCleanly) {
  testing::TestDatabase db;
  testing::ServerProcess server({db.url()});
  ASSERT_TRUE(server.started());
  EXPECT_EQ(server.Stop(), 0);
}

TEST(Foundation, CallsWithoutTokenAreUnauthenticated) {
  testing::TestDatabase db;
  testing::ServerProcess server({db.url()});
  ASSERT_TRUE(server.started());
  auto stub = v1::PlacementService::NewStub(server.channel());
  grpc::ClientContext context;
  v1::GetWorkspaceRequest request;
  v1::Workspace response;
  grpc::Status status = stub->GetWorkspace(&context, request, &response);
  EXPECT_THAT(status.error_code(),
              ::testing::AnyOf(grpc::StatusCode::UNAUTHENTICATED, grpc::StatusCode::UNIMPLEMENTED));
}

TEST(Foundation, UnreachableDatabaseIsAClearError) {
  int port = testing::FreePort();  // Nothing listens there.
  auto exit = testing::RunServerToExit(
      {"--database_url=postgresql://postgres@127.0.0.1:" + std::to_string(port) + "/x",
       "--allow_unauthenticated", "--metrics_listen="});
  EXPECT_EQ(exit.exit_code, 1);
  EXPECT_THAT(exit.log, HasSubstr("cannot connect to PostgreSQL"));
}

TEST(Foundation, BadDatabaseUrlIsAClearError) {
  auto exit = testing::RunServerToExit(
      {"--database_url=not a url at all ===", "--allow_unauthenticated", "--metrics_listen="});
  EXPECT_EQ(exit.exit_code, 1);
  EXPECT_THAT(exit.log, HasSubstr("database"));
}

TEST(Foundation, MissingAuthConfigurationIsRefused) {
  testing::TestDatabase db;
  auto exit = testing::RunServerToExit({"--database_url=" + db.url(), "--metrics_listen="});
  EXPECT_EQ(exit.exit_code, 1);
  EXPECT_THAT(exit.log, HasSubstr("--auth_tokens_file is required"));
}

}  // namespace
}  // namespace wsched
