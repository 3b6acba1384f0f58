// The placement pipeline against an in-memory database with PostgreSQL's
// guards and a fake clock: lost races, stops racing queue placements, and
// negative answers that wait for the feed.
#include <set>
#include <variant>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/test_nodes.h"
#include "server/replica/fake_stores_test_util.h"
#include "server/scheduler/scheduler.h"

namespace wsched::pipeline {
namespace {

using placement::testing::FakeGpuNode;
using placement::testing::GpuClass;
using placement::testing::GpuPool;

core::Catalog OneGpuCatalog(int gpus_per_node) {
  core::Catalog catalog;
  core::WorkspaceClass cls = GpuClass("gpu-1x", 1);
  cls.is_default = true;
  catalog.classes = {cls};
  catalog.pools = {GpuPool("gpu-h100", "h100", gpus_per_node)};
  return catalog;
}

class PlacementPipelineTest : public ::testing::Test {
 protected:
  // Whatever the scenario, the mirror keeps its rules (replica_mirror.h).
  void TearDown() override {
    if (scheduler_ == nullptr) return;
    absl::Status kept = scheduler_->mirror().CheckInvariants();
    EXPECT_TRUE(kept.ok()) << kept;
  }

  void Start(int gpus_per_node = 8, scheduler::SchedulerOptions options = {}) {
    db_.SetCatalog(OneGpuCatalog(gpus_per_node));
    db_.AddNode(FakeGpuNode("g1", "gpu-h100", "h100", gpus_per_node));
    scheduler_ = std::make_unique<scheduler::Scheduler>(
        scheduler::SchedulerStores{nullptr, &db_, &db_, &db_}, &metrics_, options,
        [this] { return now_; });
    ASSERT_TRUE(scheduler_->CatchUp().ok());  // The first catch-up is the start-up load.
    ASSERT_EQ(db_.reloads, 1);
  }

  absl::StatusOr<WorkspaceView> Place(const std::string& id, const std::string& cls = "gpu-1x") {
    return scheduler_->pipeline().place().Place({id, "o", "p", "u", cls});
  }

