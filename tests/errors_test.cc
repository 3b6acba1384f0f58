// Typed errors through the real gRPC server and a real PostgreSQL: each
// reason is provoked as a caller would meet it, and the test reads what a
// control plane reads: the code, the google.rpc.Status in the
// grpc-status-details-bin trailer, its ErrorInfo (domain wsched.io, the
// reason) and the detail message that fits.
#include <chrono>
#include <fstream>
#include <future>
#include <limits>
#include <optional>
#include <sstream>
#include <thread>

#include <pqxx/pqxx>

#include "gmock/gmock.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/audit.grpc.pb.h"
#include "wsched/v1/classes.grpc.pb.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/settings.grpc.pb.h"
#include "wsched/v1/usage.grpc.pb.h"

namespace wsched {
namespace {

using ::grpc::StatusCode;
using ::testing::HasSubstr;

// What a client sees of one refusal.
struct Refusal {
  grpc::Status status;
  google::rpc::Status rpc;
  google::rpc::ErrorInfo info;

  template <typename T>
  std::optional<T> Detail() const {
    for (const auto& any : rpc.details()) {
      T out;
      if (any.Is<T>() && any.UnpackTo(&out)) return out;
    }
    return std::nullopt;
  }
  std::string Meta(const std::string& key) const {
    auto it = info.metadata().find(key);
    return it == info.metadata().end() ? "<none>" : it->second;
  }
};

// Checks the parts every refusal has and returns it for the detail checks.
Refusal Expect(const grpc::Status& status, StatusCode code, const std::string& reason) {
  Refusal r{status, {}, {}};
  EXPECT_EQ(status.error_code(), code) << status.error_message();
  EXPECT_TRUE(r.rpc.ParseFromString(status.error_details())) << "no google.rpc.Status";
  EXPECT_EQ(r.rpc.code(), static_cast<int>(code));
  EXPECT_EQ(r.rpc.message(), status.error_message());
  auto info = r.Detail<google::rpc::ErrorInfo>();
  EXPECT_TRUE(info.has_value()) << "no ErrorInfo";
  if (info) r.info = *info;
  EXPECT_EQ(r.info.domain(), "wsched.io");
  EXPECT_EQ(r.info.reason(), reason) << status.error_message();
  return r;
}

class ErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override { Start({}); }

  void Start(std::vector<std::string> flags, std::string tokens_yaml = "") {
    server_.reset();
    testing::ServerConfig config{db_.url(), testing::SourcePath("classes/saas.yaml")};
    config.extra_flags = std::move(flags);
    config.tokens_yaml = std::move(tokens_yaml);
    server_ = std::make_unique<testing::ServerProcess>(config);
    ASSERT_TRUE(server_->started());
    classes_ = v1::ClassService::NewStub(server_->channel());
    settings_ = v1::SettingsService::NewStub(server_->channel());
    inventory_ = v1::InventoryService::NewStub(server_->channel());
  }

  std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    if (!token.empty()) testing::Authorize(*context, token);
    return context;
  }

  grpc::Status GetClass(const std::string& id, v1::WorkspaceClass* out) {
    v1::GetClassRequest request;
    request.set_id(id);
    return classes_->GetClass(As(testing::kAdminToken).get(), request, out);
  }

  grpc::Status UpdateClass(const v1::WorkspaceClass& cls, int64_t expected_version) {
    v1::UpdateClassRequest request;
    *request.mutable_class_() = cls;
    request.set_expected_version(expected_version);
    v1::WorkspaceClass response;
    return classes_->UpdateClass(As(testing::kAdminToken).get(), request, &response);
  }

  grpc::Status DeleteClass(const std::string& id, int64_t expected_version) {
    v1::DeleteClassRequest request;
    request.set_id(id);
    request.set_expected_version(expected_version);
    v1::DeleteClassResponse response;
    return classes_->DeleteClass(As(testing::kAdminToken).get(), request, &response);
  }

  grpc::Status SetProject(const std::string& token, const std::string& org,
                          const std::string& project, std::vector<std::string> denied = {}) {
    v1::SetProjectSettingsRequest request;
    request.mutable_settings()->set_org_id(org);
    request.mutable_settings()->set_project_id(project);
    for (const auto& id : denied) request.mutable_settings()->add_denied_classes(id);
    v1::ProjectSettings response;
    return settings_->SetProjectSettings(As(token).get(), request, &response);
  }

