// Project/org settings and "which class would I get, and why" through the
// real gRPC server and a real PostgreSQL.
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "wsched/v1/classes.grpc.pb.h"
#include "wsched/v1/settings.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;

class SettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<testing::ServerProcess>(
        testing::ServerConfig{db_.url(), testing::SourcePath("classes/saas.yaml")});
    ASSERT_TRUE(server_->started());
    stub_ = v1::SettingsService::NewStub(server_->channel());
  }

  grpc::Status SetProject(const std::string& token, const std::string& org,
                          const std::string& project, const std::string& default_class,
                          std::vector<std::string> denied = {}) {
    grpc::ClientContext context;
    testing::Authorize(context, token);
    v1::SetProjectSettingsRequest request;
    request.mutable_settings()->set_org_id(org);
    request.mutable_settings()->set_project_id(project);
    request.mutable_settings()->set_default_class(default_class);
    for (const auto& id : denied) request.mutable_settings()->add_denied_classes(id);
    v1::ProjectSettings response;
    return stub_->SetProjectSettings(&context, request, &response);
  }

  grpc::Status SetOrg(const std::string& org, const std::string& default_class,
                      std::vector<std::string> allowed, int64_t quota = -1) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::SetOrgSettingsRequest request;
    request.mutable_settings()->set_org_id(org);
    request.mutable_settings()->set_default_class(default_class);
    for (const auto& id : allowed) request.mutable_settings()->add_allowed_classes(id);
    request.mutable_settings()->set_gpu_quota(quota);
    v1::OrgSettings response;
    return stub_->SetOrgSettings(&context, request, &response);
  }

  grpc::Status Resolve(const std::string& requested, const std::string& previous,
                       v1::ResolveClassResponse* response,
                       const std::string& token = testing::kControlPlaneToken) {
    grpc::ClientContext context;
    testing::Authorize(context, token);
    v1::ResolveClassRequest request;
    request.set_org_id("o-1");
    request.set_project_id("p-42");
    request.set_requested_class(requested);
    request.set_previous_class(previous);
    return stub_->ResolveClass(&context, request, response);
  }

  testing::TestDatabase db_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::SettingsService::Stub> stub_;
};

TEST_F(SettingsTest, EachPrecedenceStepWithItsExplanation) {
  v1::ResolveClassResponse response;
  ASSERT_TRUE(Resolve("", "", &response).ok());
  EXPECT_EQ(response.source(), v1::CLASS_SOURCE_INSTALLATION_DEFAULT);
  EXPECT_EQ(response.explanation(), "class standard from the installation default");

  ASSERT_TRUE(SetOrg("o-1", "large", {}).ok());
  ASSERT_TRUE(Resolve("", "", &response).ok());
  EXPECT_EQ(response.explanation(), "class large from the org default set on org o-1");

  // The project owner sets the project default with its own token.
  ASSERT_TRUE(SetProject(testing::kOwnerToken, "o-1", "p-42", "gpu-1x").ok());
  ASSERT_TRUE(Resolve("", "", &response).ok());
  EXPECT_EQ(response.source(), v1::CLASS_SOURCE_PROJECT_DEFAULT);
  EXPECT_EQ(response.explanation(), "class gpu-1x from the project default set on project p-42");

  ASSERT_TRUE(Resolve("", "small", &response).ok());
  EXPECT_EQ(response.explanation(), "class small from the previous run of the workspace");

  ASSERT_TRUE(Resolve("gpu-2x", "small", &response).ok());
  EXPECT_EQ(response.explanation(), "class gpu-2x from the request");
}

TEST_F(SettingsTest, RefusalsNameTheRuleAndNeverFallBack) {
  ASSERT_TRUE(SetOrg("o-1", "", {"small", "standard", "gpu-1x"}).ok());
  ASSERT_TRUE(SetProject(testing::kAdminToken, "o-1", "p-42", "", {"gpu-1x"}).ok());
  v1::ResolveClassResponse response;
  grpc::Status status = Resolve("gpu-2x", "", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("not in the allow-list of org o-1"));
  status = Resolve("gpu-1x", "", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("in the deny-list of project p-42"));
  status = Resolve("no-such-class", "", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(SettingsTest, BadSettingsAreRejectedWithTheFieldAndChangeNothing) {
  ASSERT_TRUE(SetProject(testing::kAdminToken, "o-1", "p-42", "small").ok());
  grpc::Status status = SetProject(testing::kAdminToken, "o-1", "p-42", "no-such-class");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("settings.default_class: class no-such-class does not exist"));
  status = SetProject(testing::kAdminToken, "o-1", "p-42", "small", {"Not_A_Label"});
  EXPECT_THAT(status.error_message(), HasSubstr("settings.denied_classes[0]"));
  status = SetOrg("o-1", "", {}, -5);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("settings.gpu_quota"));
  EXPECT_EQ(db_.Query("SELECT default_class FROM project_settings WHERE project_id = 'p-42'"),
            "small");
}

TEST_F(SettingsTest, ProjectOwnersAreScopedToTheirProjects) {
  grpc::Status status = SetProject(testing::kOwnerToken, "o-1", "p-43", "small");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  // Org settings are for admins only.
  grpc::ClientContext context;
  testing::Authorize(context, testing::kOwnerToken);
  v1::SetOrgSettingsRequest request;
  request.mutable_settings()->set_org_id("o-1");
  v1::OrgSettings response;
  EXPECT_EQ(stub_->SetOrgSettings(&context, request, &response).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(db_.Query("SELECT count(*) FROM project_settings"), "0");
}

}  // namespace
}  // namespace wsched
