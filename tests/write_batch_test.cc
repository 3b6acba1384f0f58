// The group commit's statements against a real PostgreSQL: every guard of
// store/write_batch.h refuses exactly the write that fails it, and the rest
// of the batch commits.
#include "server/store/write_batch.h"

#include <regex>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/connection.h"
#include "server/store/migrations.h"
#include "server/store/scaling_repository.h"
#include "tests/support/test_database.h"

namespace wsched {
namespace {

using Kind = store::WorkspaceWrite::Kind;
using ::testing::HasSubstr;

class WriteBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    connection_ = std::make_unique<pqxx::connection>(db_.url());
    ASSERT_TRUE(store::ApplyMigrations(*connection_, store::EmbeddedMigrations()).ok());
    store::PrepareWriteStatements(*connection_);
    // One ready node with 8 CPUs and two GPUs' worth of holds possible.
    db_.Query("INSERT INTO nodes (name, pool, info, state, driver_state, alloc_cpu_millis, "
              "alloc_memory_bytes) VALUES ('n1', 'p', '{}', 'ready', 'ready', 8000, 64000) RETURNING name");
  }

  store::WorkspaceWrite Place(const std::string& id, int64_t cpu, std::vector<int> gpus = {}) {
    store::WorkspaceWrite write;
    write.kind = Kind::kPlace;
    core::Workspace& w = write.workspace;
    w.id = id;
    w.org_id = "o";
    w.project_id = "p";
    w.user_id = "u";
    w.class_id = "c";
    w.class_source = "request";
    w.state = core::WorkspaceState::kPlaced;
    w.node_name = "n1";
    w.pool = "p";
    w.cpu_millis = cpu;
    w.memory_bytes = 1000;
    w.hand_off = std::make_shared<const core::HandOff>();
    for (int g : gpus) {
      w.gpu_indices.push_back(g);
      w.gpu_uuids.push_back(absl::StrCat("GPU-n1-", g));
    }
    return write;
  }

  // A slice class's placement: MIG slice `instance` of GPU `gpu`.
  store::WorkspaceWrite PlaceSlice(const std::string& id, int gpu, int instance,
                                   int compute_slices) {
    store::WorkspaceWrite write = Place(id, 100);
    const std::string uuid = absl::StrCat("MIG-n1-", gpu, "-", instance);
    write.workspace.slice = core::WorkspaceSlice{{gpu, instance}, uuid, compute_slices};
    auto hand_off = std::make_shared<core::HandOff>();
    hand_off->slice = core::AssignedSlice{{gpu, absl::StrCat("GPU-n1-", gpu), "", "H200"},
                                          instance,
                                          0,
                                          uuid,
                                          absl::StrCat(compute_slices, "g.x"),
                                          compute_slices};
    write.workspace.hand_off = hand_off;
    return write;
  }

  std::vector<store::WriteOutcome> Run(const std::vector<store::WorkspaceWrite>& writes,
                                       store::BatchStatements* stats_out = nullptr) {
    store::BatchStatements stats;
    auto out = store::CommitWrites(*connection_, writes, stats);
    if (stats_out) *stats_out = stats;
    return out;
  }

  testing::TestDatabase db_;
  std::unique_ptr<pqxx::connection> connection_;
};

