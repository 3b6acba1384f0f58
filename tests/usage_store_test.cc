// The usage ledger in the store, against a real PostgreSQL: every path that
// ends a placement (a stop in the group commit, with its reason; a node
// marked lost; a node removed) writes exactly one record in its own
// transaction, with the workspace's placed_at and that transaction's now();
// nothing else writes one. Listing clips to the range and counts open
// placements to now; summaries split intervals at calendar buckets of a
// time zone (a DST day is 25 hours); the ledger's own retention deletes old
// records and the workspaces' retention leaves them alone.
//
// Times that the real paths take from now() are checked against the
// workspace rows those same transactions wrote; the listing and summary
// cases write records with known timestamps by SQL instead, so their
// figures can be compared exactly.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/migrations.h"
#include "server/store/unit_of_work.h"
#include "server/store/write_batch.h"
#include "tests/support/test_database.h"

namespace wsched {
namespace {

using Kind = store::WorkspaceWrite::Kind;
using ::testing::ElementsAre;

absl::Time At(const std::string& rfc3339) {
  absl::Time t;
  std::string error;
  EXPECT_TRUE(absl::ParseTime(absl::RFC3339_full, rfc3339, &t, &error)) << error;
  return t;
}

class UsageStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = store::Database::Connect(test_db_.url(), 2);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    ASSERT_TRUE(store::ApplyEmbeddedMigrations(*db_).ok());
    connection_ = std::make_unique<pqxx::connection>(test_db_.url());
    store::PrepareWriteStatements(*connection_);
    for (const char* node : {"n1", "n2"}) {
      test_db_.Query(absl::StrCat(
          "INSERT INTO nodes (name, pool, info, state, driver_state, alloc_cpu_millis, "
          "alloc_memory_bytes) VALUES ('", node, "', 'gpu-h100', '{}', 'ready', 'ready', 64000, "
          "1000000000000) RETURNING name"));
      test_db_.Query(absl::StrCat("INSERT INTO node_liveness (name, last_heartbeat) VALUES ('",
                                  node, "', now()) RETURNING name"));
    }
  }

  store::WorkspaceWrite Place(const std::string& id, const std::string& node, int gpus) {
    store::WorkspaceWrite write;
    write.kind = Kind::kPlace;
    core::Workspace& w = write.workspace;
    w.id = id;
    w.org_id = "o-1";
    w.project_id = "p-1";
    w.user_id = "u-1";
    w.class_id = gpus > 0 ? "gpu" : "cpu";
    w.class_source = "request";
    w.state = core::WorkspaceState::kPlaced;
    w.node_name = node;
    w.pool = "gpu-h100";
    w.cpu_millis = 4000;
    w.memory_bytes = int64_t{64} << 30;
    auto hand_off = std::make_shared<core::HandOff>();
    for (int g = 0; g < gpus; ++g) {
      const std::string uuid = absl::StrCat("GPU-", node, "-", id, "-", g);
      w.gpu_indices.push_back(next_gpu_index_++);
      w.gpu_uuids.push_back(uuid);
      hand_off->gpus.push_back({g, uuid, "", "NVIDIA H100 80GB HBM3"});
    }
    w.hand_off = hand_off;
    return write;
  }

  store::WorkspaceWrite Stop(const std::string& id,
                             core::EndReason reason = core::EndReason::kStopped) {
    store::WorkspaceWrite write;
    write.kind = Kind::kStop;
    write.workspace.id = id;
    write.end_reason = reason;
    return write;
  }

  std::vector<store::WriteOutcome> Run(const std::vector<store::WorkspaceWrite>& writes) {
    store::BatchStatements stats;
    return store::CommitWrites(*connection_, writes, stats);
  }

  void InUnit(const std::function<void(store::UnitOfWork&)>& body) {
    absl::Status status = store::UnitOfWork::Run(*db_, "test", [&](store::UnitOfWork& unit) {
      body(unit);
      return absl::OkStatus();
    });
    ASSERT_TRUE(status.ok()) << status;
  }

  std::vector<core::UsageRecord> List(const store::UsageFilter& filter,
                                       std::optional<store::UsageCursor> after = std::nullopt,
                                       int limit = 100) {
    std::vector<core::UsageRecord> out;
    InUnit([&](store::UnitOfWork& unit) {
      auto rows = unit.usage().List(filter, after, limit);
      ASSERT_TRUE(rows.ok()) << rows.status();
      out = *std::move(rows);
    });
    return out;
  }