  replica::testing::FakeDatabase db_;
  metrics::Metrics metrics_;
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  std::unique_ptr<scheduler::Scheduler> scheduler_;
};

TEST_F(PlacementPipelineTest, LostRaceCatchesUpWithTheFeedAndRetriesOnAnotherGpu) {
  Start();
  std::vector<int> taken;
  db_.before_commit = [&](const core::Workspace& w) {
    if (!taken.empty()) return;
    taken = w.gpu_indices;  // Another replica commits the same GPU first.
    db_.PlaceElsewhere("theirs", w.node_name, w.gpu_indices);
  };
  auto placed = Place("mine");
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->workspace.state, core::WorkspaceState::kPlaced);
  EXPECT_EQ(db_.commits, 2);
  ASSERT_EQ(placed->workspace.gpu_indices.size(), 1u);
  EXPECT_NE(placed->workspace.gpu_indices, taken);
  EXPECT_EQ(db_.HolderOf(absl::StrCat("GPU-g1-", taken[0])), "theirs");
  EXPECT_EQ(db_.HolderOf(placed->workspace.gpu_uuids[0]), "mine");
  EXPECT_EQ(db_.reloads, 1);  // Deltas, not a reload.
}

TEST_F(PlacementPipelineTest, StopWinsOverAQueuePlacementDecidedBeforeIt) {
  Start(/*gpus_per_node=*/1);
  ASSERT_EQ(Place("first")->workspace.state, core::WorkspaceState::kPlaced);
  auto queued = Place("queued");
  ASSERT_TRUE(queued.ok());
  ASSERT_EQ(queued->workspace.state, core::WorkspaceState::kPending);

  // The GPU frees; this replica's queue decides "queued" onto it, but
  // another replica stops "queued" before the commit lands.
  ASSERT_TRUE(scheduler_->pipeline().stops().StopWorkspace("first").ok());
  db_.before_commit = [&](const core::Workspace& w) {
    if (w.id == "queued") db_.StopElsewhere("queued");
  };
  scheduler_->pipeline().drain().Drain();
  EXPECT_EQ(db_.commits, 2);  // The queue placement was tried, and refused.
  EXPECT_EQ(db_.Row("queued").workspace.state, core::WorkspaceState::kStopped);
  EXPECT_EQ(db_.HolderOf("GPU-g1-0"), "");

  ASSERT_TRUE(scheduler_->CatchUp().ok());
  EXPECT_TRUE(scheduler_->mirror().View()->pending.empty());
  auto seen = scheduler_->pipeline().views().Get("queued");
  ASSERT_TRUE(seen.ok());
  EXPECT_EQ(seen->workspace.state, core::WorkspaceState::kStopped);
  // The GPU is free in this replica's snapshot too: the next one gets it.
  db_.before_commit = nullptr;
  EXPECT_EQ(Place("next")->workspace.state, core::WorkspaceState::kPlaced);
}

TEST_F(PlacementPipelineTest, AStoppedWorkspaceComesBackOnlyThroughAnExplicitPlace) {
  Start(/*gpus_per_node=*/1);
  ASSERT_EQ(Place("holder")->workspace.state, core::WorkspaceState::kPlaced);
  ASSERT_EQ(Place("waiting")->workspace.state, core::WorkspaceState::kPending);
  ASSERT_TRUE(scheduler_->pipeline().stops().StopWorkspace("waiting").ok());
  ASSERT_TRUE(scheduler_->pipeline().stops().StopWorkspace("holder").ok());
  scheduler_->pipeline().drain().Drain();  // Nothing is pending: the free GPU stays free.
  EXPECT_EQ(db_.Row("waiting").workspace.state, core::WorkspaceState::kStopped);
  EXPECT_EQ(db_.HolderOf("GPU-g1-0"), "");

  auto restarted = Place("waiting");
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  EXPECT_EQ(restarted->workspace.state, core::WorkspaceState::kPlaced);
  EXPECT_EQ(db_.HolderOf("GPU-g1-0"), "waiting");
}

TEST_F(PlacementPipelineTest, AClassAddedOnAnotherReplicaIsUsedAtOnce) {
  Start();
  core::Catalog catalog = OneGpuCatalog(8);
  catalog.classes.push_back(GpuClass("gpu-2x", 2));
  db_.SetCatalog(catalog);  // Not applied here yet: no follower thread runs.
  auto placed = Place("two", "gpu-2x");
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->workspace.gpu_indices.size(), 2u);
  // An unknown class is refused, after catching up.
  EXPECT_TRUE(absl::IsNotFound(Place("x", "no-such-class").status()));
}

TEST_F(PlacementPipelineTest, QueuesOnlyAfterCatchingUpWithNodesAddedElsewhere) {
  Start(/*gpus_per_node=*/1);
  ASSERT_EQ(Place("a")->workspace.node_name, "g1");
  db_.AddNode(FakeGpuNode("g2", "gpu-h100", "h100", 1));  // Registered on another replica.
  auto placed = Place("b");
  ASSERT_TRUE(placed.ok());
  EXPECT_EQ(placed->workspace.state, core::WorkspaceState::kPlaced);
  EXPECT_EQ(placed->workspace.node_name, "g2");
  // Full now, and confirmed so: pending, with this replica's picture current.
  auto pending = Place("c");
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(pending->workspace.state, core::WorkspaceState::kPending);
  EXPECT_EQ(pending->queue_position, 1);
}

TEST_F(PlacementPipelineTest, RepeatingAPlacementAnswersTheSameWithoutANewCommit) {
  Start();
  auto first = Place("same");
  ASSERT_TRUE(first.ok());
  auto again = Place("same");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->workspace.gpu_indices, first->workspace.gpu_indices);
  EXPECT_EQ(again->version, first->version);
  EXPECT_EQ(db_.commits, 1);
}

