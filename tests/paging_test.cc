// List RPCs page through big fleets: 25,000 workspaces and 12,000 8-GPU
// nodes, each seen exactly once, filters kept across pages, rows added while
// paging neither repeated nor breaking the walk, bad tokens refused.
//
// The fleet is seeded with SQL copies of rows the server wrote itself (one
// node registered and workspaces placed through gRPC), so every listed row
// has the shape the server stores; seeding 37,000 rows through RPCs would
// make this a load test.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/classes.grpc.pb.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;

constexpr int kWorkspaces = 25000;
constexpr int kNodes = 12000;

class PagingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::ServerConfig config{db_.url(), testing::SourcePath("classes/saas.yaml")};
    server_ = std::make_unique<testing::ServerProcess>(config);
    ASSERT_TRUE(server_->started());
    inventory_ = v1::InventoryService::NewStub(server_->channel());
    placement_ = v1::PlacementService::NewStub(server_->channel());
  }

  // `kNodes` nodes: node-00000 registered through gRPC, the rest copies of
  // it; every third one in pool "general" (a CPU pool, for the filter).
  void SeedNodes() {
    testing::RegisterNode(server_->channel(), testing::FakeGpuNode("node-00000", "gpu-h100"));
    db_.Query(absl::StrCat(
        "INSERT INTO nodes (name, pool, info, state, driver_state, alloc_cpu_millis, "
        "alloc_memory_bytes) "
        "SELECT format('node-%s', lpad(i::text, 5, '0')), "
        "CASE WHEN i % 3 = 0 THEN 'general' ELSE pool END, "
        "jsonb_set(jsonb_set(info, '{name}', to_jsonb(format('node-%s', lpad(i::text, 5, '0')))), "
        "'{pool}', to_jsonb(CASE WHEN i % 3 = 0 THEN 'general' ELSE pool END)), "
        "state, driver_state, alloc_cpu_millis, alloc_memory_bytes "
        "FROM nodes, generate_series(1, ",
        kNodes - 1, ") i WHERE name = 'node-00000'"));
    ASSERT_EQ(db_.Query("SELECT count(*) FROM nodes"), absl::StrCat(kNodes));
  }

  // `kWorkspaces` workspaces: ws-00000 placed through gRPC, the rest copies
  // of it, every fourth one stopped.
  void SeedWorkspaces() {
    testing::RegisterNode(server_->channel(), testing::FakeCpuNode("cpu-0", "general"));
    v1::Workspace placed;
    ASSERT_TRUE(testing::PlaceAs(server_->channel(), "ws-00000", "small", &placed).ok());
    ASSERT_EQ(placed.state(), v1::WORKSPACE_STATE_PLACED);
    db_.Query(absl::StrCat(
        "INSERT INTO workspaces (id, org_id, project_id, user_id, class_id, class_source, "
        "explanation, state, node_name, pool, cpu_millis, memory_bytes, placement) "
        "SELECT format('ws-%s', lpad(i::text, 5, '0')), org_id, project_id, user_id, class_id, "
        "class_source, explanation, CASE WHEN i % 4 = 0 THEN 'stopped' ELSE state END, "
        "node_name, pool, cpu_millis, memory_bytes, placement "
        "FROM workspaces, generate_series(1, ",
        kWorkspaces - 1, ") i WHERE id = 'ws-00000'"));
    ASSERT_EQ(db_.Query("SELECT count(*) FROM workspaces"), absl::StrCat(kWorkspaces));
  }

  grpc::Status ListNodes(const v1::ListNodesRequest& request, v1::ListNodesResponse* response) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    return inventory_->ListNodes(&context, request, response);
  }

  grpc::Status ListWorkspaces(const v1::ListWorkspacesRequest& request,
                              v1::ListWorkspacesResponse* response) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    return placement_->ListWorkspaces(&context, request, response);
  }

  // Every node name, page by page; fails the test on a repeat.
  std::vector<std::string> AllNodeNames(v1::ListNodesRequest request, int* pages) {
    std::vector<std::string> names;
    std::set<std::string> seen;
    *pages = 0;
    do {
      v1::ListNodesResponse response;
      grpc::Status status = ListNodes(request, &response);
      EXPECT_TRUE(status.ok()) << status.error_message();
      if (!status.ok()) break;
      ++*pages;
      for (const auto& node : response.nodes()) {
        EXPECT_TRUE(seen.insert(node.info().name()).second) << "repeated " << node.info().name();
        if (!request.pool().empty()) {
          EXPECT_EQ(node.info().pool(), request.pool());
        }
        names.push_back(node.info().name());
      }
      request.set_page_token(response.next_page_token());
    } while (!request.page_token().empty());
    return names;
  }

  testing::TestDatabase db_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::InventoryService::Stub> inventory_;
  std::unique_ptr<v1::PlacementService::Stub> placement_;
};

TEST_F(PagingTest, ListNodesVisitsTwelveThousandNodesOnceEach) {
  SeedNodes();
  v1::ListNodesRequest request;
  request.set_page_size(1000);
  int pages = 0;
  std::vector<std::string> names = AllNodeNames(request, &pages);
  ASSERT_EQ(names.size(), static_cast<size_t>(kNodes));
  EXPECT_EQ(pages, kNodes / 1000);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(names.front(), "node-00000");
  EXPECT_EQ(names.back(), "node-11999");

  // The pool filter holds on every page: copies 3, 6, ... are in "general".
  request.set_pool("general");
  request.set_page_size(0);  // The default, 100.
  std::vector<std::string> general = AllNodeNames(request, &pages);
  EXPECT_EQ(general.size(), static_cast<size_t>((kNodes - 1) / 3));
  EXPECT_EQ(pages, ((kNodes - 1) / 3 + 99) / 100);
}

