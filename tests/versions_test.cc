// No lost updates: settings, node admin state and pools carry a version,
// and a write that names the version it read either wins or is refused
// with the current version, changing nothing. Two writers that read the
// same version write at the same time through the real gRPC server and a
// real PostgreSQL: exactly one wins and what is stored is the winner's.
#include <functional>
#include <latch>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "wsched/v1/classes.grpc.pb.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/settings.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;
using testing::kAdminToken;

// One class and one CPU pool whose max_size is the parameter.
std::string Catalog(int max_size) {
  return absl::StrReplaceAll(R"(
classes:
  - id: cpu
    display_name: CPU
    resources: {cpu: 2, memory: 4Gi}
    default: true
pools:
  - id: cpu
    node: {cpu: 16, memory: 64Gi}
    min_size: 0
    max_size: MAX
)",
                             {{"MAX", absl::StrCat(max_size)}});
}

// Two writes started together (both already hold the version they read);
// returns their statuses.
struct Race {
  grpc::Status first, second;
};
Race RunTogether(const std::function<grpc::Status()>& first,
                 const std::function<grpc::Status()>& second) {
  Race race;
  std::latch start(2);
  std::thread a([&] {
    start.arrive_and_wait();
    race.first = first();
  });
  std::thread b([&] {
    start.arrive_and_wait();
    race.second = second();
  });
  a.join();
  b.join();
  return race;
}

// The refusal's typed details: ErrorInfo VERSION_MISMATCH with both
// versions, and a PreconditionFailure of type VERSION.
void ExpectVersionMismatchDetails(const grpc::Status& status, int64_t current_version) {
  google::rpc::Status details;
  ASSERT_TRUE(details.ParseFromString(status.error_details())) << status.error_message();
  bool info_seen = false, precondition_seen = false;
  for (const auto& any : details.details()) {
    google::rpc::ErrorInfo info;
    google::rpc::PreconditionFailure precondition;
    if (any.UnpackTo(&info)) {
      info_seen = true;
      EXPECT_EQ(info.reason(), "VERSION_MISMATCH");
      EXPECT_EQ(info.metadata().at("current_version"), absl::StrCat(current_version));
    } else if (any.UnpackTo(&precondition)) {
      precondition_seen = precondition.violations_size() == 1 &&
                          precondition.violations(0).type() == "VERSION";
    }
  }
  EXPECT_TRUE(info_seen) << status.error_message();
  EXPECT_TRUE(precondition_seen) << status.error_message();
}

// Exactly one of the two won; the loser was refused with ABORTED naming the
// version the winner wrote. Returns true when the first one won.
bool FirstWon(const Race& race, int64_t winner_version) {
  EXPECT_NE(race.first.ok(), race.second.ok())
      << "first: " << race.first.error_message() << "; second: " << race.second.error_message();
  const grpc::Status& loser = race.first.ok() ? race.second : race.first;
  EXPECT_EQ(loser.error_code(), grpc::StatusCode::ABORTED) << loser.error_message();
  EXPECT_THAT(loser.error_message(), HasSubstr(absl::StrCat("at version ", winner_version)));
  ExpectVersionMismatchDetails(loser, winner_version);
  return race.first.ok();
}

class VersionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<testing::ServerProcess>(testing::ServerConfig{db_.url()});
    ASSERT_TRUE(server_->started());
    settings_ = v1::SettingsService::NewStub(server_->channel());
    inventory_ = v1::InventoryService::NewStub(server_->channel());
    classes_ = v1::ClassService::NewStub(server_->channel());
    grpc::Status applied = ApplyCatalog(Catalog(4), {});
    ASSERT_TRUE(applied.ok()) << applied.error_message();
  }

  grpc::Status ApplyCatalog(const std::string& yaml, const std::map<std::string, int64_t>& versions) {
    grpc::ClientContext context;
    testing::Authorize(context, kAdminToken);
    v1::ApplyCatalogRequest request;
    request.set_yaml(yaml);
    for (const auto& [pool, version] : versions) (*request.mutable_expected_pool_versions())[pool] = version;
    v1::ApplyCatalogResponse response;
    return classes_->ApplyCatalog(&context, request, &response);
  }

  v1::Pool GetPool(const std::string& id) {
    grpc::ClientContext context;
    testing::Authorize(context, kAdminToken);
    v1::ListPoolsResponse response;
    EXPECT_TRUE(inventory_->ListPools(&context, {}, &response).ok());
    for (const auto& pool : response.pools()) {
      if (pool.id() == id) return pool;
    }
    ADD_FAILURE() << "no pool " << id;
    return {};
  }

  v1::OrgSettings GetOrg(const std::string& org) {
    grpc::ClientContext context;
    testing::Authorize(context, kAdminToken);
    v1::GetOrgSettingsRequest request;
    request.set_org_id(org);
    v1::OrgSettings response;
    EXPECT_TRUE(settings_->GetOrgSettings(&context, request, &response).ok());
    return response;
  }

  grpc::Status SetOrg(v1::OrgSettings settings, int64_t expected_version, v1::OrgSettings* out) {
    grpc::ClientContext context;
    testing::Authorize(context, kAdminToken);
    v1::SetOrgSettingsRequest request;
    *request.mutable_settings() = std::move(settings);
    request.set_expected_version(expected_version);
    return settings_->SetOrgSettings(&context, request, out);
  }

  v1::ProjectSettings GetProject(const std::string& project) {
    grpc::ClientContext context;
    testing::Authorize(context, kAdminToken);
    v1::GetProjectSettingsRequest request;
    request.set_project_id(project);
    v1::ProjectSettings response;
    EXPECT_TRUE(settings_->GetProjectSettings(&context, request, &response).ok());
    return response;
  }

  grpc::Status SetProject(v1::ProjectSettings settings, int64_t expected_version,
                          v1::ProjectSettings* out) {
    grpc::ClientContext context;
    testing::Authorize(context, kAdminToken);
    v1::SetProjectSettingsRequest request;
    *request.mutable_settings() = std::move(settings);
    request.set_expected_version(expected_version);
    return settings_->SetProjectSettings(&context, request, out);
  }

  v1::Node GetNode(const std::string& name) {
    grpc::ClientContext context;
    testing::Authorize(context, kAdminToken);
    v1::NodeNameRequest request;
    request.set_node_name(name);
    v1::Node node;
    EXPECT_TRUE(inventory_->GetNode(&context, request, &node).ok());
    return node;
  }

  using NodeRpc = grpc::Status (v1::InventoryService::Stub::*)(grpc::ClientContext*,
                                                              const v1::NodeNameRequest&, v1::Node*);
  grpc::Status SetNodeState(NodeRpc rpc, const std::string& name, int64_t expected_version,
                            v1::Node* out) {
    grpc::ClientContext context;
    testing::Authorize(context, kAdminToken);
    v1::NodeNameRequest request;
    request.set_node_name(name);
    request.set_expected_version(expected_version);
    return (inventory_.get()->*rpc)(&context, request, out);
  }

  testing::TestDatabase db_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::SettingsService::Stub> settings_;
  std::unique_ptr<v1::InventoryService::Stub> inventory_;
  std::unique_ptr<v1::ClassService::Stub> classes_;
};

TEST_F(VersionsTest, TwoOrgAdminsWritingTheSameVersionAtOnceOneWinsNothingIsOverwritten) {
  v1::OrgSettings initial;
  initial.set_org_id("acme");
  initial.set_gpu_quota(4);
  v1::OrgSettings stored;
  ASSERT_TRUE(SetOrg(initial, 0, &stored).ok());
  const v1::OrgSettings read = GetOrg("acme");
  ASSERT_GT(read.version(), 0);
  ASSERT_EQ(read.version(), stored.version());

  // Each changes a different field of what both read.
  v1::OrgSettings quota = read, allow = read;
  quota.set_gpu_quota(16);
  allow.add_allowed_classes("cpu");
  v1::OrgSettings quota_out, allow_out;
  Race race = RunTogether([&] { return SetOrg(quota, read.version(), &quota_out); },
                          [&] { return SetOrg(allow, read.version(), &allow_out); });
  const int64_t winner_version = race.first.ok() ? quota_out.version() : allow_out.version();
  ASSERT_GT(winner_version, read.version());
  const bool quota_won = FirstWon(race, winner_version);

  const v1::OrgSettings now = GetOrg("acme");
  EXPECT_EQ(now.version(), winner_version);
  EXPECT_EQ(now.gpu_quota(), quota_won ? 16 : 4);
  EXPECT_EQ(now.allowed_classes_size(), quota_won ? 0 : 1);

  // The loser re-reads and retries against the new version: both changes stay.
  v1::OrgSettings retry = now, retried;
  if (quota_won) {
    retry.add_allowed_classes("cpu");
  } else {
    retry.set_gpu_quota(16);
  }
  ASSERT_TRUE(SetOrg(retry, now.version(), &retried).ok());
  EXPECT_EQ(GetOrg("acme").gpu_quota(), 16);
  EXPECT_EQ(GetOrg("acme").allowed_classes_size(), 1);
}