// Every per-workspace structure holds exactly the live workspaces.
void ExpectTracksOnly(const scheduler::Scheduler& scheduler, size_t live, size_t pending, size_t holds) {
  const replica::TrackedWorkspaces tracked = scheduler.mirror().View()->tracked;
  EXPECT_EQ(tracked.live, live);
  EXPECT_EQ(tracked.classes, live);
  EXPECT_EQ(tracked.pending, pending);
  EXPECT_EQ(tracked.holds, holds);
  EXPECT_EQ(tracked.tentative, 0u);
}

TEST_F(PlacementPipelineTest, MemoryReturnsToTheLiveWorkspacesAfterManyPlaceStopCycles) {
  scheduler::SchedulerOptions options;
  options.ended_window = {absl::Seconds(10), 50};
  Start(/*gpus_per_node=*/2, options);
  ASSERT_EQ(Place("stays")->workspace.state, core::WorkspaceState::kPlaced);
  for (int i = 0; i < 300; ++i) {
    const std::string id = absl::StrCat("cycle-", i);
    auto placed = Place(id);
    ASSERT_TRUE(placed.ok()) << placed.status();
    ASSERT_EQ(placed->workspace.state, core::WorkspaceState::kPlaced);
    ASSERT_TRUE(scheduler_->pipeline().stops().StopWorkspace(id).ok());
    // The feed brings this replica's own entries, 25 cycles' worth each time.
    if (i % 25 == 24) {
      ASSERT_TRUE(scheduler_->CatchUp().ok());
    }
  }
  ASSERT_TRUE(scheduler_->CatchUp().ok());
  ExpectTracksOnly(*scheduler_, /*live=*/1, /*pending=*/0, /*holds=*/1);
  EXPECT_EQ(scheduler_->mirror().View()->tracked.recently_ended, 50u);  // The window's cap.
  // Every entry came while its workspace was still in the window: no reads.
  EXPECT_EQ(db_.workspace_rows_read, 0);
}

TEST_F(PlacementPipelineTest, TheFeedsLateEntriesForRecentlyStoppedWorkspacesCostNoRead) {
  Start();
  for (int i = 0; i < 20; ++i) {
    const std::string id = absl::StrCat("w", i);
    ASSERT_EQ(Place(id)->workspace.state, core::WorkspaceState::kPlaced);
    ASSERT_TRUE(scheduler_->pipeline().stops().StopWorkspace(id).ok());
  }
  ASSERT_TRUE(scheduler_->CatchUp().ok());  // 40 entries of this replica's own.
  EXPECT_EQ(db_.workspace_rows_read, 0);
  ExpectTracksOnly(*scheduler_, 0, 0, 0);
  EXPECT_EQ(scheduler_->mirror().View()->tracked.recently_ended, 20u);
  // A stop seen later than the window only expires the old versions.
  now_ += absl::Seconds(11);
  ASSERT_EQ(Place("late")->workspace.state, core::WorkspaceState::kPlaced);
  ASSERT_TRUE(scheduler_->pipeline().stops().StopWorkspace("late").ok());
  EXPECT_EQ(scheduler_->mirror().View()->tracked.recently_ended, 1u);
}

TEST_F(PlacementPipelineTest, StoppedPendingWorkspacesLeaveTheQueueAndMemory) {
  Start(/*gpus_per_node=*/1);
  ASSERT_EQ(Place("holder")->workspace.state, core::WorkspaceState::kPlaced);
  for (int i = 0; i < 30; ++i) {
    ASSERT_EQ(Place(absl::StrCat("waits-", i))->workspace.state, core::WorkspaceState::kPending);
  }
  ExpectTracksOnly(*scheduler_, 31, 30, 1);
  for (int i = 0; i < 30; ++i) ASSERT_TRUE(scheduler_->pipeline().stops().StopWorkspace(absl::StrCat("waits-", i)).ok());
  ExpectTracksOnly(*scheduler_, 1, 0, 1);
}

