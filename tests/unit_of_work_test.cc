// store::UnitOfWork against a real PostgreSQL: the changes a body's writes
// record are published as one change-log entry when it commits, and a body
// that fails leaves neither its rows nor an entry behind.
#include "server/store/unit_of_work.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/change_feed.h"
#include "server/store/migrations.h"
#include "tests/support/test_database.h"

namespace wsched {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;

class UnitOfWorkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = store::Database::Connect(test_db_.url(), 2);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    ASSERT_TRUE(store::ApplyEmbeddedMigrations(*db_).ok());
  }

  store::FeedRead ReadFeed() {
    store::FeedRead read;
    absl::Status status = store::UnitOfWork::Run(*db_, "reading the feed", [&](store::UnitOfWork& unit) {
      read = unit.change_log().ReadSince(0, 100);
      return absl::OkStatus();
    });
    EXPECT_TRUE(status.ok()) << status;
    return read;
  }

  testing::TestDatabase test_db_;
  std::unique_ptr<store::Database> db_;
};

core::ProjectSettings Project(const std::string& id) {
  core::ProjectSettings settings;
  settings.project_id = id;
  settings.org_id = "org";
  return settings;
}

TEST_F(UnitOfWorkTest, TheWritesOfOneBodyArePublishedAsOneEntryAtCommit) {
  const int64_t head_before = ReadFeed().head;
  absl::Status status = store::UnitOfWork::Run(*db_, "saving", [&](store::UnitOfWork& unit) {
    if (absl::Status s = unit.settings().SaveProject(Project("p1")); !s.ok()) return s;
    core::OrgSettings org;
    org.org_id = "org";
    return unit.settings().SaveOrg(org);
  });
  ASSERT_TRUE(status.ok()) << status;

  store::FeedRead read = ReadFeed();
  EXPECT_EQ(read.head, head_before + 1);
  ASSERT_EQ(read.records.size(), 1u);
  EXPECT_EQ(read.records[0].replica, store::ReplicaId());
  EXPECT_THAT(read.records[0].changes,
              ElementsAre(Field(&store::Change::id, "project:p1"), Field(&store::Change::id, "org:org")));
  EXPECT_EQ(test_db_.Query("SELECT count(*) FROM project_settings"), "1");
}

TEST_F(UnitOfWorkTest, AFailedBodyRollsBackItsWritesAndPublishesNothing) {
  const int64_t head_before = ReadFeed().head;
  absl::Status status = store::UnitOfWork::Run(*db_, "saving", [&](store::UnitOfWork& unit) {
    if (absl::Status s = unit.settings().SaveProject(Project("p1")); !s.ok()) return s;
    return absl::AbortedError("a guard failed after the write");
  });
  EXPECT_TRUE(absl::IsAborted(status)) << status;

  EXPECT_EQ(ReadFeed().head, head_before);
  EXPECT_EQ(test_db_.Query("SELECT count(*) FROM project_settings"), "0");
}

TEST_F(UnitOfWorkTest, ABodyThatWritesNothingPublishesNothing) {
  const int64_t head_before = ReadFeed().head;
  absl::Status status = store::UnitOfWork::Run(*db_, "reading", [&](store::UnitOfWork& unit) {
    return unit.settings().LoadProject("p1").status();
  });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(ReadFeed().head, head_before);
}

TEST_F(UnitOfWorkTest, ASnapshotUnitRefusesWrites) {
  absl::Status status = store::UnitOfWork::Run(
      *db_, "saving in a snapshot",
      [&](store::UnitOfWork& unit) { return unit.settings().SaveProject(Project("p1")); },
      store::UnitOfWork::Mode::kSnapshot);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(test_db_.Query("SELECT count(*) FROM project_settings"), "0");
}

store::StoredNode NodeNamed(const std::string &name, const std::string &pool) {
  store::StoredNode node;
  node.info.name = name;
  node.info.pool = pool;
  node.info.cpu_millis = 8000;
  node.info.memory_bytes = int64_t{32} << 30;
  core::Gpu gpu;
  gpu.uuid = "GPU-" + name;
  gpu.model = "H100";
  node.info.gpus.push_back(gpu);
  node.state = core::NodeState::kReady;
  node.driver_state = core::DriverState::kReady;
  return node;
}