  grpc::Status SetOrg(const std::string& org, std::vector<std::string> allowed,
                      int64_t gpu_quota = -1, const std::string& default_class = "") {
    v1::SetOrgSettingsRequest request;
    request.mutable_settings()->set_org_id(org);
    request.mutable_settings()->set_default_class(default_class);
    for (const auto& id : allowed) request.mutable_settings()->add_allowed_classes(id);
    request.mutable_settings()->set_gpu_quota(gpu_quota);
    v1::OrgSettings response;
    return settings_->SetOrgSettings(As(testing::kAdminToken).get(), request, &response);
  }

  grpc::Status Resolve(const std::string& requested) {
    v1::ResolveClassRequest request;
    request.set_org_id("o-1");
    request.set_project_id("p-42");
    request.set_requested_class(requested);
    v1::ResolveClassResponse response;
    return settings_->ResolveClass(As(testing::kControlPlaneToken).get(), request, &response);
  }

  grpc::Status Register(const v1::NodeInfo& node) {
    v1::RegisterNodeRequest request;
    *request.mutable_node() = node;
    v1::RegisterNodeResponse response;
    return inventory_->RegisterNode(As(testing::kAgentToken).get(), request, &response);
  }

  testing::TestDatabase db_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::ClassService::Stub> classes_;
  std::unique_ptr<v1::SettingsService::Stub> settings_;
  std::unique_ptr<v1::InventoryService::Stub> inventory_;
};

TEST_F(ErrorsTest, Unauthenticated) {
  v1::ListClassesRequest request;
  v1::ListClassesResponse response;
  Expect(classes_->ListClasses(As("not-a-known-token-xxxxxx").get(), request, &response),
         StatusCode::UNAUTHENTICATED, "UNAUTHENTICATED");
}

TEST_F(ErrorsTest, TokenLacksRole) {
  v1::ApplyCatalogRequest request;
  request.set_yaml("classes: []\n");
  v1::ApplyCatalogResponse response;
  Refusal r =
      Expect(classes_->ApplyCatalog(As(testing::kControlPlaneToken).get(), request, &response),
             StatusCode::PERMISSION_DENIED, "TOKEN_LACKS_ROLE");
  EXPECT_EQ(r.Meta("method"), "/wsched.v1.ClassService/ApplyCatalog");
  EXPECT_EQ(r.Meta("required_roles"), "admin");
}

TEST_F(ErrorsTest, OutsideTokenScope) {
  Refusal r = Expect(SetProject(testing::kOwnerToken, "o-1", "p-43"), StatusCode::PERMISSION_DENIED,
                     "OUTSIDE_TOKEN_SCOPE");
  EXPECT_EQ(r.Meta("project"), "p-43");
}

TEST_F(ErrorsTest, ProjectInOtherOrg) {
  ASSERT_TRUE(SetProject(testing::kAdminToken, "o-1", "p-42").ok());
  Refusal r = Expect(SetProject(testing::kOwnerToken, "o-2", "p-42"), StatusCode::PERMISSION_DENIED,
                     "PROJECT_IN_OTHER_ORG");
  EXPECT_EQ(r.Meta("stored_org"), "o-1");
  EXPECT_EQ(r.Meta("org"), "o-2");
}

TEST_F(ErrorsTest, OrgGpuQuotaExceededCarriesTheFigures) {
  ASSERT_TRUE(SetOrg("o-1", {}, /*gpu_quota=*/0).ok());
  v1::Workspace workspace;
  Refusal r = Expect(testing::PlaceAs(server_->channel(), "ws-quota", "gpu-1x", &workspace),
                     StatusCode::RESOURCE_EXHAUSTED, "ORG_GPU_QUOTA_EXCEEDED");
  EXPECT_EQ(r.Meta("org"), "o-1");
  EXPECT_EQ(r.Meta("class"), "gpu-1x");
  EXPECT_EQ(r.Meta("gpu_quota"), "0");
  EXPECT_EQ(r.Meta("gpus_held"), "0");
  EXPECT_EQ(r.Meta("gpus_requested"), "1");
  auto quota = r.Detail<google::rpc::QuotaFailure>();
  ASSERT_TRUE(quota.has_value());
  ASSERT_EQ(quota->violations_size(), 1);
  EXPECT_EQ(quota->violations(0).subject(), "org:o-1");
  EXPECT_FALSE(r.Detail<google::rpc::RetryInfo>().has_value()) << "a quota is not back-pressure";
}