TEST_F(PlacementPipelineTest, LostWorkspacesStayTrackedWhileTheyHoldAndLeaveWithTheirNode) {
  Start(/*gpus_per_node=*/8);
  for (int i = 0; i < 8; ++i) ASSERT_EQ(Place(absl::StrCat("w", i))->workspace.node_name, "g1");
  db_.LoseNode("g1");
  ASSERT_TRUE(scheduler_->CatchUp().ok());
  // Lost but holding: still the replica's to account for.
  ExpectTracksOnly(*scheduler_, 8, 0, 8);
  EXPECT_EQ(scheduler_->pipeline().views().Get("w0")->workspace.state, core::WorkspaceState::kLost);

  db_.RemoveNode("g1");
  ASSERT_TRUE(scheduler_->CatchUp().ok());
  ExpectTracksOnly(*scheduler_, 0, 0, 0);
  EXPECT_EQ(scheduler_->mirror().View()->tracked.recently_ended, 8u);
}

TEST_F(PlacementPipelineTest, AWorkspaceStoppedBeforeTheWindowRestartsAfterOneRefusedInsert) {
  scheduler::SchedulerOptions options;
  options.ended_window = {absl::Seconds(10), 1};
  Start(/*gpus_per_node=*/1, options);
  ASSERT_EQ(Place("old")->workspace.state, core::WorkspaceState::kPlaced);
  ASSERT_TRUE(scheduler_->pipeline().stops().StopWorkspace("old").ok());
  ASSERT_EQ(Place("pushes-it-out")->workspace.state, core::WorkspaceState::kPlaced);
  ASSERT_TRUE(scheduler_->pipeline().stops().StopWorkspace("pushes-it-out").ok());
  ASSERT_EQ(scheduler_->mirror().View()->tracked.recently_ended, 1u);
  // Unknown here, so the hot path tries it as new; the store's guard says
  // it exists, and the next attempt restarts it from its stored record.
  auto restarted = Place("old");
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  EXPECT_EQ(restarted->workspace.state, core::WorkspaceState::kPlaced);
  EXPECT_EQ(db_.HolderOf("GPU-g1-0"), "old");
  ExpectTracksOnly(*scheduler_, 1, 0, 1);
}

TEST_F(PlacementPipelineTest, AWatcherReadsTheDatabaseOnlyWhenTheWorkspaceChanged) {
  Start();
  ASSERT_EQ(Place("w")->workspace.state, core::WorkspaceState::kPlaced);
  absl::StatusOr<WorkspaceView> first = scheduler_->pipeline().views().Refresh("w", nullptr);
  ASSERT_TRUE(first.ok()) << first.status();
  const int loads = db_.workspace_loads;
  for (int i = 0; i < 10; ++i) {  // Ten wake-ups of a watch with nothing new.
    absl::StatusOr<WorkspaceView> again = scheduler_->pipeline().views().Refresh("w", &*first);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->version, first->version);
    EXPECT_EQ(again->workspace.state, core::WorkspaceState::kPlaced);
  }
  EXPECT_EQ(db_.workspace_loads, loads);

  ASSERT_TRUE(scheduler_->pipeline().stops().StopWorkspace("w").ok());
  const int before = db_.workspace_loads;
  absl::StatusOr<WorkspaceView> stopped = scheduler_->pipeline().views().Refresh("w", &*first);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_EQ(stopped->workspace.state, core::WorkspaceState::kStopped);
  EXPECT_GT(stopped->version, first->version);
  EXPECT_EQ(db_.workspace_loads, before + 1) << "a newer version is read once";
}

