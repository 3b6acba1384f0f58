// Stopped workspaces past --stopped_workspace_retention are deleted, against
// a real PostgreSQL. Age comes from the database's clock: rows are backdated
// with an UPDATE of stopped_at instead of waiting.
#include <chrono>
#include <thread>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/scheduler/workspace_retention.h"
#include "server/store/database.h"
#include "server/store/connection.h"
#include "server/store/migrations.h"
#include "server/store/workspace_repository.h"
#include "tests/support/eventually.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"

namespace wsched {
namespace {

using ::testing::UnorderedElementsAre;

// One row per state a workspace can be in; "old-*" ended two hours ago.
constexpr char kRows[] = R"sql(
INSERT INTO nodes (name, pool, info, state, driver_state, alloc_cpu_millis, alloc_memory_bytes)
  VALUES ('n1', 'p', '{}', 'lost', 'ready', 8000, 64000);
INSERT INTO workspaces (id, org_id, project_id, user_id, class_id, class_source, explanation,
                        state, node_name, stopped_at)
  SELECT id, 'o', 'p', 'u', 'c', 'request', '', state, 'n1', stopped
  FROM (VALUES ('placed', 'placed', NULL::timestamptz),
               ('pending', 'pending', NULL),
               ('lost-holding', 'lost', NULL),
               ('stopped-recently', 'stopped', now() - interval '1 minute'),
               ('old-stopped-1', 'stopped', now() - interval '2 hours'),
               ('old-stopped-2', 'stopped', now() - interval '3 hours'),
               ('old-stopped-3', 'stopped', now() - interval '4 hours'),
               ('old-lost-released', 'lost', now() - interval '5 hours')) AS r(id, state, stopped);
SELECT count(*) FROM workspaces;
)sql";

class RetentionStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pqxx::connection connection(db_.url());
    ASSERT_TRUE(store::ApplyMigrations(connection, store::EmbeddedMigrations()).ok());
    ASSERT_EQ(db_.Query(kRows), "8");
  }

  std::vector<std::string> Remaining() {
    pqxx::connection connection(db_.url());
    pqxx::work txn(connection);
    std::vector<std::string> ids;
    for (const auto& row : txn.exec("SELECT id FROM workspaces")) ids.push_back(row[0].c_str());
    return ids;
  }

  testing::TestDatabase db_;
};

TEST_F(RetentionStoreTest, DeletesOnlyWorkspacesThatEndedBeforeTheRetentionOldestFirst) {
  pqxx::connection connection(db_.url());
  store::ChangeSet changes;
  auto delete_batch = [&](int limit) {
    pqxx::work txn(connection);
    int64_t deleted = store::DeleteEndedWorkspaces(txn, absl::Hours(1), limit, changes);
    txn.commit();
    return deleted;
  };
  EXPECT_EQ(delete_batch(2), 2);
  // Each deletion is a change for the workspace streams, with what it was.
  ASSERT_EQ(changes.changes().size(), 2u);
  for (const store::Change& change : changes.changes()) {
    EXPECT_THAT(change.before.state, ::testing::AnyOf("stopped", "lost")) << change.id;
    EXPECT_GT(change.version, 0) << change.id;
  }
  // Oldest first: the two oldest went, the younger old ones stay for now.
  EXPECT_EQ(db_.Query("SELECT string_agg(id, ',' ORDER BY id) FROM workspaces WHERE id LIKE 'old-%'"),
            "old-stopped-1,old-stopped-2");
  EXPECT_EQ(delete_batch(2), 2);
  EXPECT_EQ(delete_batch(2), 0);
  EXPECT_THAT(Remaining(),
              UnorderedElementsAre("placed", "pending", "lost-holding", "stopped-recently"));
}