  std::vector<core::UsageSummaryRow> Summarize(const store::UsageSummaryRequest& request) {
    std::vector<core::UsageSummaryRow> out;
    InUnit([&](store::UnitOfWork& unit) {
      auto rows = unit.usage().Summarize(request);
      ASSERT_TRUE(rows.ok()) << rows.status();
      out = *std::move(rows);
    });
    return out;
  }

  // A record with known times, as the ledger would hold it.
  void InsertRecord(const std::string& workspace, const std::string& started,
                    const std::string& ended, int gpus, const std::string& org = "o-1",
                    const std::string& project = "p-1", const std::string& cls = "gpu") {
    test_db_.Query(absl::StrCat(
        "INSERT INTO usage_records (started_at, workspace_id, ended_at, end_reason, org_id, "
        "project_id, user_id, class_id, pool, node_name, gpu_count, cpu_millis, memory_bytes) "
        "VALUES ('", started, "', '", workspace, "', '", ended, "', 'stopped', '", org, "', '",
        project, "', 'u-1', '", cls, "', 'gpu-h100', 'n1', ", gpus,
        ", 1500, 2000000000) RETURNING workspace_id"));
  }

  std::string Ledger(const std::string& column, const std::string& workspace) {
    return test_db_.Query(absl::StrCat("SELECT string_agg(", column,
                                       "::text, ',' ORDER BY started_at) FROM usage_records "
                                       "WHERE workspace_id = '", workspace, "'"));
  }

  testing::TestDatabase test_db_;
  std::unique_ptr<store::Database> db_;
  std::unique_ptr<pqxx::connection> connection_;
  int next_gpu_index_ = 0;  // Every GPU its own index: holds never collide.
};

TEST_F(UsageStoreTest, AStopWritesOneRecordWithTheRowsOwnTimesAndItsReason) {
  for (const auto& out : Run({Place("a", "n1", 2), Place("b", "n1", 0), Place("c", "n1", 1)})) {
    ASSERT_TRUE(out.status.ok()) << out.status;
  }
  store::WorkspaceWrite pending = Place("q", "", 0);
  pending.kind = Kind::kSavePending;
  ASSERT_TRUE(Run({pending})[0].status.ok());
  for (const auto& out : Run({Stop("a"), Stop("b", core::EndReason::kIdle), Stop("q")})) {
    ASSERT_TRUE(out.status.ok()) << out.status;
  }

  EXPECT_EQ(test_db_.Query("SELECT string_agg(workspace_id || '=' || end_reason, ',' "
                           "ORDER BY workspace_id) FROM usage_records"),
            "a=stopped,b=idle")
      << "a pending workspace ended no placement; c still runs";
  EXPECT_EQ(test_db_.Query("SELECT count(*) FROM usage_records r JOIN workspaces w ON "
                           "w.id = r.workspace_id WHERE r.started_at = w.placed_at AND "
                           "r.ended_at = w.stopped_at"),
            "2")
      << "start and end are the row's placed_at and the stop's stopped_at, to the microsecond";
  EXPECT_EQ(Ledger("gpu_count", "a"), "2");
  EXPECT_EQ(Ledger("gpu_models", "a"), "[\"NVIDIA H100 80GB HBM3\", \"NVIDIA H100 80GB HBM3\"]");
  EXPECT_EQ(Ledger("gpu_models", "b"), "[]");
  EXPECT_EQ(Ledger("org_id || '/' || project_id || '/' || user_id || '/' || class_id || '/' || "
                   "pool || '/' || node_name || '/' || cpu_millis || '/' || memory_bytes",
                   "a"),
            "o-1/p-1/u-1/gpu/gpu-h100/n1/4000/68719476736");

  // A second stop of a stopped workspace changes nothing in the ledger.
  ASSERT_TRUE(Run({Stop("a")})[0].status.ok());
  EXPECT_EQ(test_db_.Query("SELECT count(*) FROM usage_records"), "2");
  // A restart is a new placement: its own record when it ends.
  store::WorkspaceWrite restart = Place("a", "n1", 1);
  restart.from.version = std::stoll(test_db_.Query("SELECT version FROM workspaces WHERE id = 'a'"));
  ASSERT_TRUE(Run({restart})[0].status.ok());
  ASSERT_TRUE(Run({Stop("a")})[0].status.ok());
  EXPECT_EQ(Ledger("gpu_count", "a"), "2,1");
}

