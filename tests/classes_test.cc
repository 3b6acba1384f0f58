// Workspace classes and the catalog through the real gRPC server and a real
// PostgreSQL: apply, all-or-nothing rejection, etags, deprecation, reload.
#include <csignal>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "wsched/v1/classes.grpc.pb.h"
#include "wsched/v1/inventory.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;
using testing::kAdminToken;

std::string ReadSource(const std::string& relative) {
  std::ifstream in(testing::SourcePath(relative));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ClassesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<testing::ServerProcess>(testing::ServerConfig{db_.url()});
    ASSERT_TRUE(server_->started());
    stub_ = v1::ClassService::NewStub(server_->channel());
  }

  grpc::Status Apply(const std::string& yaml, bool dry_run, v1::ApplyCatalogResponse* response,
                     const std::string& token = kAdminToken) {
    grpc::ClientContext context;
    testing::Authorize(context, token);
    v1::ApplyCatalogRequest request;
    request.set_yaml(yaml);
    request.set_dry_run(dry_run);
    return stub_->ApplyCatalog(&context, request, response);
  }

  std::string CatalogYaml() {
    grpc::ClientContext context;
    testing::Authorize(context, kAdminToken);
    v1::GetCatalogResponse response;
    EXPECT_TRUE(stub_->GetCatalog(&context, {}, &response).ok());
    return response.yaml();
  }

  v1::WorkspaceClass GetClass(const std::string& id) {
    grpc::ClientContext context;
    testing::Authorize(context, kAdminToken);
    v1::GetClassRequest request;
    request.set_id(id);
    v1::WorkspaceClass response;
    EXPECT_TRUE(stub_->GetClass(&context, request, &response).ok()) << id;
    return response;
  }

  grpc::Status Update(const v1::WorkspaceClass& cls, int64_t expected_version,
                      v1::WorkspaceClass* out) {
    grpc::ClientContext context;
    testing::Authorize(context, kAdminToken);
    v1::UpdateClassRequest request;
    *request.mutable_class_() = cls;
    request.set_expected_version(expected_version);
    return stub_->UpdateClass(&context, request, out);
  }

  testing::TestDatabase db_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::ClassService::Stub> stub_;
};

TEST_F(ClassesTest, AppliesTheSaasSampleAndListsItsClasses) {
  v1::ApplyCatalogResponse response;
  ASSERT_TRUE(Apply(ReadSource("classes/saas.yaml"), false, &response).ok());
  EXPECT_FALSE(response.dry_run());
  EXPECT_GE(response.changes_size(), 7);

  grpc::ClientContext context;
  testing::Authorize(context, testing::kControlPlaneToken);
  v1::ListClassesResponse list;
  ASSERT_TRUE(stub_->ListClasses(&context, {}, &list).ok());
  std::vector<std::string> ids;
  for (const auto& cls : list.classes()) {
    ids.push_back(cls.id());
    EXPECT_EQ(cls.version(), 1) << cls.id();
  }
  EXPECT_THAT(ids, ::testing::IsSupersetOf({"small", "standard", "gpu-1x", "gpu-2x"}));
  EXPECT_EQ(db_.Query("SELECT id FROM classes WHERE is_default"), "standard");

  // Re-applying the same file changes nothing and bumps no version.
  ASSERT_TRUE(Apply(ReadSource("classes/saas.yaml"), false, &response).ok());
  EXPECT_EQ(response.changes_size(), 0);
  EXPECT_EQ(GetClass("small").version(), 1);
}

