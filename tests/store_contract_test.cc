// The contract of the scheduler's store interfaces (server/replica/stores.h),
// one set of cases run against both implementations: the in-memory fake the
// scheduler's unit tests use (fake_stores_test_util.h) and PostgreSQL
// (database_stores.h, the group commit and its guards). A guard the fake
// lacks, or one it enforces that PostgreSQL does not, fails here, so the
// unit tests cannot pass on a picture of the database that is not true.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/test_nodes.h"
#include "server/replica/database_stores.h"
#include "server/replica/fake_stores_test_util.h"
#include "server/store/migrations.h"
#include "server/store/unit_of_work.h"
#include "tests/support/test_database.h"

namespace wsched {
namespace {

using replica::PlacementStore;
using replica::StateStore;
using store::WorkspaceWrite;

constexpr char kNode[] = "g1";

core::Catalog OneGpuPool() {
  core::Catalog catalog;
  core::WorkspaceClass cls = placement::testing::GpuClass("gpu-1x", 1);
  cls.is_default = true;
  catalog.classes = {cls};
  catalog.pools = {placement::testing::GpuPool("gpu-h100", "h100")};
  return catalog;
}

// One store implementation with a way to set up what the cases need.
class Harness {
 public:
  virtual ~Harness() = default;
  virtual void Seed(const core::Catalog& catalog, const core::NodeInfo& node) = 0;
  virtual PlacementStore& placement() = 0;
  virtual StateStore& state() = 0;
};

class FakeHarness : public Harness {
 public:
  void Seed(const core::Catalog& catalog, const core::NodeInfo& node) override {
    db_.SetCatalog(catalog);
    db_.AddNode(node);
  }
  PlacementStore& placement() override { return db_; }
  StateStore& state() override { return db_; }

 private:
  replica::testing::FakeDatabase db_;
};

class PostgresHarness : public Harness {
 public:
  PostgresHarness() {
    auto db = store::Database::Connect(test_db_.url(), 2);
    EXPECT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    EXPECT_TRUE(store::ApplyEmbeddedMigrations(*db_).ok());
    placement_ = std::make_unique<replica::DatabasePlacementStore>(
        db_.get(), store::CommitBatcher::Options{}, nullptr);
    state_ = std::make_unique<replica::DatabaseStateStore>(db_.get());
  }
  void Seed(const core::Catalog& catalog, const core::NodeInfo& node) override {
    absl::Status status = store::UnitOfWork::Run(*db_, "seeding", [&](store::UnitOfWork& unit) {
      if (absl::Status s = unit.catalog().Write(core::Catalog{}, catalog); !s.ok()) return s;
      store::StoredNode stored;
      stored.info = node;
      stored.state = core::NodeState::kReady;
      stored.driver_state = core::DriverState::kReady;
      unit.nodes().Save(stored);
      return absl::OkStatus();
    });
    ASSERT_TRUE(status.ok()) << status;
  }
  PlacementStore& placement() override { return *placement_; }
  StateStore& state() override { return *state_; }

 private:
  testing::TestDatabase test_db_;
  std::unique_ptr<store::Database> db_;
  std::unique_ptr<replica::DatabasePlacementStore> placement_;
  std::unique_ptr<replica::DatabaseStateStore> state_;
};

enum class Implementation { kFake, kPostgres };

class StoreContractTest : public ::testing::TestWithParam<Implementation> {
 protected:
  void SetUp() override {
    if (GetParam() == Implementation::kFake) {
      harness_ = std::make_unique<FakeHarness>();
    } else {
      harness_ = std::make_unique<PostgresHarness>();
    }
    harness_->Seed(OneGpuPool(), placement::testing::FakeGpuNode(kNode, "gpu-h100"));
    auto rows = harness_->state().Load(/*catalog=*/true, {}, {});
    ASSERT_TRUE(rows.ok()) << rows.status();
    generation_ = rows->catalog_generation;
  }