TEST_F(PlacementPipelineTest, ADrainCommitsTheQueuePlacementsItDecidesTogether) {
  Start(/*gpus_per_node=*/1);
  ASSERT_EQ(Place("first")->workspace.state, core::WorkspaceState::kPlaced);
  for (int i = 0; i < 6; ++i) {
    ASSERT_EQ(Place(absl::StrCat("q", i))->workspace.state, core::WorkspaceState::kPending);
  }
  // An 8-GPU node arrives: the drain decides all six, each on what the
  // ones before it left, and commits them in one call.
  db_.write_all_sizes.clear();
  db_.AddNode(FakeGpuNode("g2", "gpu-h100", "h100", 8));
  ASSERT_TRUE(scheduler_->CatchUp().ok());
  scheduler_->pipeline().drain().Drain();  // Whether or not catching up drained already.
  EXPECT_THAT(db_.write_all_sizes, ::testing::ElementsAre(6u));
  std::set<int> gpus;
  for (int i = 0; i < 6; ++i) {
    const store::WorkspaceRow row = db_.Row(absl::StrCat("q", i));
    EXPECT_EQ(row.workspace.state, core::WorkspaceState::kPlaced) << "q" << i;
    EXPECT_EQ(row.workspace.node_name, "g2");
    ASSERT_EQ(row.workspace.gpu_indices.size(), 1u);
    gpus.insert(row.workspace.gpu_indices[0]);
  }
  EXPECT_EQ(gpus.size(), 6u) << "each decision saw the holds of the ones before it";
  ExpectTracksOnly(*scheduler_, 7, 0, 7);
}

TEST_F(PlacementPipelineTest, ADrainAfterAStopTriesOnlyTheWorkThatMayUseThatPool) {
  // Two pools that share no class: a stop on the CPU pool must not make
  // the drain re-decide the GPU queue (while half the fleet is lost, that
  // queue is long and nothing in it can move).
  core::Catalog catalog = OneGpuCatalog(1);
  catalog.classes.push_back(placement::testing::CpuClass("cpu-small"));
  catalog.pools.push_back(placement::testing::CpuPool("cpu"));
  db_.SetCatalog(catalog);
  db_.AddNode(FakeGpuNode("g1", "gpu-h100", "h100", 1));
  db_.AddNode(placement::testing::FakeCpuNode("c1", "cpu"));
  scheduler_ = std::make_unique<scheduler::Scheduler>(
      scheduler::SchedulerStores{nullptr, &db_, &db_, &db_}, &metrics_,
      scheduler::SchedulerOptions{}, [this] { return now_; });
  ASSERT_TRUE(scheduler_->CatchUp().ok());
  ASSERT_EQ(Place("gpu-holder")->workspace.state, core::WorkspaceState::kPlaced);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(Place(absl::StrCat("gpu-q", i))->workspace.state, core::WorkspaceState::kPending);
  }
  ASSERT_EQ(Place("cpu-w", "cpu-small")->workspace.state, core::WorkspaceState::kPlaced);
  scheduler_->pipeline().drain().Drain(QueueDrain::Scope::kEverything);  // Settles what start-up noted.
  const int64_t settled = scheduler_->pipeline().drain().Decisions();
  // One decision: the first found no room, so its class's others are not
  // decided again in that pass (placement/queue_pass.h).
  EXPECT_EQ(settled, 1);

  ASSERT_TRUE(scheduler_->pipeline().stops().StopWorkspace("cpu-w").ok());
  scheduler_->pipeline().drain().Drain(QueueDrain::Scope::kWhatChanged);
  EXPECT_EQ(scheduler_->pipeline().drain().Decisions(), settled) << "a CPU stop tried the GPU queue";

  // The GPU frees: the first is placed, the second finds no room, the
  // third is not decided.
  ASSERT_TRUE(scheduler_->pipeline().stops().StopWorkspace("gpu-holder").ok());
  scheduler_->pipeline().drain().Drain(QueueDrain::Scope::kWhatChanged);
  EXPECT_EQ(scheduler_->pipeline().drain().Decisions(), settled + 2);
  EXPECT_EQ(db_.Row("gpu-q0").workspace.state, core::WorkspaceState::kPlaced);
  EXPECT_EQ(db_.Row("gpu-q1").workspace.state, core::WorkspaceState::kPending);

  // The refresh drains everything whatever changed.
  scheduler_->pipeline().drain().Drain(QueueDrain::Scope::kEverything);
  EXPECT_EQ(scheduler_->pipeline().drain().Decisions(), settled + 3);
}