TEST_F(ClassesTest, ABadCatalogReportsEveryErrorAndChangesNothing) {
  v1::ApplyCatalogResponse response;
  ASSERT_TRUE(Apply(ReadSource("classes/self-hosted.yaml"), false, &response).ok());
  std::string before = CatalogYaml();
  std::string classes_before = db_.Query("SELECT string_agg(id || ':' || version, ',' ORDER BY id) FROM classes");

  const std::string bad = R"(
classes:
  - id: Bad_Id
    resources: {cpu: 2, memory: 16GB}
  - id: twin
    resources: {cpu: 2, memory: 4Gi}
    gpu: {count: -1}
  - id: twin
    resources: {cpu: 2, memory: 4Gi}
    colour: blue
pools:
  - id: cpu
    labels: {workload: general}
    node: {cpu: 16, memory: 64Gi}
    min_size: 3
    max_size: 1
)";
  grpc::Status status = Apply(bad, false, &response);
  ASSERT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  const std::string& message = status.error_message();
  EXPECT_THAT(message, HasSubstr("classes[0]"));
  EXPECT_THAT(message, HasSubstr("16GB"));
  EXPECT_THAT(message, HasSubstr("did you mean 16Gi?"));
  EXPECT_THAT(message, HasSubstr("gpu.count"));
  EXPECT_THAT(message, HasSubstr("colour"));
  EXPECT_THAT(message, HasSubstr("max_size"));
  EXPECT_THAT(message, HasSubstr("default"));
  // Nothing changed.
  EXPECT_EQ(CatalogYaml(), before);
  EXPECT_EQ(db_.Query("SELECT string_agg(id || ':' || version, ',' ORDER BY id) FROM classes"),
            classes_before);
}

TEST_F(ClassesTest, DryRunShowsTheDiffAndWritesNothing) {
  v1::ApplyCatalogResponse response;
  ASSERT_TRUE(Apply(ReadSource("classes/self-hosted.yaml"), false, &response).ok());
  std::string before = CatalogYaml();
  ASSERT_TRUE(Apply(ReadSource("classes/saas.yaml"), true, &response).ok());
  EXPECT_TRUE(response.dry_run());
  EXPECT_GT(response.changes_size(), 0);
  EXPECT_EQ(CatalogYaml(), before);
}

TEST_F(ClassesTest, StaleEtagIsAbortedAndConcurrentUpdatesDoNotBothWin) {
  v1::ApplyCatalogResponse response;
  ASSERT_TRUE(Apply(ReadSource("classes/saas.yaml"), false, &response).ok());
  v1::WorkspaceClass small = GetClass("small");
  ASSERT_EQ(small.version(), 1);

  // Many writers read version 1 and race to update: exactly one wins.
  constexpr int kWriters = 8;
  std::vector<grpc::StatusCode> codes(kWriters);
  std::vector<std::thread> writers;
  for (int i = 0; i < kWriters; ++i) {
    writers.emplace_back([&, i] {
      v1::WorkspaceClass changed = small;
      changed.set_description("edited by writer " + std::to_string(i));
      v1::WorkspaceClass out;
      codes[i] = Update(changed, 1, &out).error_code();
    });
  }
  for (auto& writer : writers) writer.join();
  EXPECT_EQ(std::count(codes.begin(), codes.end(), grpc::StatusCode::OK), 1);
  EXPECT_EQ(std::count(codes.begin(), codes.end(), grpc::StatusCode::ABORTED), kWriters - 1);
  EXPECT_EQ(GetClass("small").version(), 2);

  // A stale etag after the fact is refused with a message saying why.
  v1::WorkspaceClass out;
  grpc::Status stale = Update(small, 1, &out);
  EXPECT_EQ(stale.error_code(), grpc::StatusCode::ABORTED);
  EXPECT_THAT(stale.error_message(), HasSubstr("is at version 2"));
}

TEST_F(ClassesTest, UpdateValidatesAgainstTheWholeCatalog) {
  v1::ApplyCatalogResponse response;
  ASSERT_TRUE(Apply(ReadSource("classes/saas.yaml"), false, &response).ok());
  v1::WorkspaceClass huge = GetClass("gpu-1x");
  huge.mutable_gpu()->set_count(9);  // More than any pool's 8 GPUs per node.
  v1::WorkspaceClass out;
  grpc::Status status = Update(huge, huge.version(), &out);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(GetClass("gpu-1x").gpu().count(), 1);
}