TEST_F(WriteBatchTest, ABatchCommitsWhatPassesAndRefusesEachFailureAlone) {
  auto first = Run({Place("a", 2000, {0})});
  ASSERT_TRUE(first[0].status.ok()) << first[0].status;

  auto out = Run({
      Place("b", 2000, {1}),  // Fits.
      Place("c", 1000, {0}),  // GPU 0 is a's.
      Place("a", 1000),       // a exists: the decision thought it new.
      Place("d", 5000),       // 2000 + 2000 + 5000 > 8000 CPUs.
      Place("e", 1000, {1}),  // GPU 1 went to b earlier in this batch.
  });
  EXPECT_TRUE(out[0].status.ok()) << out[0].status;
  EXPECT_THAT(out[1].status.message(), HasSubstr("GPU GPU-n1-0 is held"));
  EXPECT_THAT(out[2].status.message(), HasSubstr("workspace a was changed"));
  EXPECT_THAT(out[3].status.message(), HasSubstr("no room"));
  EXPECT_THAT(out[4].status.message(), HasSubstr("GPU GPU-n1-1 is held"));
  for (int i = 1; i < 5; ++i) EXPECT_TRUE(absl::IsAborted(out[i].status)) << i;
  // Only the node's refusals are races for the node.
  EXPECT_FALSE(out[1].basis_changed);
  EXPECT_TRUE(out[2].basis_changed);
  EXPECT_FALSE(out[3].basis_changed);
  EXPECT_FALSE(out[4].basis_changed);

  EXPECT_EQ(db_.Query("SELECT string_agg(id, ',' ORDER BY id) FROM workspaces"), "a,b");
  EXPECT_EQ(db_.Query("SELECT string_agg(workspace_id, ',' ORDER BY gpu_index) FROM gpu_holds"), "a,b");
  EXPECT_EQ(db_.Query("SELECT held_cpu_millis FROM nodes"), "4000");
  // One change-log entry for the batch, naming what it wrote.
  EXPECT_EQ(db_.Query("SELECT array_to_string(ids, ',') FROM change_log ORDER BY seq DESC LIMIT 1"), "b");
}

TEST_F(WriteBatchTest, AFixedHandfulOfStatementsAndThreeRoundTripsWhateverTheBatchSize) {
  store::BatchStatements small, large, stops;
  Run({Place("s0", 100, {0})}, &small);
  std::vector<store::WorkspaceWrite> many;
  for (int i = 0; i < 40; ++i) many.push_back(Place(absl::StrCat("m", i), 100, {i == 0 ? 1 : 2 + i}));
  auto out = Run(many, &large);
  for (const auto& o : out) EXPECT_TRUE(o.status.ok()) << o.status;
  EXPECT_EQ(small.statements, large.statements);
  EXPECT_LE(large.statements, 8);
  EXPECT_EQ(small.round_trips, 3);
  EXPECT_EQ(large.round_trips, 3);
  // Stops and placements mixed in one batch: still three.
  std::vector<store::WorkspaceWrite> mixed;
  for (int i = 0; i < 20; ++i) {
    store::WorkspaceWrite stop;
    stop.kind = Kind::kStop;
    stop.workspace.id = absl::StrCat("m", i);
    mixed.push_back(stop);
  }
  mixed.push_back(Place("late", 100, {100}));
  for (const auto& o : Run(mixed, &stops)) EXPECT_TRUE(o.status.ok()) << o.status;
  EXPECT_EQ(stops.round_trips, 3);
  EXPECT_EQ(db_.Query("SELECT count(*) FROM workspaces WHERE state = 'stopped'"), "20");
  EXPECT_EQ(db_.Query("SELECT workspace_id FROM gpu_holds WHERE gpu_index = 100"), "late");
}

// Statistics from a quiet moment (a busy day's workspaces all stopped, then
// VACUUM ANALYZE: the active index keeps its pages and counts no entry) and
// then thousands placed: a batch's node lock must still touch a handful of
// pages, not every active workspace (write_batch.cc, kLockNodes): with the
// generic plan the writer's session uses, made from those statistics, and
// with a custom plan too.
TEST_F(WriteBatchTest, TheNodeLockReadsAHandfulOfPagesHoweverManyWorkspacesAreActive) {
  auto place_bulk = [&](const std::string& prefix) {
    db_.Query("INSERT INTO workspaces (id, org_id, project_id, user_id, class_id, class_source, "
              "explanation, state, node_name) SELECT '" + prefix + "' || i, 'o', 'p', 'u', 'c', "
              "'request', '', 'placed', 'n1' FROM generate_series(1, 5000) AS i");
  };
  place_bulk("yesterday-");
  db_.Query("UPDATE workspaces SET state = 'stopped', stopped_at = now()");
  db_.Query("VACUUM ANALYZE workspaces");
  place_bulk("bulk-");
  pqxx::nontransaction session(*connection_);
  for (const char* mode : {"force_generic_plan", "force_custom_plan"}) {
    session.exec0(absl::StrCat("SET plan_cache_mode = ", mode));
    for (const char* stops : {"{}", "{bulk-7}"}) {
      session.exec0("DISCARD PLANS");
      const std::string plan = session.exec1(absl::StrCat(
          "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE batch_lock_nodes('{n1}', '", stops, "')"))[0].c_str();
      // The top node's counts include everything below it.
      std::smatch hit, read;
      ASSERT_TRUE(std::regex_search(plan, hit, std::regex(R"re("Shared Hit Blocks": (\d+))re"))) << plan;
      ASSERT_TRUE(std::regex_search(plan, read, std::regex(R"re("Shared Read Blocks": (\d+))re"))) << plan;
      EXPECT_LT(std::stoi(hit[1]) + std::stoi(read[1]), 50) << mode << ", stops " << stops << ": " << plan;
    }
  }
}

