// store::UnitOfWork against a real PostgreSQL: the changes a body's writes
// record are published as one change-log entry when it commits, and a body
// that fails leaves neither its rows nor an entry behind.
#include "server/store/unit_of_work.h"

#include <memory>
#include <string>

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

}  // namespace
}  // namespace wsched