TEST_F(ErrorsTest, TooManyRequestsIsBackPressureWithRetryInfo) {
  Start({"--max_concurrent_calls_per_principal=1"});
  auto get = [&] {
    v1::GetProjectSettingsRequest request;
    request.set_project_id("p-42");
    v1::ProjectSettings response;
    return settings_->GetProjectSettings(As(testing::kOwnerToken).get(), request, &response);
  };
  ASSERT_TRUE(get().ok());
  // Hold the table so the owner's first call waits inside the server.
  pqxx::connection locker(db_.url());
  pqxx::work lock(locker);
  lock.exec("LOCK TABLE project_settings IN ACCESS EXCLUSIVE MODE");
  auto held = std::async(std::launch::async, get);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (db_.Query("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                   "AND query LIKE '%project_settings%'") == "0") {
    ASSERT_LT(std::chrono::steady_clock::now(), until) << "the held call never reached the lock";
  }
  Refusal r = Expect(get(), StatusCode::RESOURCE_EXHAUSTED, "TOO_MANY_REQUESTS");
  EXPECT_EQ(r.Meta("principal"), "owner-p42");
  EXPECT_EQ(r.Meta("max_calls_in_flight"), "1");
  auto retry = r.Detail<google::rpc::RetryInfo>();
  ASSERT_TRUE(retry.has_value());
  EXPECT_GT(retry->retry_delay().seconds() * 1000000000LL + retry->retry_delay().nanos(), 0);
  EXPECT_FALSE(r.Detail<google::rpc::QuotaFailure>().has_value());
  lock.abort();
  EXPECT_TRUE(held.get().ok());
}

TEST_F(ErrorsTest, MessageTooLargeCarriesTheSizes) {
  Start({"--max_receive_message_size=65536"});
  v1::ApplyCatalogRequest request;
  request.set_yaml(std::string(70000, '#'));
  v1::ApplyCatalogResponse response;
  Refusal r = Expect(classes_->ApplyCatalog(As(testing::kAdminToken).get(), request, &response),
                     StatusCode::RESOURCE_EXHAUSTED, "MESSAGE_TOO_LARGE");
  EXPECT_EQ(r.Meta("limit_bytes"), "65536");
  EXPECT_EQ(r.Meta("size_bytes"), std::to_string(request.ByteSizeLong()));
  EXPECT_FALSE(r.Detail<google::rpc::RetryInfo>().has_value());
}

TEST_F(ErrorsTest, InvalidFieldNamesTheFieldPath) {
  v1::ListClassesRequest request;
  request.set_page_size(-1);
  v1::ListClassesResponse response;
  Refusal r = Expect(classes_->ListClasses(As(testing::kAdminToken).get(), request, &response),
                     StatusCode::INVALID_ARGUMENT, "INVALID_FIELD");
  auto bad = r.Detail<google::rpc::BadRequest>();
  ASSERT_TRUE(bad.has_value());
  ASSERT_EQ(bad->field_violations_size(), 1);
  EXPECT_EQ(bad->field_violations(0).field(), "page_size");
  EXPECT_THAT(bad->field_violations(0).description(), HasSubstr("must be >= 0"));

  // A reference to a class that does not exist, inside a list.
  r = Expect(SetOrg("o-1", {"small", "no-such-class"}), StatusCode::INVALID_ARGUMENT,
             "INVALID_FIELD");
  bad = r.Detail<google::rpc::BadRequest>();
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->field_violations(0).field(), "settings.allowed_classes[1]");
}