TEST_F(VersionsTest, ProjectSettingsRefuseAStaleVersionAndKeepTheStoredValue) {
  v1::ProjectSettings settings;
  settings.set_project_id("p-1");
  settings.set_org_id("acme");
  v1::ProjectSettings first;
  ASSERT_TRUE(SetProject(settings, 0, &first).ok());
  EXPECT_EQ(GetProject("p-1").version(), first.version());

  settings.set_default_class("cpu");
  v1::ProjectSettings second;
  ASSERT_TRUE(SetProject(settings, first.version(), &second).ok());
  EXPECT_GT(second.version(), first.version());

  settings.add_denied_classes("cpu");
  settings.clear_default_class();
  v1::ProjectSettings refused;
  grpc::Status status = SetProject(settings, first.version(), &refused);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::ABORTED) << status.error_message();
  EXPECT_THAT(status.error_message(),
              HasSubstr(absl::StrCat("at version ", second.version(), ", not expected_version ",
                                     first.version())));
  const v1::ProjectSettings now = GetProject("p-1");
  EXPECT_EQ(now.default_class(), "cpu");
  EXPECT_EQ(now.denied_classes_size(), 0);
  EXPECT_EQ(now.version(), second.version());
}

TEST_F(VersionsTest, SettingsWithoutAVersionStayUnconditionalAndABadOneIsRefused) {
  v1::OrgSettings settings;
  settings.set_org_id("acme");
  v1::OrgSettings out;
  ASSERT_TRUE(SetOrg(settings, 0, &out).ok());
  settings.set_gpu_quota(2);
  ASSERT_TRUE(SetOrg(settings, 0, &out).ok()) << "0 keeps the old unconditional write";
  EXPECT_EQ(GetOrg("acme").gpu_quota(), 2);

  grpc::Status status = SetOrg(settings, -1, &out);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("expected_version"));

  // Versions are never reused, so one for settings never stored cannot match.
  v1::OrgSettings other;
  other.set_org_id("never-stored");
  status = SetOrg(other, out.version(), &out);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::ABORTED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("at version 0"));
  EXPECT_EQ(GetOrg("never-stored").version(), 0);
}

TEST_F(VersionsTest, CordonAndDrainOfTheSameNodeVersionAtOnceOneWins) {
  testing::RegisterNode(server_->channel(), testing::FakeCpuNode("n1", "cpu"));
  const v1::Node read = GetNode("n1");
  ASSERT_GT(read.version(), 0);

  v1::Node cordoned, drained;
  Race race = RunTogether(
      [&] { return SetNodeState(&v1::InventoryService::Stub::CordonNode, "n1", read.version(), &cordoned); },
      [&] { return SetNodeState(&v1::InventoryService::Stub::DrainNode, "n1", read.version(), &drained); });
  const v1::Node& winner = race.first.ok() ? cordoned : drained;
  ASSERT_GT(winner.version(), read.version());
  const bool cordon_won = FirstWon(race, winner.version());

  const v1::Node now = GetNode("n1");
  EXPECT_EQ(now.state(), cordon_won ? v1::NODE_STATE_CORDONED : v1::NODE_STATE_DRAINING);
  EXPECT_EQ(now.version(), winner.version());

  // Without a version the admin state is set as before.
  v1::Node uncordoned;
  ASSERT_TRUE(SetNodeState(&v1::InventoryService::Stub::UncordonNode, "n1", 0, &uncordoned).ok());
  EXPECT_EQ(GetNode("n1").state(), v1::NODE_STATE_READY);

  // GetNode takes no version: one is refused rather than ignored.
  grpc::ClientContext context;
  testing::Authorize(context, kAdminToken);
  v1::NodeNameRequest request;
  request.set_node_name("n1");
  request.set_expected_version(uncordoned.version());
  v1::Node ignored;
  grpc::Status status = inventory_->GetNode(&context, request, &ignored);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("expected_version"));
}

TEST_F(VersionsTest, TwoAppliesChangingTheSamePoolVersionAtOnceOneWins) {
  const v1::Pool read = GetPool("cpu");
  ASSERT_EQ(read.version(), 1);
  ASSERT_EQ(read.max_size(), 4);

  Race race = RunTogether([&] { return ApplyCatalog(Catalog(8), {{"cpu", read.version()}}); },
                          [&] { return ApplyCatalog(Catalog(16), {{"cpu", read.version()}}); });
  const bool eight_won = FirstWon(race, read.version() + 1);

  const v1::Pool now = GetPool("cpu");
  EXPECT_EQ(now.max_size(), eight_won ? 8 : 16);
  EXPECT_EQ(now.version(), read.version() + 1);
}

TEST_F(VersionsTest, AnApplyThatLeavesAPoolAsItIsKeepsItsVersion) {
  const v1::Pool read = GetPool("cpu");
  ASSERT_TRUE(ApplyCatalog(Catalog(4), {{"cpu", read.version()}}).ok());
  EXPECT_EQ(GetPool("cpu").version(), read.version());

  ASSERT_TRUE(ApplyCatalog(Catalog(6), {}).ok()) << "unlisted pools are not checked";
  EXPECT_EQ(GetPool("cpu").version(), read.version() + 1);

  grpc::Status status = ApplyCatalog(Catalog(2), {{"gone", 3}});
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("pool gone"));
  EXPECT_EQ(GetPool("cpu").max_size(), 6) << "a refused apply writes nothing";
}

}  // namespace
}  // namespace wsched