TEST_F(PagingTest, ListWorkspacesVisitsTwentyFiveThousandOnceEachWhileOthersArrive) {
  SeedWorkspaces();
  v1::ListWorkspacesRequest request;
  request.set_page_size(1000);
  std::map<std::string, int> seen;
  int pages = 0;
  do {
    v1::ListWorkspacesResponse response;
    grpc::Status status = ListWorkspaces(request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_LE(response.workspaces_size(), 1000);
    for (const auto& w : response.workspaces()) seen[w.id()]++;
    if (++pages == 5) {
      // Arrivals while the client pages: before the cursor (not seen, and
      // nothing repeated) and after it (seen once).
      v1::Workspace placed;
      ASSERT_TRUE(testing::PlaceAs(server_->channel(), "ws-00000-late", "small", &placed).ok());
      ASSERT_TRUE(testing::PlaceAs(server_->channel(), "ws-99999-late", "small", &placed).ok());
    }
    request.set_page_token(response.next_page_token());
  } while (!request.page_token().empty());

  int seeded = 0;
  for (const auto& [id, count] : seen) {
    EXPECT_EQ(count, 1) << id;
    if (id.size() == 8) ++seeded;  // "ws-NNNNN"
  }
  EXPECT_EQ(seeded, kWorkspaces);
  EXPECT_FALSE(seen.contains("ws-00000-late"));
  EXPECT_TRUE(seen.contains("ws-99999-late"));
  EXPECT_EQ(pages, kWorkspaces / 1000 + 1);
}

TEST_F(PagingTest, StateFilterHoldsOnEveryPage) {
  SeedWorkspaces();
  v1::ListWorkspacesRequest request;
  request.set_state(v1::WORKSPACE_STATE_STOPPED);
  request.set_page_size(700);
  int stopped = 0;
  do {
    v1::ListWorkspacesResponse response;
    grpc::Status status = ListWorkspaces(request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    for (const auto& w : response.workspaces()) {
      EXPECT_EQ(w.state(), v1::WORKSPACE_STATE_STOPPED) << w.id();
      ++stopped;
    }
    request.set_page_token(response.next_page_token());
  } while (!request.page_token().empty());
  EXPECT_EQ(stopped, (kWorkspaces - 1) / 4);
}

TEST_F(PagingTest, TokenFromOtherFiltersAndNegativeSizeAreRefused) {
  SeedNodes();
  v1::ListNodesRequest request;
  request.set_page_size(10);
  v1::ListNodesResponse first;
  ASSERT_TRUE(ListNodes(request, &first).ok());
  ASSERT_FALSE(first.next_page_token().empty());

  request.set_pool("general");
  request.set_page_token(first.next_page_token());
  v1::ListNodesResponse refused;
  grpc::Status status = ListNodes(request, &refused);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("page_token: it was issued for other filters"));

  request.set_pool("");
  request.set_page_token("not-a-token");
  status = ListNodes(request, &refused);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("page_token"));

  request.set_page_token("");
  request.set_page_size(-1);
  status = ListNodes(request, &refused);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("page_size: must be >= 0"));
}

TEST_F(PagingTest, SizesAboveTheMaximumAreCappedAndEveryListPages) {
  SeedNodes();
  v1::ListNodesRequest request;
  request.set_page_size(1000000);
  v1::ListNodesResponse response;
  ASSERT_TRUE(ListNodes(request, &response).ok());
  EXPECT_EQ(response.nodes_size(), 1000);

  // The catalog lists page too: classes and pools one per page.
  auto classes = v1::ClassService::NewStub(server_->channel());
  v1::ListClassesRequest class_request;
  class_request.set_page_size(1);
  std::set<std::string> class_ids;
  int class_pages = 0;
  do {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::ListClassesResponse page;
    ASSERT_TRUE(classes->ListClasses(&context, class_request, &page).ok());
    ASSERT_LE(page.classes_size(), 1);
    for (const auto& cls : page.classes()) EXPECT_TRUE(class_ids.insert(cls.id()).second);
    ++class_pages;
    class_request.set_page_token(page.next_page_token());
  } while (!class_request.page_token().empty());
  EXPECT_GT(class_ids.size(), 1u);
  EXPECT_EQ(class_pages, static_cast<int>(class_ids.size()));

  v1::ListPoolsRequest pool_request;
  pool_request.set_page_size(1);
  std::set<std::string> pool_ids;
  do {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::ListPoolsResponse page;
    ASSERT_TRUE(inventory_->ListPools(&context, pool_request, &page).ok());
    for (const auto& pool : page.pools()) EXPECT_TRUE(pool_ids.insert(pool.id()).second);
    pool_request.set_page_token(page.next_page_token());
  } while (!pool_request.page_token().empty());
  EXPECT_TRUE(pool_ids.contains("gpu-h100"));
  EXPECT_TRUE(pool_ids.contains("general"));
}

}  // namespace
}  // namespace wsched