TEST_F(ClassesTest, AnIdlePolicyIsStoredCheckedAndRenderedBack) {
  v1::ApplyCatalogResponse response;
  ASSERT_TRUE(Apply(ReadSource("classes/saas.yaml"), false, &response).ok());
  v1::WorkspaceClass cls = GetClass("gpu-1x");
  EXPECT_FALSE(cls.has_idle());  // Stored before the field existed: none.
  v1::IdlePolicy* idle = cls.mutable_idle();
  idle->set_gpu_utilization_below_percent(5);
  idle->mutable_idle_for()->set_seconds(30);  // Under the server's --min_idle_for (1m).
  idle->set_action(v1::IdlePolicy::ACTION_STOP);
  idle->mutable_warn_before()->set_seconds(60);
  v1::WorkspaceClass out;
  grpc::Status status = Update(cls, cls.version(), &out);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr(".idle.for: must be >= 1m"));
  EXPECT_THAT(status.error_message(), HasSubstr(".idle.warn_before: must be < for (30s)"));
  EXPECT_FALSE(GetClass("gpu-1x").has_idle());  // Nothing changed.

  idle->mutable_idle_for()->set_seconds(1800);
  idle->mutable_warn_before()->set_seconds(300);
  status = Update(cls, cls.version(), &out);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const v1::WorkspaceClass stored = GetClass("gpu-1x");
  EXPECT_EQ(stored.idle().gpu_utilization_below_percent(), 5);
  EXPECT_EQ(stored.idle().idle_for().seconds(), 1800);
  EXPECT_EQ(stored.idle().action(), v1::IdlePolicy::ACTION_STOP);
  EXPECT_EQ(stored.idle().warn_before().seconds(), 300);
  EXPECT_THAT(CatalogYaml(), HasSubstr("idle: {gpu_utilization_below: 5%, for: 30m, action: "
                                       "stop, warn_before: 5m}"));
  // A CPU class may not have one; the file's path names the field.
  std::string yaml = ReadSource("classes/saas.yaml");
  const std::string small = "  - id: small\n";
  ASSERT_NE(yaml.find(small), std::string::npos);
  yaml.insert(yaml.find(small) + small.size(), "    idle: {gpu_utilization_below: 5%, for: 1h}\n");
  status = Apply(yaml, false, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("(small).idle: set on a class without GPUs (gpu.count is 0)"));
}

// MIG slices (docs/catalog.md "Slices of a GPU"): slice classes, a size
// expanded when read, pool layouts, stored in PostgreSQL and read back.
constexpr char kSlicesCatalog[] = R"(
classes:
  - id: small
    display_name: Small
    resources: {cpu: 2, memory: 8Gi}
    default: true
  - id: slice-small
    display_name: A small slice
    resources: {cpu: 4, memory: 32Gi}
    gpu: {mig: [1g.18gb, 2g.35gb], models: [H200]}
    idle: {gpu_utilization_below: 5%, for: 30m}
  - id: slice-3g
    display_name: Three compute slices or more
    resources: {cpu: 8, memory: 64Gi}
    gpu: {mig: {compute: 3}, models: [H200]}
pools:
  - id: cpu
    node: {cpu: 16, memory: 64Gi}
    max_size: 4
  - id: h200-fixed
    node: {cpu: 128, memory: 1Ti, gpus: 8, gpu_model: H200}
    max_size: 2
    mig: {layout: fixed, profiles: [3g.71gb, 2g.35gb, 1g.18gb, 1g.18gb]}
  - id: h200-demand
    node: {cpu: 128, memory: 1Ti, gpus: 8, gpu_model: H200}
    max_size: 2
    mig: {layout: by_demand}
)";