// Each batch statement is planned once per plan refresh, not at every
// batch (write_batch.h, PrepareWriteStatements): PostgreSQL's own count of
// custom plans stays at zero over many batches.
TEST_F(WriteBatchTest, TheBatchStatementsRunOnTheirGenericPlans) {
  for (int i = 0; i < 12; ++i) {
    auto out = Run({Place(absl::StrCat("g", i), 100, {i})});
    ASSERT_TRUE(out[0].status.ok()) << out[0].status;
  }
  pqxx::nontransaction session(*connection_);
  pqxx::row counts = session.exec1(
      "SELECT count(*) FILTER (WHERE generic_plans > 0), COALESCE(sum(custom_plans), 0) "
      "FROM pg_prepared_statements WHERE name LIKE 'batch_%'");
  EXPECT_GE(counts[0].as<int>(), 5) << "statements that ran on a generic plan";
  EXPECT_EQ(counts[1].as<int64_t>(), 0) << "custom plans made";
}

TEST_F(WriteBatchTest, AStatementThatFailsFailsTheWholeBatchAndLeavesNothing) {
  // Two holds of one GPU in one write pass the guards (they compare with
  // other holders); gpu_holds' primary key, the last word, refuses it.
  store::WorkspaceWrite write = Place("x", 100, {0, 1});
  write.workspace.gpu_uuids = {"GPU-same", "GPU-same"};
  ASSERT_TRUE(Run({Place("w", 100)})[0].status.ok());
  EXPECT_THROW(Run({write, Place("z", 100)}), pqxx::unique_violation);
  // The transaction is still open and aborted on this connection: a caller
  // rolls back (CommitBatcher does), and the next batch works.
  pqxx::nontransaction(*connection_).exec0("ROLLBACK");
  EXPECT_TRUE(Run({Place("y", 100)})[0].status.ok());
  EXPECT_EQ(db_.Query("SELECT string_agg(id, ',' ORDER BY id) FROM workspaces"), "w,y");
  EXPECT_EQ(db_.Query("SELECT held_cpu_millis FROM nodes"), "200");
  EXPECT_EQ(db_.Query("SELECT count(*) FROM gpu_holds"), "0");
}

TEST_F(WriteBatchTest, StopsWinAndFreeWhatTheyHeld) {
  ASSERT_TRUE(Run({Place("a", 3000, {0, 1})})[0].status.ok());
  store::WorkspaceWrite stop;
  stop.kind = Kind::kStop;
  stop.workspace.id = "a";
  store::WorkspaceWrite missing = stop;
  missing.workspace.id = "nope";
  auto out = Run({stop, missing});
  ASSERT_TRUE(out[0].status.ok()) << out[0].status;
  EXPECT_EQ(out[0].row->workspace.state, core::WorkspaceState::kStopped);
  EXPECT_TRUE(absl::IsNotFound(out[1].status));
  EXPECT_EQ(db_.Query("SELECT count(*) FROM gpu_holds"), "0");
  EXPECT_EQ(db_.Query("SELECT held_cpu_millis FROM nodes"), "0");
  // Stopping again changes nothing and answers the same record.
  auto again = Run({stop});
  ASSERT_TRUE(again[0].status.ok());
  EXPECT_EQ(again[0].version, out[0].version);
}

