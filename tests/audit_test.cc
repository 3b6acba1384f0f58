// The audit trail through the real server and PostgreSQL: a catalog apply,
// a drain and a settings change each leave a record naming their principal,
// credential, object and outcome; a refused change is recorded too; reads
// and agent reports are not; ListAuditRecords filters by principal, object
// and time and pages newest first; only admins may read it.
#include <chrono>
#include <fstream>
#include <limits>
#include <sstream>

#include "gmock/gmock.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "wsched/v1/audit.grpc.pb.h"
#include "wsched/v1/classes.grpc.pb.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/settings.grpc.pb.h"

namespace wsched {
namespace {

using ::google::protobuf::util::TimeUtil;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class AuditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::ServerConfig config{db_.url(), ""};
    server_ = std::make_unique<testing::ServerProcess>(config);
    ASSERT_TRUE(server_->started());
    classes_ = v1::ClassService::NewStub(server_->channel());
    settings_ = v1::SettingsService::NewStub(server_->channel());
    inventory_ = v1::InventoryService::NewStub(server_->channel());
    audit_ = v1::AuditService::NewStub(server_->channel());
  }

  std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    testing::Authorize(*context, token);
    return context;
  }

  grpc::Status ApplyCatalog() {
    v1::ApplyCatalogRequest request;
    request.set_yaml(ReadFile(testing::SourcePath("classes/saas.yaml")));
    v1::ApplyCatalogResponse response;
    return classes_->ApplyCatalog(As(testing::kAdminToken).get(), request, &response);
  }

  grpc::Status SetProject(const std::string& token, const std::string& project) {
    v1::SetProjectSettingsRequest request;
    request.mutable_settings()->set_project_id(project);
    request.mutable_settings()->set_org_id("o-1");
    request.mutable_settings()->set_default_class("standard");
    v1::ProjectSettings response;
    return settings_->SetProjectSettings(As(token).get(), request, &response);
  }

  grpc::Status Drain(const std::string& node) {
    v1::NodeNameRequest request;
    request.set_node_name(node);
    v1::Node response;
    return inventory_->DrainNode(As(testing::kAdminToken).get(), request, &response);
  }

  v1::ListAuditRecordsResponse List(v1::ListAuditRecordsRequest request) {
    v1::ListAuditRecordsResponse response;
    grpc::Status status =
        audit_->ListAuditRecords(As(testing::kAdminToken).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message() << "\n" << server_->Log();
    return response;
  }

  static std::vector<std::string> Methods(const v1::ListAuditRecordsResponse& response) {
    std::vector<std::string> out;
    for (const auto& record : response.records()) out.push_back(record.method());
    return out;
  }

  testing::TestDatabase db_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::ClassService::Stub> classes_;
  std::unique_ptr<v1::SettingsService::Stub> settings_;
  std::unique_ptr<v1::InventoryService::Stub> inventory_;
  std::unique_ptr<v1::AuditService::Stub> audit_;
};

