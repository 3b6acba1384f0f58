// Slices of MIG GPUs through the snapshot and the decision: holds, the
// index, the choice of node and GPU, and every arrival order of a mixed
// workload.
#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/decide.h"
#include "server/placement/slice_choice.h"
#include "server/placement/test_nodes.h"

namespace wsched::placement {
namespace {

using ::testing::HasSubstr;
using testing::FakeGpuNode;
using testing::GpuClass;
using testing::GpuPool;
using testing::LayOutSlices;
using testing::SliceClass;

constexpr auto kReady = core::NodeState::kReady;
constexpr auto kDriverReady = core::DriverState::kReady;
const std::vector<std::string> kSevenSmall(7, "1g.18gb");

class SlicePlacementTest : public ::testing::Test {
 protected:
  core::NodeInfo AddNode(const std::string& name, const std::vector<std::string>& layout,
                         int gpus = 8) {
    core::NodeInfo node = FakeGpuNode(name, "gpu-h200", "h200", gpus);
    LayOutSlices(node, layout);
    EXPECT_TRUE(snapshot_.UpsertNode(node, kReady, kDriverReady).ok());
    return node;
  }

  Decision Run(const core::WorkspaceClass& cls) { return Decide(cls, pools_, snapshot_); }

  // Decides and holds; the Placed answer, or nullopt when it did not place.
  std::optional<Placed> PlaceAndHold(const core::WorkspaceClass& cls, const std::string& id) {
    Decision decision = Run(cls);
    const Placed* placed = std::get_if<Placed>(&decision);
    if (placed == nullptr) return std::nullopt;
    absl::Status held =
        placed->slice ? snapshot_.HoldSlice(id, placed->node, *placed->slice, placed->resources)
                      : snapshot_.Hold(id, placed->node, placed->gpu_indices, placed->resources);
    EXPECT_TRUE(held.ok()) << held;
    return *placed;
  }

  const core::MigInstance& SliceOf(const Placed& placed) {
    const SnapshotNode* node = snapshot_.FindNode(placed.node);
    const core::Gpu& gpu = node->info.gpus[node->PositionOf(placed.slice->gpu_index)];
    for (const core::MigInstance& slice : gpu.mig->instances) {
      if (slice.gpu_instance == placed.slice->gpu_instance) return slice;
    }
    ADD_FAILURE() << "no such slice";
    return gpu.mig->instances.front();
  }