TEST_F(WriteBatchTest, AQueuePlacementLandsOnlyOnThePendingRecordItWasDecidedFor) {
  store::WorkspaceWrite pending = Place("q", 1000);
  pending.kind = Kind::kSavePending;
  auto saved = Run({pending});
  ASSERT_TRUE(saved[0].status.ok());

  store::WorkspaceWrite stale = Place("q", 1000, {0});
  stale.kind = Kind::kQueuePlace;
  stale.from = {saved[0].version - 1, true};
  EXPECT_TRUE(absl::IsAborted(Run({stale})[0].status));

  store::WorkspaceWrite stop;
  stop.kind = Kind::kStop;
  stop.workspace.id = "q";
  store::WorkspaceWrite current = stale;
  current.from = {saved[0].version, true};
  // The stop comes first in the batch: it wins, the queue placement is refused.
  auto out = Run({stop, current});
  EXPECT_TRUE(out[0].status.ok());
  EXPECT_TRUE(absl::IsAborted(out[1].status));
  EXPECT_EQ(db_.Query("SELECT state FROM workspaces WHERE id = 'q'"), "stopped");
  EXPECT_EQ(db_.Query("SELECT count(*) FROM gpu_holds"), "0");
}

TEST_F(WriteBatchTest, DecisionsOnAnOldCatalogOrOldSettingsAreRefused) {
  db_.Query("UPDATE catalog_generation SET generation = 5 RETURNING generation");
  db_.Query("INSERT INTO project_settings (project_id, org_id) VALUES ('p', 'o') RETURNING project_id");
  const int64_t project_version = std::stoll(db_.Query("SELECT version FROM project_settings"));

  store::WorkspaceWrite old_catalog = Place("x", 100);
  old_catalog.catalog_generation = 4;
  store::WorkspaceWrite old_settings = Place("y", 100);
  old_settings.project_settings_version = project_version - 1;
  store::WorkspaceWrite no_org_row_assumed = Place("z", 100);
  no_org_row_assumed.org_settings_version = 0;  // Right: o has no row.
  no_org_row_assumed.catalog_generation = 5;
  no_org_row_assumed.project_settings_version = project_version;
  auto out = Run({old_catalog, old_settings, no_org_row_assumed});
  EXPECT_THAT(out[0].status.message(), HasSubstr("catalog changed"));
  EXPECT_THAT(out[1].status.message(), HasSubstr("settings changed"));
  EXPECT_TRUE(out[0].basis_changed && out[1].basis_changed) << "no race for the node";
  EXPECT_TRUE(out[2].status.ok()) << out[2].status;
}

TEST_F(WriteBatchTest, TheOrgGpuQuotaIsCountedAcrossTheBatch) {
  db_.Query("INSERT INTO org_settings (org_id, gpu_quota) VALUES ('o', 2) RETURNING org_id");
  ASSERT_TRUE(Run({Place("a", 100, {0})})[0].status.ok());
  auto out = Run({Place("b", 100, {1}), Place("c", 100, {2})});
  EXPECT_TRUE(out[0].status.ok()) << out[0].status;
  EXPECT_TRUE(absl::IsResourceExhausted(out[1].status));
  EXPECT_THAT(out[1].status.message(), HasSubstr("org o holds 2 GPUs of its quota of 2"));
}

TEST_F(WriteBatchTest, ASliceIsHeldOnceAndItsGpusOtherSlicesStayFree) {
  auto out = Run({PlaceSlice("a", 0, 7, 1), PlaceSlice("b", 0, 8, 1), PlaceSlice("c", 0, 7, 1)});
  EXPECT_TRUE(out[0].status.ok()) << out[0].status;
  EXPECT_TRUE(out[1].status.ok()) << out[1].status;
  EXPECT_TRUE(absl::IsAborted(out[2].status));
  EXPECT_THAT(out[2].status.message(), HasSubstr("MIG slice MIG-n1-0-7 is held"));
  // A later batch meets the database's copy, not this batch's memory.
  EXPECT_THAT(Run({PlaceSlice("d", 0, 8, 1)})[0].status.message(), HasSubstr("MIG-n1-0-8 is held"));
  EXPECT_EQ(db_.Query("SELECT string_agg(workspace_id || ':' || gpu_index || '/' || gpu_instance "
                      "|| '/' || compute_slices, ',' ORDER BY gpu_instance) FROM gpu_holds"),
            "a:0/7/1,b:0/8/1");
  // The primary key, not only the guard: a second row for a slice fails.
  EXPECT_THROW(db_.Query("INSERT INTO gpu_holds (gpu_uuid, node_name, gpu_index, workspace_id, "
                         "gpu_instance, compute_slices) VALUES ('MIG-n1-0-7', 'n1', 0, 'b', 7, 1) "
                         "RETURNING gpu_uuid"),
               std::exception);
}