TEST_F(AuditTest, ChangesLeaveRecordsWithTheirPrincipalAndOutcome) {
  ASSERT_TRUE(ApplyCatalog().ok());
  testing::RegisterNode(server_->channel(), testing::FakeCpuNode("n-1", "general"));
  ASSERT_TRUE(Drain("n-1").ok());
  ASSERT_TRUE(SetProject(testing::kOwnerToken, "p-42").ok());
  // Refused: outside the owner's scope. Still a record, with its code.
  ASSERT_EQ(SetProject(testing::kOwnerToken, "p-other").error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // Reads are not recorded.
  v1::NodeNameRequest get;
  get.set_node_name("n-1");
  v1::Node node;
  ASSERT_TRUE(inventory_->GetNode(As(testing::kAdminToken).get(), get, &node).ok());

  v1::ListAuditRecordsResponse all = List({});
  EXPECT_THAT(Methods(all), ElementsAre("/wsched.v1.SettingsService/SetProjectSettings",
                                        "/wsched.v1.SettingsService/SetProjectSettings",
                                        "/wsched.v1.InventoryService/DrainNode",
                                        "/wsched.v1.ClassService/ApplyCatalog"))
      << "the agent's RegisterNode is a report, not an admin change";
  const v1::AuditRecord& refused = all.records(0);
  EXPECT_EQ(refused.principal(), "owner-p42");
  EXPECT_EQ(refused.object(), "project/p-other");
  EXPECT_EQ(refused.code(), "PERMISSION_DENIED");
  EXPECT_THAT(refused.message(), HasSubstr("p-other"));
  const v1::AuditRecord& owner = all.records(1);
  EXPECT_EQ(owner.principal(), "owner-p42");
  EXPECT_THAT(owner.credential(), StartsWith("token sha256:"));
  EXPECT_EQ(owner.object(), "project/p-42");
  EXPECT_EQ(owner.fields().at("settings.default_class"), "standard");
  EXPECT_EQ(owner.code(), "OK");
  const v1::AuditRecord& drain = all.records(2);
  EXPECT_EQ(drain.principal(), "test-admin");
  EXPECT_EQ(drain.object(), "node/n-1");
  EXPECT_EQ(drain.fields().at("node_name"), "n-1");
  EXPECT_EQ(drain.code(), "OK");
  const v1::AuditRecord& apply = all.records(3);
  EXPECT_EQ(apply.principal(), "test-admin");
  EXPECT_EQ(apply.object(), "catalog");
  EXPECT_EQ(apply.fields().count("yaml"), 0u) << "documents are not copied into the trail";
  EXPECT_GT(drain.id(), apply.id());
  EXPECT_GE(TimeUtil::TimestampToMicroseconds(drain.time()),
            TimeUtil::TimestampToMicroseconds(apply.time()));
}

TEST_F(AuditTest, FiltersByPrincipalObjectAndTimeAndPagesNewestFirst) {
  ASSERT_TRUE(ApplyCatalog().ok());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(SetProject(testing::kAdminToken, "p-" + std::to_string(i)).ok());
  }
  ASSERT_TRUE(SetProject(testing::kOwnerToken, "p-42").ok());

  v1::ListAuditRecordsRequest by_owner;
  by_owner.set_principal("owner-p42");
  EXPECT_THAT(Methods(List(by_owner)), ElementsAre("/wsched.v1.SettingsService/SetProjectSettings"));

  v1::ListAuditRecordsRequest by_object;
  by_object.set_object("project/p-3");
  ASSERT_EQ(List(by_object).records_size(), 1);
  EXPECT_EQ(List(by_object).records(0).principal(), "test-admin");
  v1::ListAuditRecordsRequest by_type;
  by_type.set_object("project/");
  EXPECT_EQ(List(by_type).records_size(), 6);

  // Pages of two, newest first, none skipped or repeated.
  v1::ListAuditRecordsRequest paged;
  paged.set_object("project/");
  paged.set_page_size(2);
  std::vector<std::string> objects;
  int pages = 0;
  do {
    v1::ListAuditRecordsResponse page = List(paged);
    for (const auto& record : page.records()) objects.push_back(record.object());
    paged.set_page_token(page.next_page_token());
    ++pages;
  } while (!paged.page_token().empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  EXPECT_THAT(objects, ElementsAre("project/p-42", "project/p-4", "project/p-3", "project/p-2",
                                   "project/p-1", "project/p-0"));

  // Time: before the first record nothing; from the newest one on, only it.
  v1::ListAuditRecordsResponse all = List({});
  v1::ListAuditRecordsRequest before_all;
  *before_all.mutable_end_time() = all.records(all.records_size() - 1).time();
  EXPECT_EQ(List(before_all).records_size(), 0);
  v1::ListAuditRecordsRequest since_newest;
  *since_newest.mutable_start_time() = all.records(0).time();
  EXPECT_EQ(List(since_newest).records(0).id(), all.records(0).id());

  // A token continues only the listing it came from.
  v1::ListAuditRecordsRequest first_page;
  first_page.set_page_size(1);
  v1::ListAuditRecordsRequest other = by_owner;
  other.set_page_token(List(first_page).next_page_token());
  v1::ListAuditRecordsResponse response;
  EXPECT_EQ(audit_->ListAuditRecords(As(testing::kAdminToken).get(), other, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  // A time protobuf cannot hold is the caller's field, not the database's error.
  v1::ListAuditRecordsRequest out_of_range;
  out_of_range.mutable_start_time()->set_seconds(std::numeric_limits<int64_t>::min());
  grpc::Status refused =
      audit_->ListAuditRecords(As(testing::kAdminToken).get(), out_of_range, &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.error_message(), ::testing::HasSubstr("start_time"));
}

TEST_F(AuditTest, RecordsPastTheRetentionAreDeletedByTheSweep) {
  ASSERT_TRUE(ApplyCatalog().ok());
  ASSERT_TRUE(SetProject(testing::kAdminToken, "p-1").ok());
  ASSERT_TRUE(SetProject(testing::kAdminToken, "p-2").ok());
  db_.Query("UPDATE audit_records SET at = now() - interval '2 hours' "
            "WHERE object = 'project/p-1'");
  server_.reset();
  testing::ServerConfig config{db_.url(), ""};
  config.extra_flags = {"--audit_retention=1h", "--stopped_workspace_sweep_interval=50ms"};
  server_ = std::make_unique<testing::ServerProcess>(config);
  ASSERT_TRUE(server_->started());
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (db_.Query("SELECT count(*) FROM audit_records WHERE object = 'project/p-1'") != "0") {
    ASSERT_LT(std::chrono::steady_clock::now(), until) << "the old record was never deleted";
  }
  EXPECT_EQ(db_.Query("SELECT count(*) FROM audit_records WHERE object = 'project/p-2'"), "1");
}

TEST_F(AuditTest, OnlyAdminsReadTheTrail) {
  v1::ListAuditRecordsResponse response;
  for (const char* token : {testing::kOwnerToken, testing::kControlPlaneToken,
                            testing::kAgentToken}) {
    EXPECT_EQ(audit_->ListAuditRecords(As(token).get(), {}, &response).error_code(),
              grpc::StatusCode::PERMISSION_DENIED)
        << token;
  }
}

}  // namespace
}  // namespace wsched