  // A placement of `id` on GPU `gpu` of the node, decided from `from`.
  WorkspaceWrite PlaceOn(const std::string& id, int gpu, store::DecidedFrom from = {},
                         WorkspaceWrite::Kind kind = WorkspaceWrite::Kind::kPlace) {
    WorkspaceWrite write;
    write.kind = kind;
    core::Workspace& w = write.workspace;
    w.id = id;
    w.org_id = "o";
    w.project_id = "p";
    w.user_id = "u";
    w.class_id = "gpu-1x";
    w.state = core::WorkspaceState::kPlaced;
    w.node_name = kNode;
    w.pool = "gpu-h100";
    w.cpu_millis = 1000;
    w.memory_bytes = int64_t{1} << 30;
    w.gpu_indices = {gpu};
    w.gpu_uuids = {absl::StrCat("GPU-", kNode, "-", gpu)};
    w.hand_off = std::make_shared<const core::HandOff>(
        core::HandOff{{{gpu, w.gpu_uuids[0], "0000:18:00.0", "H100"}}, std::nullopt, std::nullopt, {}});
    w.created_at = absl::FromUnixSeconds(1'800'000'000);
    write.from = from;
    write.catalog_generation = generation_;
    return write;
  }

  WorkspaceWrite Pending(const std::string& id) {
    WorkspaceWrite write = PlaceOn(id, 0, {}, WorkspaceWrite::Kind::kSavePending);
    write.workspace.state = core::WorkspaceState::kPending;
    write.workspace.node_name.clear();
    write.workspace.pool.clear();
    write.workspace.gpu_indices.clear();
    write.workspace.gpu_uuids.clear();
    return write;
  }

  WorkspaceWrite Stop(const std::string& id) {
    WorkspaceWrite write;
    write.kind = WorkspaceWrite::Kind::kStop;
    write.workspace.id = id;
    return write;
  }

  store::WriteOutcome Write(WorkspaceWrite write) {
    return harness_->placement().Write(std::move(write));
  }

  std::optional<store::WorkspaceRow> Load(const std::string& id) {
    auto row = harness_->placement().LoadWorkspace(id);
    EXPECT_TRUE(row.ok()) << row.status();
    return row.ok() ? *row : std::nullopt;
  }

  std::unique_ptr<Harness> harness_;
  int64_t generation_ = 0;
};

TEST_P(StoreContractTest, APlacementIsStoredAsDecided) {
  store::WriteOutcome placed = Write(PlaceOn("w1", 3));
  ASSERT_TRUE(placed.status.ok()) << placed.status;
  std::optional<store::WorkspaceRow> row = Load("w1");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->version, placed.version);
  EXPECT_EQ(row->workspace.state, core::WorkspaceState::kPlaced);
  EXPECT_EQ(row->workspace.node_name, kNode);
  EXPECT_EQ(row->workspace.gpu_indices, std::vector<int>{3});
  EXPECT_FALSE(row->released);
}

TEST_P(StoreContractTest, AHeldGpuIsNeverHandedOutTwice) {
  ASSERT_TRUE(Write(PlaceOn("w1", 2)).status.ok());
  store::WriteOutcome second = Write(PlaceOn("w2", 2));
  EXPECT_EQ(second.status.code(), absl::StatusCode::kAborted) << second.status;
  EXPECT_FALSE(Load("w2").has_value()) << "a refused write leaves no row";
}

TEST_P(StoreContractTest, ADecisionMadeOnAnOlderRecordIsRefused) {
  store::WriteOutcome first = Write(PlaceOn("w1", 0));
  ASSERT_TRUE(first.status.ok()) << first.status;
  // Decided as if there were no record yet: another decision already won.
  EXPECT_EQ(Write(PlaceOn("w1", 1)).status.code(), absl::StatusCode::kAborted);
  // A restart is decided from the stopped record's version, not an older one.
  store::WriteOutcome stopped = Write(Stop("w1"));
  ASSERT_TRUE(stopped.status.ok()) << stopped.status;
  EXPECT_EQ(Write(PlaceOn("w1", 1, {first.version, false})).status.code(),
            absl::StatusCode::kAborted);
  EXPECT_TRUE(Write(PlaceOn("w1", 1, {stopped.version, false})).status.ok());
}

TEST_P(StoreContractTest, AStopFreesTheGpusAtOnceAndWinsOverAQueuePlacement) {
  store::WriteOutcome pending = Write(Pending("queued"));
  ASSERT_TRUE(pending.status.ok()) << pending.status;
  ASSERT_TRUE(Write(PlaceOn("w1", 4)).status.ok());
  ASSERT_TRUE(Write(Stop("w1")).status.ok());
  EXPECT_TRUE(Write(PlaceOn("w2", 4)).status.ok()) << "the stopped workspace's GPU is free";

  // The queue placement was decided from the pending record; a stop since
  // then bumped its version, so the placement must not land.
  store::WriteOutcome stop = Write(Stop("queued"));
  ASSERT_TRUE(stop.status.ok()) << stop.status;
  ASSERT_TRUE(stop.row.has_value());
  EXPECT_EQ(stop.row->workspace.state, core::WorkspaceState::kStopped);
  store::WriteOutcome late =
      Write(PlaceOn("queued", 5, {pending.version, true}, WorkspaceWrite::Kind::kQueuePlace));
  EXPECT_EQ(late.status.code(), absl::StatusCode::kAborted) << late.status;
  EXPECT_EQ(Load("queued")->workspace.state, core::WorkspaceState::kStopped);
}

TEST_P(StoreContractTest, ANodeNeverHoldsMoreThanItsAllocatableCpuAndMemory) {
  WorkspaceWrite big = PlaceOn("big", 0);
  big.workspace.cpu_millis = 100'000;  // Of the node's 128 cores.
  ASSERT_TRUE(Write(std::move(big)).status.ok());
  WorkspaceWrite more = PlaceOn("more", 1);
  more.workspace.cpu_millis = 30'000;  // 130 cores in all.
  EXPECT_EQ(Write(std::move(more)).status.code(), absl::StatusCode::kAborted);
  WorkspaceWrite fits = PlaceOn("fits", 1);
  fits.workspace.cpu_millis = 28'000;
  EXPECT_TRUE(Write(std::move(fits)).status.ok());
}

TEST_P(StoreContractTest, AStopThatNamesAVersionLandsOnlyOnThatRecord) {
  store::WriteOutcome first = Write(PlaceOn("w1", 0));
  ASSERT_TRUE(first.status.ok()) << first.status;
  // Stopped and placed again since the stop was decided (the idle policy's
  // stop of a workspace restarted meanwhile): refused, nothing changes.
  ASSERT_TRUE(Write(Stop("w1")).status.ok());
  std::optional<store::WorkspaceRow> stopped = Load("w1");
  ASSERT_TRUE(stopped.has_value());
  store::WriteOutcome again = Write(PlaceOn("w1", 1, {stopped->version}));
  ASSERT_TRUE(again.status.ok()) << again.status;
  WorkspaceWrite stale = Stop("w1");
  stale.from.version = first.version;
  stale.end_reason = core::EndReason::kIdle;
  EXPECT_EQ(Write(stale).status.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(Load("w1")->workspace.state, core::WorkspaceState::kPlaced);
  EXPECT_EQ(Load("w1")->version, again.version);
  // Named right, it stops; a stop that names none still always wins.
  WorkspaceWrite current = Stop("w1");
  current.from.version = again.version;
  current.end_reason = core::EndReason::kIdle;
  store::WriteOutcome done = Write(current);
  ASSERT_TRUE(done.status.ok()) << done.status;
  EXPECT_EQ(done.row->workspace.state, core::WorkspaceState::kStopped);
}

TEST_P(StoreContractTest, StoppingAWorkspaceThatDoesNotExistIsNotFound) {
  EXPECT_EQ(Write(Stop("nobody")).status.code(), absl::StatusCode::kNotFound);
}

TEST_P(StoreContractTest, ADecisionOnAnOlderCatalogIsRefused) {
  WorkspaceWrite write = PlaceOn("w1", 0);
  write.catalog_generation = generation_ - 1;
  EXPECT_EQ(Write(std::move(write)).status.code(), absl::StatusCode::kAborted);
}

TEST_P(StoreContractTest, TheStartUpLoadHoldsWhatIsActiveOnly) {
  ASSERT_TRUE(Write(PlaceOn("placed", 0)).status.ok());
  ASSERT_TRUE(Write(Pending("pending")).status.ok());
  ASSERT_TRUE(Write(PlaceOn("stopped", 1)).status.ok());
  ASSERT_TRUE(Write(Stop("stopped")).status.ok());
  auto all = harness_->state().LoadAll();
  ASSERT_TRUE(all.ok()) << all.status();
  std::vector<std::string> active;
  for (const store::WorkspaceRow& row : all->active) active.push_back(row.workspace.id);
  EXPECT_THAT(active, ::testing::UnorderedElementsAre("placed", "pending"));
  ASSERT_EQ(all->nodes.size(), 1u);
  EXPECT_EQ(all->nodes[0].info.name, kNode);
  EXPECT_EQ(all->catalog.classes.size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(BothStores, StoreContractTest,
                         ::testing::Values(Implementation::kFake, Implementation::kPostgres),
                         [](const ::testing::TestParamInfo<Implementation>& info) {
                           return info.param == Implementation::kFake ? "Fake" : "Postgres";
                         });

}  // namespace
}  // namespace wsched