// A MIG re-layout and a slice hold on one GPU never both stand: the
// publish and the batch both lock the node's row, so whichever comes second
// sees the other (docs/placement.md "Layouts by demand").
TEST_F(WriteBatchTest, ASliceIsNotHeldOnAGpuBeingLaidOutAndAPublishSkipsAHeldGpu) {
  auto publish = [&](std::vector<int> gpus) {
    std::vector<store::RelayoutRow> rows;
    for (int gpu : gpus) {
      rows.push_back({.node = "n1", .pool = "p", .gpu_index = gpu, .layout = {{"3g.x", 0}},
                      .for_profile = "3g.x", .ordered_at = absl::FromUnixSeconds(1), .leader = "r"});
    }
    pqxx::work txn(*connection_);
    std::vector<store::RelayoutRow> stored = store::ReplaceRelayouts(txn, rows);
    txn.commit();
    std::vector<int> kept;
    for (const auto& row : stored) kept.push_back(row.gpu_index);
    return kept;
  };
  EXPECT_EQ(publish({0}), std::vector<int>{0});
  auto out = Run({PlaceSlice("a", 0, 7, 1), PlaceSlice("b", 1, 7, 1)});
  EXPECT_TRUE(absl::IsAborted(out[0].status));
  EXPECT_THAT(out[0].status.message(), HasSubstr("GPU 0 on node n1 is being laid out anew"));
  EXPECT_TRUE(out[1].status.ok()) << out[1].status;
  // The order for GPU 1 came after b's hold: the publish leaves it out.
  EXPECT_EQ(publish({0, 1}), std::vector<int>{0});
  EXPECT_EQ(db_.Query("SELECT string_agg(gpu_index::text, ',') FROM mig_relayouts"), "0");
}

TEST_F(WriteBatchTest, ASliceReadsBackAsTheSliceItHolds) {
  ASSERT_TRUE(Run({PlaceSlice("a", 1, 2, 3), Place("g", 100, {0})})[0].status.ok());
  auto rows = store::WorkspaceRows(pqxx::nontransaction(*connection_)
                                       .exec(absl::StrCat("SELECT ", store::kWorkspaceColumns,
                                                          " FROM workspaces w ORDER BY w.id")));
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  const core::Workspace& slice = (*rows)[0].workspace;
  ASSERT_TRUE(slice.slice.has_value());
  EXPECT_EQ(*slice.slice, (core::WorkspaceSlice{{1, 2}, "MIG-n1-1-2", 3}));
  EXPECT_TRUE(slice.gpu_indices.empty());
  EXPECT_TRUE(slice.gpu_uuids.empty());
  const core::Workspace& whole = (*rows)[1].workspace;
  EXPECT_FALSE(whole.slice.has_value());
  EXPECT_EQ(whole.gpu_uuids, std::vector<std::string>{"GPU-n1-0"});
}

TEST_F(WriteBatchTest, TheOrgGpuQuotaCountsASliceByItsShare) {
  db_.Query("INSERT INTO org_settings (org_id, gpu_quota) VALUES ('o', 1) RETURNING org_id");
  // 3/7 + 3/7 fit a quota of one GPU; another 3/7 does not, and a 1g does.
  auto out = Run({PlaceSlice("a", 0, 1, 3), PlaceSlice("b", 0, 2, 3), PlaceSlice("c", 1, 1, 3),
                  PlaceSlice("d", 1, 2, 1)});
  EXPECT_TRUE(out[0].status.ok()) << out[0].status;
  EXPECT_TRUE(out[1].status.ok()) << out[1].status;
  EXPECT_TRUE(absl::IsResourceExhausted(out[2].status));
  EXPECT_THAT(out[2].status.message(),
              HasSubstr("org o holds 0.86 GPUs of its quota of 1; class c needs 0.43 more"));
  EXPECT_TRUE(out[3].status.ok()) << out[3].status;
  // Seven sevenths now: a whole GPU is over the quota.
  EXPECT_THAT(Run({Place("e", 100, {5})})[0].status.message(),
              HasSubstr("org o holds 1 GPUs of its quota of 1; class c needs 1 more"));
}

}  // namespace
}  // namespace wsched
