#include "server/scaling/slice_demand.h"

#include "gtest/gtest.h"
#include "server/placement/test_nodes.h"

namespace wsched::scaling {
namespace {

using placement::testing::GpuPool;
using placement::testing::SliceClass;

core::NodePool H200Pool(core::MigLayoutKind kind, std::vector<std::string> profiles = {}) {
  core::NodePool pool = GpuPool("h200", "H200", 8);
  pool.mig = {kind, std::move(profiles)};
  return pool;
}

TEST(SlicesPerGpu, AFixedLayoutsSlicesOfTheClasssProfiles) {
  const core::NodePool pool =
      H200Pool(core::MigLayoutKind::kFixed, {"3g.71gb", "2g.35gb", "1g.18gb", "1g.18gb"});
  EXPECT_EQ(SlicesPerGpu(pool, SliceClass("s", {"1g.18gb"})), 2);
  EXPECT_EQ(SlicesPerGpu(pool, SliceClass("s", {"3g.71gb", "2g.35gb"})), 2);
  EXPECT_EQ(SlicesPerGpu(pool, SliceClass("s", {"4g.71gb"})), 0);
}

TEST(SlicesPerGpu, ByDemandTheMostOfTheFirstProfileOneGpuHolds) {
  const core::NodePool pool = H200Pool(core::MigLayoutKind::kByDemand);
  EXPECT_EQ(SlicesPerGpu(pool, SliceClass("s", {"1g.18gb"})), 7);
  EXPECT_EQ(SlicesPerGpu(pool, SliceClass("s", {"1g.35gb"})), 4);
  EXPECT_EQ(SlicesPerGpu(pool, SliceClass("s", {"2g.35gb"})), 3);
  EXPECT_EQ(SlicesPerGpu(pool, SliceClass("s", {"3g.71gb", "1g.18gb"})), 2);
  EXPECT_EQ(SlicesPerGpu(pool, SliceClass("s", {"7g.141gb"})), 1);
  // A profile the model lacks gives way to the next.
  EXPECT_EQ(SlicesPerGpu(pool, SliceClass("s", {"1g.10gb", "2g.35gb"})), 3);
}

TEST(SlicesPerGpu, AWholePoolsNewNodesHaveNoSlices) {
  EXPECT_EQ(SlicesPerGpu(H200Pool(core::MigLayoutKind::kWhole), SliceClass("s", {"1g.18gb"})), 0);
}

TEST(PendingGroupOf, SlicesShareAGpuAndTheScalerCountsNodesByGpus) {
  const core::NodePool pool = H200Pool(core::MigLayoutKind::kByDemand);
  const core::WorkspaceClass one_g = SliceClass("mig-1g", {"1g.18gb"});
  PendingGroup group = PendingGroupOf(pool, one_g, 60);
  EXPECT_EQ(group.count, 9);  // ceil(60 / 7) GPUs' worth.
  EXPECT_EQ(group.per_workspace.gpus, 1);
  EXPECT_EQ(group.per_workspace.cpu_millis, 7 * Capacity::OfClass(one_g).cpu_millis);
  // 9 GPUs on 8-GPU nodes: two nodes, where CPU and memory alone would say one.
  PackingResult packed = PackPending({group}, {}, Capacity::OfShape(pool.shape), 10);
  EXPECT_EQ(packed.new_nodes, 2);
  // A GPU class is as it was.
  PendingGroup whole = PendingGroupOf(pool, placement::testing::GpuClass("g", 2), 3);
  EXPECT_EQ(whole.count, 3);
  EXPECT_EQ(whole.per_workspace.gpus, 2);
}

TEST(PendingGroupOf, SliceWorkNoNewNodeCanHoldNeverFits) {
  const core::NodePool pool = H200Pool(core::MigLayoutKind::kWhole);
  PackingResult packed = PackPending({PendingGroupOf(pool, SliceClass("mig-1g", {"1g.18gb"}), 5)},
                                     {}, Capacity::OfShape(pool.shape), 10);
  EXPECT_EQ(packed.new_nodes, 0);
  EXPECT_EQ(packed.never_fit.at("mig-1g"), 5);
}

}  // namespace
}  // namespace wsched::scaling