// The workspace's own limits (placement/pending_reason.h: quota, then
// policy) are judged by the settings as stored now, read through the
// store seam: a change made on another replica shows in the next answer.
TEST_F(PlacementPipelineTest, APendingWorkspaceOverItsOrgsQuotaSaysSo) {
  Start(/*gpus_per_node=*/1);
  ASSERT_EQ(Place("holder")->workspace.state, core::WorkspaceState::kPlaced);
  ASSERT_EQ(Place("waiting")->workspace.state, core::WorkspaceState::kPending);
  core::OrgSettings org;
  org.org_id = "o";
  org.gpu_quota = 1;
  db_.SetOrgSettings(org);

  auto view = scheduler_->pipeline().views().Get("waiting");
  ASSERT_TRUE(view.ok()) << view.status();
  ASSERT_TRUE(view->pending.has_value());
  EXPECT_EQ(view->pending->code, placement::PendingCode::kOrgGpuQuota);
  EXPECT_EQ(view->pending->quota.held_sevenths, core::kMigComputeSlices);
  EXPECT_EQ(view->pending->quota.quota, 1);
  EXPECT_EQ(view->workspace.pending_reason, view->pending->detail);

  // A new request over the quota is refused, not queued.
  auto refused = Place("over");
  EXPECT_TRUE(absl::IsResourceExhausted(refused.status())) << refused.status();
  EXPECT_EQ(db_.Row("over").version, 0) << "a refused request wrote a record";
}

TEST_F(PlacementPipelineTest, APendingWorkspaceWhoseClassTheProjectDeniedStaysQueuedAndSaysSo) {
  Start(/*gpus_per_node=*/1);
  ASSERT_EQ(Place("holder")->workspace.state, core::WorkspaceState::kPlaced);
  ASSERT_EQ(Place("waiting")->workspace.state, core::WorkspaceState::kPending);
  core::ProjectSettings denied;
  denied.project_id = "p";
  denied.org_id = "o";
  denied.denied_classes = {"gpu-1x"};
  db_.SetProjectSettings(denied);

  auto view = scheduler_->pipeline().views().Get("waiting");
  ASSERT_TRUE(view.ok()) << view.status();
  ASSERT_TRUE(view->pending.has_value());
  EXPECT_EQ(view->pending->code, placement::PendingCode::kClassPolicy);
  EXPECT_THAT(view->pending->detail, ::testing::HasSubstr("gpu-1x"));

  // The GPU frees, but the queue keeps the denied class off it...
  ASSERT_TRUE(scheduler_->pipeline().stops().StopWorkspace("holder").ok());
  ASSERT_TRUE(scheduler_->CatchUp().ok());  // The settings entry reaches this replica.
  scheduler_->pipeline().drain().Drain();
  EXPECT_EQ(db_.Row("waiting").workspace.state, core::WorkspaceState::kPending);

  // ...until the project allows it again.
  denied.denied_classes.clear();
  db_.SetProjectSettings(denied);
  ASSERT_TRUE(scheduler_->CatchUp().ok());
  scheduler_->pipeline().drain().Drain();
  EXPECT_EQ(db_.Row("waiting").workspace.state, core::WorkspaceState::kPlaced);
}

// A slice class end to end through the pipeline: one H200 cut into seven
// 1g slices, each with its capability nodes.
class SlicePipelineTest : public PlacementPipelineTest {
 protected:
  void StartSliced() {
    core::Catalog catalog;
    catalog.classes = {placement::testing::SliceClass("mig-1g", {"1g.18gb"})};
    catalog.pools = {GpuPool("gpu-h200", "h200", 1)};
    catalog.pools[0].max_size = 1;  // No scale-up: a waiting workspace waits for a slice.
    db_.SetCatalog(catalog);
    core::NodeInfo node = FakeGpuNode("m1", "gpu-h200", "NVIDIA H200", 1);
    placement::testing::LayOutSlices(node, std::vector<std::string>(7, "1g.18gb"));
    for (core::MigInstance& slice : node.gpus[0].mig->instances) {
      slice.gi_access =
          core::DeviceNode{absl::StrCat("/dev/nvidia-caps/nvidia-cap", slice.gpu_instance * 2), 'c',
                           235, slice.gpu_instance * 2, "r"};
      slice.ci_access =
          core::DeviceNode{absl::StrCat("/dev/nvidia-caps/nvidia-cap", slice.gpu_instance * 2 + 1),
                           'c', 235, slice.gpu_instance * 2 + 1, "r"};
    }
    db_.AddNode(node);
    scheduler_ = std::make_unique<scheduler::Scheduler>(
        scheduler::SchedulerStores{nullptr, &db_, &db_, &db_}, &metrics_,
        scheduler::SchedulerOptions{}, [this] { return now_; });
    ASSERT_TRUE(scheduler_->CatchUp().ok());
  }
};