// Every RPC that takes a Timestamp or a Duration refuses one protobuf
// cannot hold as the caller's field, before PostgreSQL sees it (it would
// answer INTERNAL: "timestamp out of range").
TEST_F(ErrorsTest, TimesProtobufCannotHoldAreTheCallersField) {
  auto expect_field = [](const grpc::Status& status, const std::string& field) {
    Refusal r = Expect(status, StatusCode::INVALID_ARGUMENT, "INVALID_FIELD");
    EXPECT_THAT(status.error_message(), HasSubstr(field + ": must be a"));
    auto bad = r.Detail<google::rpc::BadRequest>();
    ASSERT_TRUE(bad.has_value()) << status.error_message();
    ASSERT_EQ(bad->field_violations_size(), 1);
    EXPECT_EQ(bad->field_violations(0).field(), field);
  };
  constexpr int64_t kLowest = std::numeric_limits<int64_t>::min();

  auto audit = v1::AuditService::NewStub(server_->channel());
  v1::ListAuditRecordsRequest records;
  records.mutable_start_time()->set_seconds(kLowest);
  v1::ListAuditRecordsResponse records_page;
  expect_field(audit->ListAuditRecords(As(testing::kAdminToken).get(), records, &records_page),
               "start_time");
  records.clear_start_time();
  records.mutable_end_time()->set_nanos(1'000'000'000);
  expect_field(audit->ListAuditRecords(As(testing::kAdminToken).get(), records, &records_page),
               "end_time");

  auto usage = v1::UsageService::NewStub(server_->channel());
  v1::ListUsageRequest usage_records;
  usage_records.mutable_start_time()->set_seconds(kLowest);
  v1::ListUsageResponse usage_page;
  expect_field(usage->ListUsage(As(testing::kAdminToken).get(), usage_records, &usage_page),
               "start_time");

  v1::WorkspaceClass cls;
  ASSERT_TRUE(GetClass("small", &cls).ok());
  cls.mutable_idle()->set_gpu_utilization_below_percent(10);
  cls.mutable_idle()->mutable_idle_for()->set_seconds(-60);
  expect_field(UpdateClass(cls, cls.version()), "class.idle.idle_for");

  v1::ReportDriverInstallRequest install;
  install.set_node_name("n1");
  install.set_kernel_version("5.15.0-91-generic");
  install.set_outcome(v1::DRIVER_INSTALL_OUTCOME_SUCCEEDED);
  install.mutable_duration()->set_seconds(60);
  install.mutable_duration()->set_nanos(-1);
  v1::Node installed;
  expect_field(inventory_->ReportDriverInstall(As(testing::kAdminToken).get(), install, &installed),
               "duration");

  v1::RegisterNodeRequest registration;
  *registration.mutable_node() = testing::FakeGpuNode("n1", "gpu-h100");
  registration.mutable_node()->mutable_gpus(0)->mutable_unhealthy_since()->set_seconds(kLowest);
  v1::RegisterNodeResponse registered;
  expect_field(inventory_->RegisterNode(As(testing::kAgentToken).get(), registration, &registered),
               "node.gpus[0].unhealthy_since");
}

TEST_F(ErrorsTest, ClassNotFound) {
  v1::WorkspaceClass cls;
  Refusal r = Expect(GetClass("no-such-class", &cls), StatusCode::NOT_FOUND, "CLASS_NOT_FOUND");
  auto resource = r.Detail<google::rpc::ResourceInfo>();
  ASSERT_TRUE(resource.has_value());
  EXPECT_EQ(resource->resource_type(), "class");
  EXPECT_EQ(resource->resource_name(), "no-such-class");
}

TEST_F(ErrorsTest, PoolNotFound) {
  std::ifstream in(testing::SourcePath("classes/saas.yaml"));
  std::stringstream text;
  text << in.rdbuf();
  v1::ApplyCatalogRequest request;
  request.set_yaml(text.str());
  (*request.mutable_expected_pool_versions())["no-such-pool"] = 1;
  v1::ApplyCatalogResponse response;
  Refusal r = Expect(classes_->ApplyCatalog(As(testing::kAdminToken).get(), request, &response),
                     StatusCode::NOT_FOUND, "POOL_NOT_FOUND");
  EXPECT_EQ(r.Meta("pool"), "no-such-pool");
  auto resource = r.Detail<google::rpc::ResourceInfo>();
  ASSERT_TRUE(resource.has_value());
  EXPECT_EQ(resource->resource_type(), "pool");
  EXPECT_EQ(resource->resource_name(), "no-such-pool");
}

TEST_F(ErrorsTest, NodeNotFound) {
  v1::NodeNameRequest request;
  request.set_node_name("no-such-node");
  v1::Node node;
  Refusal r = Expect(inventory_->GetNode(As(testing::kAdminToken).get(), request, &node),
                     StatusCode::NOT_FOUND, "NODE_NOT_FOUND");
  EXPECT_EQ(r.Detail<google::rpc::ResourceInfo>()->resource_name(), "no-such-node");
}

TEST_F(ErrorsTest, WorkspaceNotFound) {
  v1::Workspace workspace;
  Refusal r = Expect(testing::GetAs(server_->channel(), "ws-none", &workspace),
                     StatusCode::NOT_FOUND, "WORKSPACE_NOT_FOUND");
  EXPECT_EQ(r.Meta("workspace"), "ws-none");
  EXPECT_EQ(r.Detail<google::rpc::ResourceInfo>()->resource_type(), "workspace");
}

TEST_F(ErrorsTest, GpuNotFound) {
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("n1", "gpu-h100"));
  v1::ClearGpuHealthRequest request;
  request.set_node_name("n1");
  request.set_gpu_uuid("GPU-nope");
  v1::Node node;
  Refusal r = Expect(inventory_->ClearGpuHealth(As(testing::kAdminToken).get(), request, &node),
                     StatusCode::NOT_FOUND, "GPU_NOT_FOUND");
  EXPECT_EQ(r.Meta("node"), "n1");
  EXPECT_EQ(r.Detail<google::rpc::ResourceInfo>()->resource_name(), "GPU-nope");
}