TEST_F(ClassesTest, SliceClassesAndMigLayoutsAreStoredCheckedAndRenderedBack) {
  v1::ApplyCatalogResponse response;
  grpc::Status status = Apply(kSlicesCatalog, false, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();

  const v1::WorkspaceClass sized = GetClass("slice-3g");
  EXPECT_EQ(sized.gpu().count(), 0);
  EXPECT_THAT(sized.gpu().mig_profiles(), ::testing::ElementsAre("3g.71gb", "4g.71gb", "7g.141gb"));
  EXPECT_THAT(GetClass("slice-small").gpu().mig_profiles(),
              ::testing::ElementsAre("1g.18gb", "2g.35gb"));
  EXPECT_EQ(db_.Query("SELECT spec->'gpu'->>'mig_profiles' FROM classes WHERE id = 'slice-3g'"),
            "[\"3g.71gb\", \"4g.71gb\", \"7g.141gb\"]");
  EXPECT_EQ(db_.Query("SELECT spec->'mig'->>'layout' FROM pools WHERE id = 'h200-fixed'"), "fixed");
  EXPECT_EQ(db_.Query("SELECT spec ? 'mig' FROM pools WHERE id = 'cpu'"), "f");

  // Read back through the API and as the canonical file.
  grpc::ClientContext context;
  testing::Authorize(context, kAdminToken);
  v1::ListPoolsResponse pools;
  ASSERT_TRUE(
      v1::InventoryService::NewStub(server_->channel())->ListPools(&context, {}, &pools).ok());
  std::map<std::string, v1::MigLayout> layouts;
  for (const v1::Pool& pool : pools.pools()) layouts[pool.id()] = pool.mig();
  EXPECT_EQ(layouts["h200-fixed"].kind(), v1::MigLayout::KIND_FIXED);
  EXPECT_THAT(layouts["h200-fixed"].profiles(),
              ::testing::ElementsAre("3g.71gb", "2g.35gb", "1g.18gb", "1g.18gb"));
  EXPECT_EQ(layouts["h200-demand"].kind(), v1::MigLayout::KIND_BY_DEMAND);
  EXPECT_EQ(layouts["cpu"].kind(), v1::MigLayout::KIND_WHOLE);
  const std::string yaml = CatalogYaml();
  EXPECT_THAT(yaml, HasSubstr("gpu: {mig: [3g.71gb, 4g.71gb, 7g.141gb], models: [H200], "
                              "isolation: container}"));
  EXPECT_THAT(yaml, HasSubstr("mig: {layout: fixed, profiles: [3g.71gb, 2g.35gb, 1g.18gb, "
                              "1g.18gb]}"));
  // What was stored is what the file says: applying either again changes nothing.
  ASSERT_TRUE(Apply(kSlicesCatalog, false, &response).ok());
  EXPECT_EQ(response.changes_size(), 0);
  ASSERT_TRUE(Apply(yaml, false, &response).ok());
  EXPECT_EQ(response.changes_size(), 0);

  // UpdateClass is held to the same rules, each error at its field.
  v1::WorkspaceClass vm = GetClass("slice-small");
  vm.mutable_gpu()->set_isolation(v1::ISOLATION_VM);
  vm.mutable_gpu()->set_mig_profiles(1, "2g.34gb");
  v1::WorkspaceClass out;
  status = Update(vm, vm.version(), &out);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("(slice-small).gpu.isolation: vm cannot take a MIG slice: a VM is given "
                        "whole GPUs through VFIO; MIG slices go to containers only"));
  EXPECT_THAT(status.error_message(),
              HasSubstr("(slice-small).gpu.mig[1]: unknown MIG profile \"2g.34gb\" for H200; did "
                        "you mean 2g.35gb?"));
  EXPECT_THAT(GetClass("slice-small").gpu().mig_profiles(),
              ::testing::ElementsAre("1g.18gb", "2g.35gb"));

  // A layout that does not fit one GPU changes nothing.
  std::string bad = kSlicesCatalog;
  const std::string fixed = "profiles: [3g.71gb, 2g.35gb, 1g.18gb, 1g.18gb]";
  ASSERT_NE(bad.find(fixed), std::string::npos);
  bad.replace(bad.find(fixed), fixed.size(), "profiles: [4g.71gb, 3g.71gb]");
  status = Apply(bad, false, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("pools[1] (h200-fixed).mig.profiles[1]: does not fit on one GPU"));
  EXPECT_EQ(CatalogYaml(), yaml);
}

