// grpc.health.v1 tells the truth about the database (a PostgreSQL of the
// test's own, stopped and started again under the running server),
// grpc.reflection.v1 answers beside v1alpha, and the database URL can come
// from a file instead of argv.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1/reflection.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"

namespace wsched {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

// Runs a command through the shell; returns its stdout, fails the test on
// a non-zero exit.
std::string Run(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run " << command;
    return out;
  }
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  int status = pclose(pipe);
  EXPECT_EQ(status, 0) << command << "\n" << out;
  return out;
}

// A PostgreSQL of this test's own (deploy/local/pg.sh), so stopping it
// disturbs no other test's server.
class OwnPostgres {
 public:
  OwnPostgres()
      : dir_(absl::StrCat("/tmp/wsched-health-pg-", getpid())), port_(testing::FreePort()) {
    url_ = std::string(absl::StripAsciiWhitespace(Start()));
  }
  ~OwnPostgres() {
    Stop();
    std::filesystem::remove_all(dir_);
    std::filesystem::remove(dir_ + ".initdb.log");
  }
  std::string Start() {
    return Run(absl::StrCat("PG_EXTRA_OPTS='-c fsync=off' ", testing::SourcePath("deploy/local/pg.sh"),
                            " start ", dir_, " ", port_));
  }
  void Stop() { Run(absl::StrCat(testing::SourcePath("deploy/local/pg.sh"), " stop ", dir_)); }
  const std::string& url() const { return url_; }

 private:
  const std::string dir_;
  const int port_;
  std::string url_;
};

HealthCheckResponse::ServingStatus Check(grpc::health::v1::Health::Stub& health,
                                         const std::string& service) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  HealthCheckRequest request;
  request.set_service(service);
  HealthCheckResponse response;
  grpc::Status status = health.Check(&context, request, &response);
  EXPECT_TRUE(status.ok()) << service << ": " << status.error_message();
  return response.status();
}

// Watches `service` until it reports `want` (true) or the deadline passes.
bool AwaitStatus(grpc::health::v1::Health::Stub& health, const std::string& service,
                 HealthCheckResponse::ServingStatus want) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  HealthCheckRequest request;
  request.set_service(service);
  auto stream = health.Watch(&context, request);
  HealthCheckResponse response;
  while (stream->Read(&response)) {
    if (response.status() == want) {
      context.TryCancel();
      return true;
    }
  }
  return false;
}

TEST(Health, NotServingWhilePostgresqlIsDownAndServingAgainByItself) {
  OwnPostgres pg;
  testing::ServerConfig config{pg.url()};
  config.extra_flags = {"--health_check_interval=100ms"};
  testing::ServerProcess server(config);
  ASSERT_TRUE(server.started());
  auto health = grpc::health::v1::Health::NewStub(server.channel());
  EXPECT_EQ(Check(*health, ""), HealthCheckResponse::SERVING);
  EXPECT_EQ(Check(*health, "wsched.v1.PlacementService"), HealthCheckResponse::SERVING);
  EXPECT_EQ(Check(*health, "liveness"), HealthCheckResponse::SERVING);

  pg.Stop();
  ASSERT_TRUE(AwaitStatus(*health, "", HealthCheckResponse::NOT_SERVING)) << server.Log();
  for (const char* service : {"wsched.v1.ClassService", "wsched.v1.SettingsService",
                              "wsched.v1.InventoryService", "wsched.v1.PlacementService",
                              "wsched.v1.ScalingService"}) {
    EXPECT_EQ(Check(*health, service), HealthCheckResponse::NOT_SERVING) << service;
  }
  EXPECT_EQ(Check(*health, "liveness"), HealthCheckResponse::SERVING)
      << "a database outage must not restart the replica";
  EXPECT_THAT(server.Log(), HasSubstr("database unreachable"));

  pg.Start();
  EXPECT_TRUE(AwaitStatus(*health, "", HealthCheckResponse::SERVING)) << server.Log();
  EXPECT_EQ(Check(*health, "wsched.v1.PlacementService"), HealthCheckResponse::SERVING);
  EXPECT_EQ(server.Stop(), 0);
}

std::vector<std::string> FileNames(const grpc::reflection::v1::ServerReflectionResponse& response) {
  std::vector<std::string> names;
  for (const std::string& bytes : response.file_descriptor_response().file_descriptor_proto()) {
    google::protobuf::FileDescriptorProto file;
    EXPECT_TRUE(file.ParseFromString(bytes));
    names.push_back(file.name());
  }
  return names;
}

TEST(Reflection, V1ListsServicesAndSendsTheirFiles) {
  testing::TestDatabase db;
  testing::ServerProcess server({db.url()});
  ASSERT_TRUE(server.started());
  auto reflection = grpc::reflection::v1::ServerReflection::NewStub(server.channel());
  grpc::ClientContext context;
  auto stream = reflection->ServerReflectionInfo(&context);
  grpc::reflection::v1::ServerReflectionRequest request;
  grpc::reflection::v1::ServerReflectionResponse response;

  request.set_list_services("");
  ASSERT_TRUE(stream->Write(request));
  ASSERT_TRUE(stream->Read(&response));
  std::vector<std::string> services;
  for (const auto& service : response.list_services_response().service()) {
    services.push_back(service.name());
  }
  for (const char* name : {"wsched.v1.ClassService", "wsched.v1.PlacementService",
                           "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
                           "grpc.reflection.v1alpha.ServerReflection"}) {
    EXPECT_THAT(services, Contains(name));
  }

  request.set_file_containing_symbol("wsched.v1.PlacementService");
  ASSERT_TRUE(stream->Write(request));
  ASSERT_TRUE(stream->Read(&response));
  std::vector<std::string> files = FileNames(response);
  ASSERT_FALSE(files.empty()) << response.DebugString();
  EXPECT_EQ(files.front(), "wsched/v1/placement.proto");
  EXPECT_THAT(files, Contains("wsched/v1/common.proto"));

  request.set_file_containing_symbol("wsched.v1.NoSuchService");
  ASSERT_TRUE(stream->Write(request));
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.error_response().error_code(), grpc::StatusCode::NOT_FOUND);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

TEST(DatabaseUrlFile, TheUrlComesFromTheFile) {
  testing::TestDatabase db;
  std::string path = absl::StrCat(::testing::TempDir(), "/database-url-", getpid());
  std::ofstream(path) << db.url() << "\n";
  testing::ServerConfig config;
  config.extra_flags = {"--database_url_file=" + path};
  testing::ServerProcess server(config);
  EXPECT_TRUE(server.started());
  std::filesystem::remove(path);
}

TEST(DatabaseUrlFile, AMissingFileOrBothFlagsAreClearErrors) {
  auto missing = testing::RunServerToExit({"--database_url_file=/nonexistent/url"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.log, HasSubstr("--database_url_file: cannot read /nonexistent/url"));
  auto both = testing::RunServerToExit(
      {"--database_url=postgresql://x@127.0.0.1/x", "--database_url_file=/etc/hostname"});
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_THAT(both.log, HasSubstr("give only one"));
}

}  // namespace
}  // namespace wsched