// A stop batch that began before the placement it stops committed (it
// waited for the placing batch's row lock: a stop racing a queue placement
// from another replica) sees placed_at after its own now(). The placement
// then lasted no time: end = start, for the record and the row alike,
// rather than a record that ends before it starts failing the batch. The
// race is stood for by a placed_at moved past the stop's now() by SQL.
TEST_F(UsageStoreTest, AStopThatBeganBeforeThePlacementCommittedRecordsNoTime) {
  ASSERT_TRUE(Run({Place("raced", "n1", 1), Place("other", "n1", 1)})[0].status.ok());
  test_db_.Query("UPDATE workspaces SET placed_at = now() + interval '1 minute' "
                 "WHERE id = 'raced' RETURNING id");
  auto out = Run({Stop("raced"), Stop("other")});
  ASSERT_TRUE(out[0].status.ok()) << out[0].status;
  ASSERT_TRUE(out[1].status.ok()) << out[1].status;
  EXPECT_EQ(test_db_.Query("SELECT count(*) FROM usage_records r JOIN workspaces w ON "
                           "w.id = r.workspace_id WHERE r.started_at = w.placed_at AND "
                           "r.ended_at = w.stopped_at"),
            "2");
  EXPECT_EQ(Ledger("(ended_at - started_at)", "raced"), "00:00:00");
}

TEST_F(UsageStoreTest, AStopCarriesOnlyAStopReason) {
  ASSERT_TRUE(Run({Place("a", "n1", 1)})[0].status.ok());
  auto out = Run({Stop("a", core::EndReason::kLost)});
  EXPECT_TRUE(absl::IsInvalidArgument(out[0].status)) << out[0].status;
  EXPECT_EQ(test_db_.Query("SELECT state FROM workspaces WHERE id = 'a'"), "placed");
  EXPECT_EQ(test_db_.Query("SELECT count(*) FROM usage_records"), "0");
}

TEST_F(UsageStoreTest, ALostNodeEndsItsPlacementsOnceAndARemovedNodeTheRest) {
  for (const auto& out : Run({Place("l1", "n1", 1), Place("l2", "n1", 0), Place("r1", "n2", 1)})) {
    ASSERT_TRUE(out.status.ok()) << out.status;
  }
  test_db_.Query("UPDATE node_liveness SET last_heartbeat = now() - interval '1 hour' "
                 "WHERE name = 'n1' RETURNING name");
  InUnit([&](store::UnitOfWork& unit) {
    EXPECT_THAT(unit.nodes().MarkLost(absl::Minutes(1)), ElementsAre("n1"));
  });
  EXPECT_EQ(test_db_.Query("SELECT string_agg(workspace_id || '=' || end_reason, ',' "
                           "ORDER BY workspace_id) FROM usage_records"),
            "l1=lost,l2=lost");
  // Marked lost again (another replica), stopped, released, removed:
  // nothing more for a placement that already ended.
  InUnit([&](store::UnitOfWork& unit) { EXPECT_TRUE(unit.nodes().MarkLost(absl::Minutes(1)).empty()); });
  ASSERT_TRUE(Run({Stop("l1")})[0].status.ok());
  InUnit([&](store::UnitOfWork& unit) { unit.nodes().ReleaseLostWorkspaces("n1"); });
  InUnit([&](store::UnitOfWork& unit) { unit.nodes().Delete("n1"); });
  EXPECT_EQ(test_db_.Query("SELECT count(*) FROM usage_records"), "2");

  InUnit([&](store::UnitOfWork& unit) { unit.nodes().Delete("n2"); });
  EXPECT_EQ(Ledger("end_reason", "r1"), "node_removed");
  EXPECT_EQ(test_db_.Query("SELECT count(*) FROM usage_records r JOIN workspaces w ON "
                           "w.id = r.workspace_id WHERE w.id = 'r1' AND r.ended_at = w.stopped_at"),
            "1")
      << "ended when the removal released it";
}