TEST_F(ClassesTest, RemovingAClassInUseDeprecatesIt) {
  v1::ApplyCatalogResponse response;
  ASSERT_TRUE(Apply(ReadSource("classes/saas.yaml"), false, &response).ok());
  // A running workspace of class "large" (placement is not involved here).
  db_.Query("INSERT INTO workspaces (id, org_id, project_id, user_id, class_id, class_source, "
            "explanation, state) VALUES ('ws-1', 'o-1', 'p-1', 'u-1', 'large', 'request', '', "
            "'placed') RETURNING id");
  std::string without_large = ReadSource("classes/saas.yaml");
  size_t start = without_large.find("  - id: large\n");
  size_t end = without_large.find("  - id: large-vm");
  ASSERT_NE(start, std::string::npos);
  without_large.erase(start, end - start);
  without_large.replace(without_large.find("  - id: small"), 0, "");
  // large-vm remains; "large" is gone from the file.
  ASSERT_TRUE(Apply(without_large, false, &response).ok());
  bool deprecated_change = false;
  for (const auto& change : response.changes()) {
    if (change.id() == "large") {
      deprecated_change = change.kind() == v1::CatalogChange::KIND_DEPRECATE;
    }
  }
  EXPECT_TRUE(deprecated_change);
  EXPECT_TRUE(GetClass("large").deprecated());

  // Deleting an unused class deletes it; deleting a used one deprecates it.
  grpc::ClientContext context;
  testing::Authorize(context, kAdminToken);
  v1::DeleteClassRequest request;
  request.set_id("small");
  v1::DeleteClassResponse deleted;
  ASSERT_TRUE(stub_->DeleteClass(&context, request, &deleted).ok());
  EXPECT_FALSE(deleted.deprecated_instead());
  EXPECT_EQ(db_.Query("SELECT count(*) FROM classes WHERE id = 'small'"), "0");
}

TEST_F(ClassesTest, OnlyAdminsMayApply) {
  v1::ApplyCatalogResponse response;
  grpc::Status status =
      Apply(ReadSource("classes/saas.yaml"), false, &response, testing::kControlPlaneToken);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("needs role admin"));
  status = Apply(ReadSource("classes/saas.yaml"), false, &response, "not-a-known-token-xxxxxx");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(db_.Query("SELECT count(*) FROM classes"), "0");
}

TEST(CatalogReload, SighupAppliesAGoodFileAndKeepsTheCatalogOnABadOne) {
  testing::TestDatabase db;
  std::string path = "/tmp/wsched-reload-" + db.name() + ".yaml";
  std::ofstream(path) << ReadSource("classes/self-hosted.yaml");
  testing::ServerProcess server({db.url(), path});
  ASSERT_TRUE(server.started());
  EXPECT_EQ(db.Query("SELECT count(*) FROM classes"), "2");

  std::ofstream(path) << "classes: [{id: broken, resources: {cpu: lots}}]\n";
  server.Signal(SIGHUP);
  // The reload was tried and refused: only then does "nothing changed" mean
  // something.
  ASSERT_TRUE(server.WaitForLog("catalog reload rejected", absl::Seconds(10))) << server.Log();
  EXPECT_EQ(db.Query("SELECT count(*) FROM classes"), "2");

  std::ofstream(path) << ReadSource("classes/saas.yaml");
  server.Signal(SIGHUP);
  for (int i = 0; i < 50 && db.Query("SELECT count(*) FROM classes") == "2"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(db.Query("SELECT count(*) FROM classes WHERE id = 'gpu-8x-vm'"), "1");
  EXPECT_EQ(server.Stop(), 0);
  std::remove(path.c_str());
}

TEST(CatalogStartup, ABadCatalogFileKeepsTheServerFromStarting) {
  testing::TestDatabase db;
  std::string path = "/tmp/wsched-bad-" + db.name() + ".yaml";
  std::ofstream(path) << "classes: [{id: x, resources: {cpu: 1, memory: 1Gi}, colour: red}]\n";
  auto exit = testing::RunServerToExit({"--database_url=" + db.url(), "--catalog=" + path,
                                        "--allow_unauthenticated", "--metrics_listen="});
  EXPECT_EQ(exit.exit_code, 1);
  EXPECT_THAT(exit.log, HasSubstr("colour"));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace wsched