// WatchNodes' history (migrations/0018): each entry keeps the rows of the
// nodes it changed as they committed, null for a removed one, and nothing
// for an entry that changed no node.
TEST_F(UnitOfWorkTest, TheChangeLogKeepsEachChangedNodeAsItCommitted) {
  const int64_t head_before = ReadFeed().head;
  auto write = [&](const store::UnitOfWork::Body &body) {
    absl::Status status = store::UnitOfWork::Run(*db_, "writing", body);
    ASSERT_TRUE(status.ok()) << status;
  };
  write([&](store::UnitOfWork &unit) {
    unit.nodes().Save(NodeNamed("n-1", "west"));
    unit.nodes().Save(NodeNamed("n-2", "east"));
    return absl::OkStatus();
  });
  write([&](store::UnitOfWork &unit) {
    return unit.settings().SaveProject(Project("p1"));
  });
  write([&](store::UnitOfWork &unit) {
    unit.nodes().SetState("n-1", core::NodeState::kCordoned);
    return absl::OkStatus();
  });
  write([&](store::UnitOfWork &unit) {
    unit.nodes().Delete("n-2");
    return absl::OkStatus();
  });

  store::NodeHistoryRead read;
  std::vector<store::StoredNode> west;
  absl::Status status =
      store::UnitOfWork::Run(*db_, "reading", [&](store::UnitOfWork &unit) {
        auto history = unit.change_log().ReadNodeHistory(head_before, 100);
        if (!history.ok())
          return history.status();
        read = std::move(*history);
        auto listed = unit.nodes().ListSelected("west", "");
        if (!listed.ok())
          return listed.status();
        west = std::move(*listed);
        return absl::OkStatus();
      });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_TRUE(read.reaches);
  EXPECT_EQ(read.head, head_before + 4);
  ASSERT_EQ(read.entries.size(), 4u);
  // Registered: both rows, GPUs and all.
  ASSERT_EQ(read.entries[0].changes.size(), 2u);
  const store::NodeChangeRow &registered = read.entries[0].changes[0];
  EXPECT_EQ(registered.id, "n-1");
  EXPECT_EQ(registered.pool, "west");
  EXPECT_TRUE(registered.registered);
  ASSERT_TRUE(registered.after.has_value());
  EXPECT_EQ(registered.after->info, NodeNamed("n-1", "west").info);
  EXPECT_EQ(registered.after->version, registered.version);
  EXPECT_GT(registered.after->last_heartbeat, absl::UnixEpoch());
  // The settings entry changed no node.
  EXPECT_TRUE(read.entries[1].changes.empty());
  // Cordoned: the row as of then.
  ASSERT_EQ(read.entries[2].changes.size(), 1u);
  ASSERT_TRUE(read.entries[2].changes[0].after.has_value());
  EXPECT_EQ(read.entries[2].changes[0].after->state,
            core::NodeState::kCordoned);
  // Removed: no row, a fresh version.
  ASSERT_EQ(read.entries[3].changes.size(), 1u);
  EXPECT_EQ(read.entries[3].changes[0].id, "n-2");
  EXPECT_EQ(read.entries[3].changes[0].pool, "east");
  EXPECT_FALSE(read.entries[3].changes[0].after.has_value());
  EXPECT_GT(read.entries[3].changes[0].version,
            read.entries[2].changes[0].version);
  // The listing of one pool.
  ASSERT_EQ(west.size(), 1u);
  EXPECT_EQ(west[0].info.name, "n-1");
  EXPECT_EQ(west[0].state, core::NodeState::kCordoned);
}

TEST_F(UnitOfWorkTest, ANodeHistoryReadPrunedPastItsStartDoesNotReach) {
  for (int i = 0; i < 3; ++i) {
    absl::Status status =
        store::UnitOfWork::Run(*db_, "writing", [&](store::UnitOfWork &unit) {
          unit.nodes().Save(NodeNamed("n-1", "west"));
          return absl::OkStatus();
        });
    ASSERT_TRUE(status.ok()) << status;
  }
  const int64_t head = ReadFeed().head;
  test_db_.Query(absl::StrCat("DELETE FROM change_log WHERE seq <= ", head - 1,
                              " RETURNING 1"));
  store::NodeHistoryRead read;
  absl::Status status =
      store::UnitOfWork::Run(*db_, "reading", [&](store::UnitOfWork &unit) {
        auto history = unit.change_log().ReadNodeHistory(head - 3, 100);
        if (!history.ok())
          return history.status();
        read = std::move(*history);
        return absl::OkStatus();
      });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_FALSE(read.reaches);
  EXPECT_EQ(read.oldest, head - 1);
}

// The scaling leader's MIG re-layouts (migrations/0020): the set is
// replaced whole, read back as written, and publishes no change-log entry
// (replicas read it each second, not through the feed).
TEST_F(UnitOfWorkTest, MigReLayoutsAreReplacedWholeAndReadBackAsWritten) {
  store::RelayoutRow a{.node = "node-a",
                       .pool = "gpu-h200",
                       .gpu_index = 3,
                       .layout = {{"1g.18gb", 0}, {"3g.71gb", 4}},
                       .for_profile = "3g.71gb",
                       .ordered_at = absl::FromUnixMicros(1'800'000'000'123'456),
                       .leader = "replica-1"};
  store::RelayoutRow b = a;
  b.node = "node-b";
  b.gpu_index = 0;
  const int64_t head_before = ReadFeed().head;
  auto replace = [&](const std::vector<store::RelayoutRow>& rows) {
    absl::Status status = store::UnitOfWork::Run(*db_, "publishing", [&](store::UnitOfWork& unit) {
      unit.scaling().ReplaceRelayouts(rows);
      return absl::OkStatus();
    });
    ASSERT_TRUE(status.ok()) << status;
  };
  auto load = [&] {
    std::vector<store::RelayoutRow> rows;
    absl::Status status = store::UnitOfWork::Run(*db_, "reading", [&](store::UnitOfWork& unit) {
      auto loaded = unit.scaling().LoadRelayouts();
      if (!loaded.ok()) return loaded.status();
      rows = *std::move(loaded);
      return absl::OkStatus();
    });
    EXPECT_TRUE(status.ok()) << status;
    return rows;
  };
  replace({b, a});
  EXPECT_THAT(load(), ElementsAre(a, b));
  replace({b});
  EXPECT_THAT(load(), ElementsAre(b));
  replace({});
  EXPECT_TRUE(load().empty());
  EXPECT_EQ(ReadFeed().head, head_before);
}

}  // namespace
}  // namespace wsched