TEST_F(UsageStoreTest, ListingClipsToTheRangeCountsOpenPlacementsToNowAndPages) {
  InsertRecord("w1", "2026-03-01T10:00:00Z", "2026-03-01T12:00:00.250000Z", 2);
  InsertRecord("w2", "2026-03-01T11:00:00Z", "2026-03-01T11:30:00Z", 1, "o-2", "p-9");
  InsertRecord("w3", "2026-03-01T13:00:00Z", "2026-03-01T14:00:00Z", 1);
  ASSERT_TRUE(Run({Place("open", "n1", 4)})[0].status.ok());

  store::UsageFilter range;
  range.start = At("2026-03-01T11:00:00Z");
  range.end = At("2026-03-01T13:00:00Z");
  auto rows = List(range);
  ASSERT_EQ(rows.size(), 2u) << "w3 starts at the range's end; the open one after it";
  EXPECT_EQ(rows[0].workspace_id, "w1");
  EXPECT_EQ(rows[0].counted_from, At("2026-03-01T11:00:00Z"));
  EXPECT_EQ(rows[0].counted_until, At("2026-03-01T12:00:00.25Z"));
  EXPECT_EQ(rows[0].figures.duration_micros, 3'600'250'000);
  EXPECT_EQ(rows[0].figures.gpu_seconds, "7200.500000");
  EXPECT_EQ(rows[0].figures.cpu_millicore_seconds, "5400375.000000");
  EXPECT_EQ(rows[0].figures.memory_byte_seconds, "7200500000000.000000");
  EXPECT_EQ(rows[0].ended_at, At("2026-03-01T12:00:00.25Z"));
  EXPECT_EQ(rows[0].end_reason, core::EndReason::kStopped);
  EXPECT_EQ(rows[1].workspace_id, "w2");
  EXPECT_EQ(rows[1].figures.gpu_seconds, "1800.000000");

  // No range: everything, the open placement last (placed now), to now.
  auto all = List({});
  ASSERT_EQ(all.size(), 4u);
  const core::UsageRecord& open = all[3];
  EXPECT_EQ(open.workspace_id, "open");
  EXPECT_FALSE(open.ended_at.has_value());
  EXPECT_FALSE(open.end_reason.has_value());
  EXPECT_EQ(open.gpu_count, 4);
  EXPECT_THAT(open.gpu_models, ::testing::Each(std::string("NVIDIA H100 80GB HBM3")));
  EXPECT_GE(open.counted_until, open.started_at);
  EXPECT_EQ(open.figures.duration_micros,
            absl::ToInt64Microseconds(open.counted_until - open.counted_from));

  // Filters and scopes.
  store::UsageFilter by_org;
  by_org.org_id = "o-2";
  EXPECT_EQ(List(by_org).size(), 1u);
  store::UsageFilter owner;
  owner.scope.everything = false;
  owner.scope.projects = {"p-9"};
  owner.scope.orgs = {"o-1"};
  ASSERT_EQ(List(owner).size(), 1u) << "projects named: only those";
  owner.scope.projects.clear();
  EXPECT_EQ(List(owner).size(), 3u) << "no projects: every project of the orgs";
  owner.scope.orgs.clear();
  EXPECT_TRUE(List(owner).empty()) << "an empty scope sees nothing";

  // Pages of one, in order, none repeated.
  std::vector<std::string> ids;
  std::optional<store::UsageCursor> after;
  for (int page = 0; page < 10; ++page) {
    auto one = List({}, after, 1);
    if (one.empty()) break;
    ids.push_back(one[0].workspace_id);
    after = store::UsageCursor{one[0].started_at, one[0].workspace_id};
  }
  EXPECT_THAT(ids, ElementsAre("w1", "w2", "w3", "open"));
}

TEST_F(UsageStoreTest, DayBucketsFollowTheTimeZonesCalendarAcrossADstChange) {
  // Europe/Berlin leaves summer time on 2026-10-25 at 03:00 CEST (01:00
  // UTC): that local day lasts 25 hours. One GPU held from local midnight
  // of the 24th to local noon of the 26th.
  InsertRecord("dst", "2026-10-23T22:00:00Z", "2026-10-26T11:00:00Z", 1);
  store::UsageSummaryRequest request;
  request.filter.start = At("2026-10-23T22:00:00Z");  // 2026-10-24 00:00 CEST.
  request.filter.end = At("2026-10-26T23:00:00Z");    // 2026-10-27 00:00 CET.
  request.bucket = core::UsageBucket::kDay;
  request.time_zone = "Europe/Berlin";
  request.max_rows = 100;
  auto days = Summarize(request);
  ASSERT_EQ(days.size(), 3u);
  EXPECT_EQ(days[0].bucket_start, At("2026-10-23T22:00:00Z"));
  EXPECT_EQ(days[1].bucket_start, At("2026-10-24T22:00:00Z"));
  EXPECT_EQ(days[1].bucket_end, At("2026-10-25T23:00:00Z"));
  EXPECT_EQ(days[0].figures.gpu_seconds, "86400.000000");
  EXPECT_EQ(days[1].figures.gpu_seconds, "90000.000000") << "25 hours";
  EXPECT_EQ(days[2].figures.gpu_seconds, "43200.000000") << "local midnight to noon";
  EXPECT_EQ(days[1].workspaces, 1);

  // Hours: the repeated local hour is two buckets, not one.
  request.bucket = core::UsageBucket::kHour;
  request.filter.start = At("2026-10-24T22:00:00Z");
  request.filter.end = At("2026-10-25T23:00:00Z");
  EXPECT_EQ(Summarize(request).size(), 25u);
  // The whole range as one bucket, and months.
  request.bucket = core::UsageBucket::kNone;
  ASSERT_EQ(Summarize(request).size(), 1u);
  EXPECT_EQ(Summarize(request)[0].figures.duration_micros, int64_t{25} * 3600 * 1'000'000);
  request.bucket = core::UsageBucket::kMonth;
  request.filter.start = At("2026-09-30T22:00:00Z");  // 2026-10-01 00:00 CEST.
  request.filter.end = At("2026-11-30T23:00:00Z");    // 2026-12-01 00:00 CET.
  auto months = Summarize(request);
  ASSERT_EQ(months.size(), 1u) << "November had no usage";
  EXPECT_EQ(months[0].bucket_start, At("2026-09-30T22:00:00Z"));
  EXPECT_EQ(months[0].bucket_end, At("2026-10-31T23:00:00Z"));
  EXPECT_EQ(months[0].figures.gpu_seconds, "219600.000000");  // 61 hours.
}

TEST_F(UsageStoreTest, SummariesGroupByWhatIsAskedAndCountWorkspaces) {
  InsertRecord("a", "2026-03-01T10:00:00Z", "2026-03-01T11:00:00Z", 1, "o-1", "p-1", "gpu");
  InsertRecord("b", "2026-03-01T10:00:00Z", "2026-03-01T12:00:00Z", 2, "o-1", "p-2", "gpu");
  InsertRecord("c", "2026-03-01T10:30:00Z", "2026-03-01T10:45:00Z", 0, "o-2", "p-3", "cpu");
  store::UsageSummaryRequest request;
  request.filter.start = At("2026-03-01T00:00:00Z");
  request.filter.end = At("2026-03-02T00:00:00Z");
  request.max_rows = 100;
  auto total = Summarize(request);
  ASSERT_EQ(total.size(), 1u);
  EXPECT_EQ(total[0].workspaces, 3);
  EXPECT_EQ(total[0].figures.gpu_seconds, "18000.000000");
  EXPECT_EQ(total[0].figures.duration_micros, int64_t{3} * 3600 * 1'000'000 + 900'000'000);
  EXPECT_EQ(total[0].org_id, "");

  request.group_by = {core::UsageGroup::kOrg};
  auto by_org = Summarize(request);
  ASSERT_EQ(by_org.size(), 2u);
  EXPECT_EQ(by_org[0].org_id, "o-1");
  EXPECT_EQ(by_org[0].workspaces, 2);
  EXPECT_EQ(by_org[1].figures.gpu_seconds, "0.000000");
  EXPECT_EQ(by_org[1].figures.cpu_millicore_seconds, "1350000.000000");

  request.group_by = {core::UsageGroup::kProject, core::UsageGroup::kClass};
  request.filter.org_id = "o-1";
  auto by_project = Summarize(request);
  ASSERT_EQ(by_project.size(), 2u);
  EXPECT_EQ(by_project[1].project_id, "p-2");
  EXPECT_EQ(by_project[1].class_id, "gpu");
  EXPECT_EQ(by_project[1].org_id, "") << "not grouped by org";
}

TEST_F(UsageStoreTest, ASliceIsRecordedWithItsProfileAndChargedItsShare) {
  store::WorkspaceWrite slice = Place("s", "n1", 0);
  slice.workspace.class_id = "mig-3g";
  slice.workspace.slice = core::WorkspaceSlice{{0, 2}, "MIG-n1-0-2", 3};
  auto hand_off = std::make_shared<core::HandOff>();
  hand_off->slice =
      core::AssignedSlice{{0, "GPU-n1-0", "", "NVIDIA H200"}, 2, 0, "MIG-n1-0-2", "3g.71gb", 3};
  slice.workspace.hand_off = hand_off;
  ASSERT_TRUE(Run({slice})[0].status.ok());
  // Open: the listing reads the placed row.
  store::UsageFilter everything;
  everything.scope.everything = true;
  std::vector<core::UsageRecord> open = List(everything);
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].mig_profile, "3g.71gb");
  EXPECT_EQ(open[0].mig_compute_slices, 3);
  EXPECT_EQ(open[0].gpu_count, 0);
  ASSERT_TRUE(Run({Stop("s")})[0].status.ok());
  EXPECT_EQ(Ledger("mig_profile || '/' || mig_compute_slices || '/' || gpu_count", "s"),
            "3g.71gb/3/0");

  // Seven hours of a 3g slice are three GPU-hours; a whole GPU beside it
  // counts as before.
  InsertRecord("w", "2026-03-01T10:00:00Z", "2026-03-01T17:00:00Z", 1);
  InsertRecord("m", "2026-03-01T10:00:00Z", "2026-03-01T17:00:00Z", 0, "o-1", "p-1", "mig-3g");
  test_db_.Query(
      "UPDATE usage_records SET mig_profile = '3g.71gb', mig_compute_slices = 3 "
      "WHERE workspace_id = 'm' RETURNING workspace_id");
  store::UsageSummaryRequest request;
  request.filter.start = At("2026-03-01T00:00:00Z");
  request.filter.end = At("2026-03-02T00:00:00Z");
  request.max_rows = 100;
  request.group_by = {core::UsageGroup::kClass};
  auto by_class = Summarize(request);
  ASSERT_EQ(by_class.size(), 2u);
  EXPECT_EQ(by_class[0].class_id, "gpu");
  EXPECT_EQ(by_class[0].figures.gpu_seconds, "25200.000000");
  EXPECT_EQ(by_class[1].class_id, "mig-3g");
  EXPECT_EQ(by_class[1].figures.gpu_seconds, "10800.000000");
  // A share that is not a whole number of seconds rounds to the microsecond.
  test_db_.Query(
      "UPDATE usage_records SET ended_at = started_at + interval '1 second', "
      "mig_compute_slices = 1 WHERE workspace_id = 'm' RETURNING workspace_id");
  EXPECT_EQ(Summarize(request)[1].figures.gpu_seconds, "0.142857");
}

