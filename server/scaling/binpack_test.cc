#include "server/scaling/binpack.h"

#include "gtest/gtest.h"
#include "server/scaling/test_pools.h"

namespace wsched::scaling {
namespace {

using testing::GpuClass;
using testing::GpuPool;

PendingGroup Pending(int gpus, int64_t count) {
  core::WorkspaceClass cls = GpuClass(gpus);
  return {cls.id, Capacity::OfClass(cls), count};
}

const Capacity kNode = Capacity::OfShape(GpuPool(8).shape);

TEST(PackPendingTest, NineOneGpuWorkspacesNeedTwoEightGpuNodes) {
  PackingResult result = PackPending({Pending(1, 9)}, {}, kNode, 100);
  EXPECT_EQ(result.new_nodes, 2);
  EXPECT_EQ(result.placed_on_new, 9);
}

TEST(PackPendingTest, ThreeEightGpuWorkspacesNeedThreeNodes) {
  EXPECT_EQ(PackPending({Pending(8, 3)}, {}, kNode, 100).new_nodes, 3);
}

TEST(PackPendingTest, WorkThatFitsExistingRoomAsksForNothing) {
  PackingResult result = PackPending({Pending(1, 5)}, {kNode}, kNode, 100);
  EXPECT_EQ(result.new_nodes, 0);
  EXPECT_EQ(result.placed_on_existing, 5);
  EXPECT_EQ(result.existing_used, std::vector<bool>({true}));
}

TEST(PackPendingTest, FirstFitInTheGivenOrder) {
  Capacity half = kNode;
  half.gpus = 4;
  PackingResult result = PackPending({Pending(2, 2)}, {half, kNode}, kNode, 100);
  EXPECT_EQ(result.existing_used, std::vector<bool>({true, false}));
}

TEST(PackPendingTest, BiggestFirstLetsSmallWorkFillTheGaps) {
  // 3 x 3 GPUs leave 2 + 5 GPUs on two new nodes; the 1-GPU ones fill them.
  PackingResult result = PackPending({Pending(1, 7), Pending(3, 3)}, {}, kNode, 100);
  EXPECT_EQ(result.new_nodes, 2);
}

TEST(PackPendingTest, SameClassGroupsAreMerged) {
  EXPECT_EQ(PackPending({Pending(1, 4), Pending(1, 5)}, {}, kNode, 100).new_nodes, 2);
}

TEST(PackPendingTest, WorkThatCanNeverFitIsReportedNotPacked) {
  PackingResult result = PackPending({Pending(16, 2), Pending(1, 1)}, {}, kNode, 100);
  EXPECT_EQ(result.new_nodes, 1);
  EXPECT_EQ(result.never_fit, (std::map<std::string, int64_t>{{"gpu-16x", 2}}));
}

TEST(PackPendingTest, StopsAtTheNewNodeLimit) {
  PackingResult result = PackPending({Pending(8, 1'000'000)}, {}, kNode, 10);
  EXPECT_EQ(result.new_nodes, 10);
  EXPECT_EQ(result.beyond_limit, 1'000'000 - 10);
}

TEST(PackPendingTest, NothingPendingNeedsNothing) {
  PackingResult result = PackPending({Pending(1, 0)}, {kNode}, kNode, 10);
  EXPECT_EQ(result.new_nodes, 0);
  EXPECT_EQ(result.existing_used, std::vector<bool>({false}));
}

}  // namespace
}  // namespace wsched::scaling
