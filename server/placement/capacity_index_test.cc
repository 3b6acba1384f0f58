#include "server/placement/capacity_index.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::placement {
namespace {

using ::testing::ElementsAre;

GpuCounts Free(int gpus) { return {gpus, gpus, gpus}; }

// Every node FindFirst offers, in order (the visitor never accepts).
std::vector<NodeId> Visited(const CapacityIndex& index, int min_gpus, int64_t min_cpu) {
  std::vector<NodeId> seen;
  index.FindFirst(GpuView::kContainer, min_gpus, min_cpu, [&](NodeId id, const PackingScore&) {
    seen.push_back(id);
    return false;
  });
  return seen;
}

TEST(CapacityIndex, OffersFullestFittingNodesFirstAndSkipsShortCpu) {
  CapacityIndex index;
  index.Insert(1, Free(8), 100000);
  index.Insert(2, Free(2), 4000);   // Too little CPU for 8000.
  index.Insert(3, Free(2), 50000);
  index.Insert(4, Free(1), 90000);
  index.Insert(5, Free(0), 90000);
  EXPECT_THAT(Visited(index, 1, 8000), ElementsAre(4, 3, 1));
  EXPECT_THAT(Visited(index, 2, 0), ElementsAre(2, 3, 1));
  EXPECT_THAT(Visited(index, 0, 60000), ElementsAre(5, 4, 1));
  EXPECT_EQ(index.MaxFreeGpus(GpuView::kContainer), 8);
  EXPECT_EQ(index.TotalFreeGpus(GpuView::kContainer), 13);

  index.Erase(1, Free(8), 100000);
  index.Erase(1, Free(8), 100000);  // Gone already: no double count.
  EXPECT_EQ(index.MaxFreeGpus(GpuView::kContainer), 2);
  EXPECT_EQ(index.TotalFreeGpus(GpuView::kContainer), 5);
  EXPECT_EQ(index.size(), 4u);
}

TEST(CapacityIndex, StopsAtTheFirstAcceptedNode) {
  CapacityIndex index;
  for (NodeId id = 0; id < 100; ++id) index.Insert(id, Free(static_cast<int>(id % 9)), 1000);
  int visits = 0;
  bool found = index.FindFirst(GpuView::kContainer, 3, 0, [&](NodeId, const PackingScore& score) {
    ++visits;
    EXPECT_EQ(score.free_gpus, 3);
    return true;
  });
  EXPECT_TRUE(found);
  EXPECT_EQ(visits, 1);
}

}  // namespace
}  // namespace wsched::placement