TEST_F(RetentionStoreTest, ASweepSkipsRowsAnotherTransactionHolds) {
  // A placement restarting old-stopped-1 holds its row: the sweep goes
  // around it rather than waiting (and making the placement wait).
  pqxx::connection holder(db_.url());
  pqxx::work holding(holder);
  holding.exec("SELECT id FROM workspaces WHERE id = 'old-stopped-1' FOR UPDATE");

  auto db = store::Database::Connect(db_.url(), 1);
  ASSERT_TRUE(db.ok()) << db.status();
  scheduler::RetentionOptions options;
  options.retention = absl::Hours(1);
  options.batch_rows = 2;
  options.batch_pause = absl::ZeroDuration();
  scheduler::WorkspaceRetention retention(db->get(), options, [] { return true; });
  absl::StatusOr<int64_t> deleted = retention.Sweep();
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 3);  // Two batches: 2, then 1 (the held row skipped).
  // Published for WatchWorkspaces: deleted, so no row after.
  EXPECT_EQ(db_.Query("SELECT count(*) FROM change_log c, "
                      "jsonb_array_elements(c.workspaces) e "
                      "WHERE jsonb_typeof(e->'row') = 'null' AND "
                      "e->'before'->>0 IN ('stopped', 'lost')"),
            "3");
  holding.abort();
  EXPECT_THAT(Remaining(), UnorderedElementsAre("placed", "pending", "lost-holding",
                                                "stopped-recently", "old-stopped-1"));
}

TEST_F(RetentionStoreTest, ZeroRetentionKeepsEveryStoppedWorkspace) {
  auto db = store::Database::Connect(db_.url(), 1);
  ASSERT_TRUE(db.ok()) << db.status();
  scheduler::RetentionOptions options;
  options.retention = absl::ZeroDuration();
  scheduler::WorkspaceRetention retention(db->get(), options, [] { return true; });
  absl::StatusOr<int64_t> deleted = retention.Sweep();
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 0);
  EXPECT_EQ(db_.Query("SELECT count(*) FROM workspaces"), "8");
}

bool Eventually(const std::function<bool()>& done, int seconds = 20) {
  return testing::Eventually(done, seconds);
}

TEST(RetentionServerTest, TheLeaderDeletesStoppedWorkspacesPastTheRetentionAndIdsStayUsable) {
  testing::TestDatabase db;
  testing::ServerConfig config{db.url(), testing::SourcePath("classes/saas.yaml")};
  config.extra_flags = {"--stopped_workspace_retention=1h",
                        "--stopped_workspace_sweep_interval=100ms"};
  testing::ServerProcess server(config);
  ASSERT_TRUE(server.started());
  testing::RegisterNode(server.channel(), testing::FakeCpuNode("cpu-node", "general"));

  for (const char* id : {"old", "recent", "running"}) {
    v1::Workspace w;
    ASSERT_TRUE(testing::PlaceAs(server.channel(), id, "standard", &w).ok()) << id;
    ASSERT_EQ(w.state(), v1::WORKSPACE_STATE_PLACED) << id;
  }
  v1::Workspace stopped;
  ASSERT_TRUE(testing::StopAs(server.channel(), "old", &stopped).ok());
  ASSERT_TRUE(testing::StopAs(server.channel(), "recent", &stopped).ok());
  ASSERT_EQ(db.Query("UPDATE workspaces SET stopped_at = now() - interval '2 hours' "
                     "WHERE id = 'old' RETURNING id"),
            "old");

  ASSERT_TRUE(Eventually([&] { return db.Query("SELECT count(*) FROM workspaces WHERE id = 'old'") == "0"; }))
      << server.Log();
  EXPECT_THAT(server.Log(), ::testing::HasSubstr("deleted stopped workspaces past the retention"));
  // Younger than the retention, or live: kept, and readable as before.
  v1::Workspace w;
  ASSERT_TRUE(testing::GetAs(server.channel(), "recent", &w).ok());
  EXPECT_EQ(w.state(), v1::WORKSPACE_STATE_STOPPED);
  ASSERT_TRUE(testing::GetAs(server.channel(), "running", &w).ok());
  EXPECT_EQ(w.state(), v1::WORKSPACE_STATE_PLACED);
  // A deleted workspace is unknown, and its id places as a new workspace.
  EXPECT_EQ(testing::GetAs(server.channel(), "old", &w).error_code(), grpc::StatusCode::NOT_FOUND);
  ASSERT_TRUE(testing::PlaceAs(server.channel(), "old", "standard", &w).ok());
  EXPECT_EQ(w.state(), v1::WORKSPACE_STATE_PLACED);
  // The stopped workspace's held capacity was released long before.
  EXPECT_EQ(db.Query("SELECT held_cpu_millis FROM nodes WHERE name = 'cpu-node'"),
            db.Query("SELECT sum(cpu_millis)::text FROM workspaces WHERE state = 'placed'"));
}

}  // namespace
}  // namespace wsched