TEST_F(SlicePipelineTest, EachWorkspaceGetsItsOwnSliceNamedInItsAnswerAndAFreedOneIsTakenAgain) {
  StartSliced();
  std::set<std::string> uuids;
  for (int i = 0; i < 7; ++i) {
    auto placed = Place(absl::StrCat("s", i), "mig-1g");
    ASSERT_TRUE(placed.ok()) << placed.status();
    const core::Workspace& w = placed->workspace;
    ASSERT_EQ(w.state, core::WorkspaceState::kPlaced) << w.pending_reason;
    ASSERT_TRUE(w.slice.has_value());
    EXPECT_TRUE(w.gpu_indices.empty());
    EXPECT_EQ(w.slice->compute_slices, 1);
    EXPECT_TRUE(uuids.insert(w.slice->uuid).second) << w.slice->uuid << " handed out twice";
    EXPECT_EQ(db_.HolderOf(w.slice->uuid), w.id);
    ASSERT_TRUE(w.hand_off && w.hand_off->slice && w.hand_off->cdi);
    EXPECT_EQ(w.hand_off->slice->uuid, w.slice->uuid);
    EXPECT_EQ(w.hand_off->slice->profile, "1g.18gb");
    EXPECT_EQ(w.hand_off->slice->parent.index, 0);
    EXPECT_THAT(w.hand_off->cdi->device_names,
                ::testing::ElementsAre(absl::StrCat("nvidia.com/gpu=", w.slice->uuid)));
  }
  auto waiting = Place("s7", "mig-1g");
  ASSERT_TRUE(waiting.ok()) << waiting.status();
  EXPECT_EQ(waiting->workspace.state, core::WorkspaceState::kPending);
  EXPECT_THAT(waiting->workspace.pending_reason, ::testing::HasSubstr("1g.18gb"));

  const std::string freed = db_.Row("s3").workspace.slice->uuid;
  ASSERT_TRUE(scheduler_->pipeline().stops().StopWorkspace("s3").ok());
  EXPECT_EQ(db_.HolderOf(freed), "");
  scheduler_->pipeline().drain().Drain();
  EXPECT_EQ(db_.Row("s7").workspace.state, core::WorkspaceState::kPlaced);
  EXPECT_EQ(db_.HolderOf(freed), "s7");
}

TEST_F(SlicePipelineTest, AnotherReplicasSliceWinsAndThisOneTakesTheNext) {
  StartSliced();
  std::string taken;
  db_.before_commit = [&](const core::Workspace& w) {
    if (!taken.empty() || !w.slice) return;
    taken = w.slice->uuid;
    core::Workspace theirs = w;
    theirs.id = "theirs";
    db_.PlaceElsewhere(theirs);
  };
  auto placed = Place("mine", "mig-1g");
  ASSERT_TRUE(placed.ok()) << placed.status();
  ASSERT_EQ(placed->workspace.state, core::WorkspaceState::kPlaced);
  EXPECT_NE(placed->workspace.slice->uuid, taken);
  EXPECT_EQ(db_.HolderOf(taken), "theirs");
  EXPECT_EQ(db_.HolderOf(placed->workspace.slice->uuid), "mine");
}

}  // namespace
}  // namespace wsched::pipeline