TEST_F(ErrorsTest, NodeInOtherPool) {
  testing::RegisterNode(server_->channel(), testing::FakeCpuNode("n1", "general"));
  Refusal r = Expect(Register(testing::FakeGpuNode("n1", "gpu-h100")),
                     StatusCode::FAILED_PRECONDITION, "NODE_IN_OTHER_POOL");
  EXPECT_EQ(r.Meta("registered_pool"), "general");
  auto failure = r.Detail<google::rpc::PreconditionFailure>();
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->violations(0).subject(), "node/n1");
}

TEST_F(ErrorsTest, StaleKernelReport) {
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("n1", "gpu-h100"));
  v1::ReportDriverInstallRequest request;
  request.set_node_name("n1");
  request.set_kernel_version("6.1.0-99-generic");
  request.set_success(true);
  request.set_detail("550.54.15");
  v1::Node node;
  Refusal r =
      Expect(inventory_->ReportDriverInstall(As(testing::kAdminToken).get(), request, &node),
             StatusCode::FAILED_PRECONDITION, "STALE_KERNEL_REPORT");
  EXPECT_EQ(r.Meta("kernel"), "6.1.0-99-generic");
  EXPECT_EQ(r.Meta("node_kernel"), "5.15.0-91-generic");
  EXPECT_TRUE(r.Detail<google::rpc::PreconditionFailure>().has_value());
}

TEST_F(ErrorsTest, NodeLost) {
  Start({"--heartbeat_interval=1s", "--node_lost_after=2s"});
  testing::RegisterNode(server_->channel(), testing::FakeCpuNode("n1", "general"));
  v1::NodeNameRequest request;
  request.set_node_name("n1");
  v1::Node node;
  // No heartbeats: wait until the server marks the node lost.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (true) {
    ASSERT_TRUE(inventory_->GetNode(As(testing::kAdminToken).get(), request, &node).ok());
    if (node.state() == v1::NODE_STATE_LOST) break;
    ASSERT_LT(std::chrono::steady_clock::now(), until) << "n1 never became lost";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  Refusal r = Expect(inventory_->CordonNode(As(testing::kAdminToken).get(), request, &node),
                     StatusCode::FAILED_PRECONDITION, "NODE_LOST");
  EXPECT_EQ(r.Meta("node"), "n1");
  EXPECT_EQ(r.Detail<google::rpc::PreconditionFailure>()->violations(0).subject(), "node/n1");
}

TEST_F(ErrorsTest, DatabaseUnavailableCarriesRetryInfo) {
  // The server's sessions end and no new one is let in: its next read
  // finds PostgreSQL unreachable.
  pqxx::connection admin(testing::AdminUrl());
  pqxx::nontransaction sql(admin);
  sql.exec("ALTER DATABASE " + db_.name() + " ALLOW_CONNECTIONS false");
  sql.exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = " +
           sql.quote(db_.name()) + " AND pid <> pg_backend_pid()");
  v1::WorkspaceClass cls;
  grpc::Status status = GetClass("small", &cls);
  sql.exec("ALTER DATABASE " + db_.name() + " ALLOW_CONNECTIONS true");
  Refusal r = Expect(status, StatusCode::UNAVAILABLE, "DATABASE_UNAVAILABLE");
  auto retry = r.Detail<google::rpc::RetryInfo>();
  ASSERT_TRUE(retry.has_value());
  EXPECT_EQ(retry->retry_delay().seconds(), 1);
}