TEST_F(UsageStoreTest, TimeZonesAreTheDatabasesIanaNames) {
  InUnit([&](store::UnitOfWork& unit) {
    EXPECT_TRUE(unit.usage().KnownTimeZone("Europe/Berlin"));
    EXPECT_TRUE(unit.usage().KnownTimeZone("UTC"));
    EXPECT_FALSE(unit.usage().KnownTimeZone("Europe/Atlantis"));
    EXPECT_FALSE(unit.usage().KnownTimeZone("UTC+3")) << "a POSIX rule, not a zone name";
  });
}

TEST_F(UsageStoreTest, TheLedgersRetentionDeletesOldRecordsAndTheWorkspacesSweepNone) {
  ASSERT_TRUE(Run({Place("old", "n1", 1), Place("new", "n1", 1)})[0].status.ok());
  ASSERT_TRUE(Run({Stop("old"), Stop("new")})[0].status.ok());
  test_db_.Query("UPDATE workspaces SET stopped_at = now() - interval '30 days' RETURNING id");
  test_db_.Query("UPDATE usage_records SET ended_at = now() - interval '30 days', "
                 "started_at = now() - interval '31 days' WHERE workspace_id = 'old' "
                 "RETURNING workspace_id");
  InUnit([&](store::UnitOfWork& unit) {
    EXPECT_EQ(unit.workspaces().DeleteEnded(absl::Hours(24), 500), 2);
  });
  EXPECT_EQ(test_db_.Query("SELECT count(*) FROM workspaces"), "0");
  EXPECT_EQ(test_db_.Query("SELECT count(*) FROM usage_records"), "2")
      << "the ledger outlives the workspace rows";
  InUnit([&](store::UnitOfWork& unit) {
    EXPECT_EQ(unit.usage().DeleteOlderThan(absl::Hours(24 * 7), 500), 1);
  });
  EXPECT_EQ(test_db_.Query("SELECT string_agg(workspace_id, ',') FROM usage_records"), "new");
}

}  // namespace
}  // namespace wsched