  std::vector<core::NodePool> pools_ = {GpuPool("gpu-h200", "h200")};
  Snapshot snapshot_;
};

TEST_F(SlicePlacementTest, ASliceIsHeldOnceAndFreedOnRelease) {
  AddNode("a", kSevenSmall, 1);
  const Resources one{1000, 1000, 0, 0};
  ASSERT_TRUE(snapshot_.HoldSlice("w1", "a", {0, 3}, one).ok());
  EXPECT_TRUE(snapshot_.HoldSlice("w1", "a", {0, 3}, one).ok()) << "the same hold again is a no-op";
  absl::Status twice = snapshot_.HoldSlice("w2", "a", {0, 3}, one);
  EXPECT_EQ(twice.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(twice.message(), HasSubstr("slice gi3 of GPU 0 on node a is held by workspace w1"));
  EXPECT_EQ(snapshot_.HoldSlice("w2", "a", {0, 9}, one).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(snapshot_.HoldSlice("w2", "a", {5, 1}, one).code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(snapshot_.HoldSlice("w1", "a", {0, 4}, one).message(),
              HasSubstr("already holds slice gi3 of GPU 0"));
  EXPECT_EQ(snapshot_.ReadySlices("gpu-h200")->TotalFree("1g.18gb"), 6);
  EXPECT_TRUE(snapshot_.CheckInvariants().ok()) << snapshot_.CheckInvariants();

  ASSERT_TRUE(snapshot_.Release("w1").has_value());
  EXPECT_EQ(snapshot_.ReadySlices("gpu-h200")->TotalFree("1g.18gb"), 7);
  EXPECT_TRUE(snapshot_.HoldSlice("w2", "a", {0, 3}, one).ok());
}

TEST_F(SlicePlacementTest, HoldsSurviveTheNodeReportingAgain) {
  core::NodeInfo node = AddNode("a", kSevenSmall, 1);
  ASSERT_TRUE(snapshot_.HoldSlice("w1", "a", {0, 2}, {}).ok());
  node.gpus[0].mig->instances[0].ci_access = std::nullopt;  // Any change of its report.
  node.driver_version = "560.35.03";
  ASSERT_TRUE(snapshot_.UpsertNode(node, kReady, kDriverReady).ok());
  EXPECT_EQ(snapshot_.FindNode("a")->gpus[0].slice_holders[1], "w1");
  EXPECT_EQ(snapshot_.ReadySlices("gpu-h200")->TotalFree("1g.18gb"), 6);
  EXPECT_TRUE(snapshot_.CheckInvariants().ok()) << snapshot_.CheckInvariants();
}

TEST_F(SlicePlacementTest, DensityIsSlicesPerNode) {
  AddNode("a", kSevenSmall);
  const core::WorkspaceClass cls = SliceClass("small", {"1g.18gb"});
  int placed = 0;
  while (PlaceAndHold(cls, absl::StrCat("w", placed)).has_value()) ++placed;
  EXPECT_EQ(placed, 56) << "8 GPUs of 7 slices";
  EXPECT_TRUE(std::holds_alternative<NotNow>(Run(cls)));
  EXPECT_TRUE(snapshot_.CheckInvariants().ok()) << snapshot_.CheckInvariants();
}

TEST_F(SlicePlacementTest, FillsAPartlyUsedGpuAndNodeBeforeTouchingAnother) {
  AddNode("a", kSevenSmall);
  AddNode("b", kSevenSmall);
  const core::WorkspaceClass cls = SliceClass("small", {"1g.18gb"});
  std::map<std::pair<std::string, int>, int> per_gpu;
  for (int i = 0; i < 9; ++i) {
    std::optional<Placed> placed = PlaceAndHold(cls, absl::StrCat("w", i));
    ASSERT_TRUE(placed.has_value());
    ++per_gpu[{placed->node, placed->slice->gpu_index}];
  }
  // Seven on the first GPU touched, two on the next, all on one node.
  ASSERT_EQ(per_gpu.size(), 2u);
  EXPECT_EQ(per_gpu.begin()->first.first, std::next(per_gpu.begin())->first.first);
  std::vector<int> counts;
  for (const auto& [gpu, count] : per_gpu) counts.push_back(count);
  std::sort(counts.begin(), counts.end());
  EXPECT_EQ(counts, (std::vector<int>{2, 7}));
}

TEST_F(SlicePlacementTest, ProfilesAreTriedInTheClasssOrder) {
  AddNode("a", {"3g.71gb", "2g.35gb", "1g.18gb", "1g.18gb"}, 1);
  const core::WorkspaceClass cls = SliceClass("mid", {"3g.71gb", "1g.18gb"});
  std::optional<Placed> first = PlaceAndHold(cls, "w1");
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(SliceOf(*first).profile, "3g.71gb");
  std::optional<Placed> second = PlaceAndHold(cls, "w2");
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(SliceOf(*second).profile, "1g.18gb") << "the fallback once no 3g is free";
  EXPECT_EQ(second->slice->gpu_instance, 3);
  ASSERT_TRUE(PlaceAndHold(cls, "w3").has_value());
  EXPECT_FALSE(PlaceAndHold(cls, "w4").has_value()) << "the 2g is not in the class's list";
}

TEST_F(SlicePlacementTest, OnlyUsableSlicesAreHandedOut) {
  core::NodeInfo node = FakeGpuNode("a", "gpu-h200", "h200", 2);
  LayOutSlices(node, {"1g.18gb", "1g.18gb"});
  node.gpus[0].mig->instances[0].compute_instance = -1;  // No compute instance spans it.
  node.gpus[0].mig->instances[1].uuid.clear();           // Nothing to name it by.
  node.gpus[1].healthy = false;
  ASSERT_TRUE(snapshot_.UpsertNode(node, kReady, kDriverReady).ok());
  EXPECT_TRUE(std::holds_alternative<NotNow>(Run(SliceClass("small", {"1g.18gb"}))));
  EXPECT_EQ(snapshot_.ReadySlices("gpu-h200")->TotalFree("1g.18gb"), 0);

  node.gpus[1].healthy = true;
  ASSERT_TRUE(snapshot_.UpsertNode(node, core::NodeState::kDraining, kDriverReady).ok());
  EXPECT_TRUE(std::holds_alternative<NotNow>(Run(SliceClass("small", {"1g.18gb"}))))
      << "a node that takes no work offers no slice";
  ASSERT_TRUE(snapshot_.UpsertNode(node, kReady, kDriverReady).ok());
  std::optional<Placed> placed = PlaceAndHold(SliceClass("small", {"1g.18gb"}), "w1");
  ASSERT_TRUE(placed.has_value());
  EXPECT_EQ(placed->slice->gpu_index, 1);
}

TEST_F(SlicePlacementTest, WholeGpusAndSlicesNeverMix) {
  core::NodeInfo whole = FakeGpuNode("whole", "gpu-h200", "h200", 1);
  ASSERT_TRUE(snapshot_.UpsertNode(whole, kReady, kDriverReady).ok());
  AddNode("sliced", kSevenSmall, 1);
  std::optional<Placed> gpu = PlaceAndHold(GpuClass("one", 1, {"h200"}), "w1");
  ASSERT_TRUE(gpu.has_value());
  EXPECT_EQ(gpu->node, "whole") << "a GPU in MIG mode is never handed out whole";
  EXPECT_FALSE(PlaceAndHold(GpuClass("one", 1, {"h200"}), "w2").has_value());
  std::optional<Placed> slice = PlaceAndHold(SliceClass("small", {"1g.18gb"}), "w3");
  ASSERT_TRUE(slice.has_value());
  EXPECT_EQ(slice->node, "sliced");
  absl::Status whole_beside_slice = snapshot_.Hold("w4", "sliced", {0}, {});
  EXPECT_EQ(whole_beside_slice.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(whole_beside_slice.message(),
              HasSubstr("GPU 0 on node sliced has a slice held by w3"));
}

TEST_F(SlicePlacementTest, AModelWithoutTheProfileIsNeverAPlace) {
  pools_ = {GpuPool("gpu-h100", "h100")};
  Decision decision = Run(SliceClass("small", {"1g.18gb"}, {"h100"}));
  ASSERT_TRUE(std::holds_alternative<Never>(decision));
  EXPECT_THAT(std::get<Never>(decision).reason,
              HasSubstr("gpu_model \"h100\" has no MIG profile of [1g.18gb]"));
}

// Every arrival order of a mixed workload on two mixed GPUs, with the first
// workspace leaving midway: never a slice held twice (HoldSlice refuses, the
// invariants hold), never a profile the class did not ask for, and a
// workspace waits only when no slice of any of its profiles is free.
TEST_F(SlicePlacementTest, EveryArrivalOrderHoldsEachSliceOnce) {
  const std::vector<std::string> layout = {"3g.71gb", "2g.35gb", "1g.18gb", "1g.18gb"};
  const std::vector<core::WorkspaceClass> classes = {SliceClass("big", {"3g.71gb"}),
                                                     SliceClass("mid", {"2g.35gb", "1g.18gb"}),
                                                     SliceClass("small", {"1g.18gb"})};
  std::vector<int> arrivals = {0, 0, 0, 1, 1, 1, 2, 2, 2};
  int orders = 0, waited = 0;
  do {
    snapshot_ = Snapshot();
    AddNode("a", layout, 2);
    for (size_t i = 0; i < arrivals.size(); ++i) {
      const core::WorkspaceClass& cls = classes[arrivals[i]];
      std::optional<Placed> got = PlaceAndHold(cls, absl::StrCat("w", i));
      if (got) {
        const std::string& profile = SliceOf(*got).profile;
        EXPECT_NE(std::find(cls.gpu.mig_profiles.begin(), cls.gpu.mig_profiles.end(), profile),
                  cls.gpu.mig_profiles.end());
      } else {
        ++waited;
        for (const std::string& profile : cls.gpu.mig_profiles) {
          ASSERT_EQ(snapshot_.ReadySlices("gpu-h200")->TotalFree(profile), 0) << profile;
        }
      }
      if (i == 4) snapshot_.Release("w0");
    }
    ASSERT_TRUE(snapshot_.CheckInvariants().ok()) << snapshot_.CheckInvariants();
    ++orders;
  } while (std::next_permutation(arrivals.begin(), arrivals.end()));
  EXPECT_EQ(orders, 1680);
  EXPECT_GT(waited, 0) << "nine workspaces for eight slices and one departure: some orders wait";
}

TEST(ChooseHeldSliceTest, TheGpuWithTheFewestFreeSlicesFirst) {
  core::NodeInfo info = FakeGpuNode("a", "gpu-h200", "h200", 3);
  LayOutSlices(info, kSevenSmall);
  Snapshot snapshot;
  ASSERT_TRUE(snapshot.UpsertNode(info, kReady, kDriverReady).ok());
  ASSERT_TRUE(snapshot.HoldSlice("w1", "a", {2, 1}, {}).ok());
  ASSERT_TRUE(snapshot.HoldSlice("w2", "a", {1, 4}, {}).ok());
  ASSERT_TRUE(snapshot.HoldSlice("w3", "a", {1, 5}, {}).ok());
  std::optional<HeldSlice> chosen = ChooseHeldSlice(*snapshot.FindNode("a"), "1g.18gb");
  ASSERT_TRUE(chosen.has_value());
  EXPECT_EQ(*chosen, (HeldSlice{1, 1}));
  EXPECT_FALSE(ChooseHeldSlice(*snapshot.FindNode("a"), "2g.35gb").has_value());
}

}  // namespace
}  // namespace wsched::placement