// The group commit's path (commit_batcher.cc): its broken connection, and
// then its failed reconnect, both keep the reason and RetryInfo.
TEST_F(ErrorsTest, PlacementsWhileTheDatabaseIsGoneCarryRetryInfo) {
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("n1", "gpu-h100"));
  v1::Workspace workspace;
  ASSERT_TRUE(testing::PlaceAs(server_->channel(), "ws-before", "gpu-1x", &workspace).ok());
  pqxx::connection admin(testing::AdminUrl());
  pqxx::nontransaction sql(admin);
  sql.exec("ALTER DATABASE " + db_.name() + " ALLOW_CONNECTIONS false");
  sql.exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = " +
           sql.quote(db_.name()) + " AND pid <> pg_backend_pid()");
  std::vector<grpc::Status> answers;
  for (const char* id : {"ws-during-1", "ws-during-2", "ws-during-3"}) {
    answers.push_back(testing::PlaceAs(server_->channel(), id, "gpu-1x", &workspace));
  }
  sql.exec("ALTER DATABASE " + db_.name() + " ALLOW_CONNECTIONS true");
  for (const grpc::Status& status : answers) {
    Refusal r = Expect(status, StatusCode::UNAVAILABLE, "DATABASE_UNAVAILABLE");
    auto retry = r.Detail<google::rpc::RetryInfo>();
    ASSERT_TRUE(retry.has_value()) << status.error_message();
    EXPECT_EQ(retry->retry_delay().seconds(), 1);
  }
}

TEST_F(ErrorsTest, ClassAlreadyExists) {
  v1::WorkspaceClass cls;
  ASSERT_TRUE(GetClass("small", &cls).ok());
  Refusal r = Expect(UpdateClass(cls, /*expected_version=*/0), StatusCode::ALREADY_EXISTS,
                     "CLASS_ALREADY_EXISTS");
  EXPECT_EQ(r.Meta("class"), "small");
  EXPECT_EQ(r.Meta("current_version"), std::to_string(cls.version()));
}

TEST_F(ErrorsTest, VersionMismatchCarriesBothVersions) {
  v1::WorkspaceClass cls;
  ASSERT_TRUE(GetClass("small", &cls).ok());
  Refusal r = Expect(DeleteClass("small", cls.version() + 5), StatusCode::ABORTED,
                     "VERSION_MISMATCH");
  EXPECT_EQ(r.Meta("current_version"), std::to_string(cls.version()));
  EXPECT_EQ(r.Meta("expected_version"), std::to_string(cls.version() + 5));
  auto failure = r.Detail<google::rpc::PreconditionFailure>();
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->violations(0).type(), "VERSION");
  EXPECT_EQ(failure->violations(0).subject(), "class/small");
}

TEST_F(ErrorsTest, ClassIsDefault) {
  Refusal r = Expect(DeleteClass("standard", 0), StatusCode::FAILED_PRECONDITION,
                     "CLASS_IS_DEFAULT");
  EXPECT_EQ(r.Meta("class"), "standard");
}

TEST_F(ErrorsTest, ClassNotAllowedIsPolicyNotIdentity) {
  ASSERT_TRUE(SetOrg("o-1", {"small"}).ok());
  Refusal r = Expect(Resolve("gpu-1x"), StatusCode::FAILED_PRECONDITION, "CLASS_NOT_ALLOWED");
  EXPECT_EQ(r.Meta("class"), "gpu-1x");
  EXPECT_THAT(r.Meta("rule"), HasSubstr("allow-list of org o-1"));
  auto failure = r.Detail<google::rpc::PreconditionFailure>();
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->violations(0).type(), "POLICY");
  EXPECT_EQ(failure->violations(0).subject(), "class/gpu-1x");
}

TEST_F(ErrorsTest, ClassDeprecated) {
  v1::WorkspaceClass cls;
  ASSERT_TRUE(GetClass("small", &cls).ok());
  cls.set_deprecated(true);
  ASSERT_TRUE(UpdateClass(cls, cls.version()).ok());
  Refusal r = Expect(Resolve("small"), StatusCode::FAILED_PRECONDITION, "CLASS_DEPRECATED");
  EXPECT_EQ(r.Meta("class"), "small");
  EXPECT_EQ(r.Detail<google::rpc::PreconditionFailure>()->violations(0).type(), "STATE");
}

TEST_F(ErrorsTest, NoClassApplies) {
  ASSERT_TRUE(SetProject(testing::kAdminToken, "o-1", "p-42", {"standard"}).ok());
  Refusal r = Expect(Resolve(""), StatusCode::FAILED_PRECONDITION, "NO_CLASS_APPLIES");
  EXPECT_EQ(r.Meta("project"), "p-42");
}

}  // namespace
}  // namespace wsched
