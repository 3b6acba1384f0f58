#include "server/placement/gpu_allocator.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::placement {
namespace {

using ::testing::ElementsAre;
using ::testing::Optional;

// One unit per GPU; GPUs 0-3 on NUMA node 0, 4-7 on NUMA node 1.
std::vector<GpuUnit> Singles(std::vector<int> indices) {
  std::vector<GpuUnit> units;
  for (int i : indices) units.push_back({{i}, i < 4 ? 0 : 1});
  return units;
}

TEST(ChooseGpus, OneGpuTakesLowestIndex) {
  EXPECT_THAT(ChooseGpus(Singles({0, 1, 2, 3, 4, 5, 6, 7}), 1), Optional(ElementsAre(0)));
}

TEST(ChooseGpus, FourGpusStayOnOneNumaNode) {
  // GPU 0 is taken: 1-4 would be the lowest indices but span both NUMA nodes.
  EXPECT_THAT(ChooseGpus(Singles({1, 2, 3, 4, 5, 6, 7}), 4), Optional(ElementsAre(4, 5, 6, 7)));
}

TEST(ChooseGpus, BestFitLeavesWholeNumaNodeFree) {
  // NUMA 1 has one GPU left: taking it keeps NUMA 0 whole for a 4-GPU class.
  EXPECT_THAT(ChooseGpus(Singles({0, 1, 2, 3, 7}), 1), Optional(ElementsAre(7)));
}

TEST(ChooseGpus, SpansNumaNodesOnlyWhenItMust) {
  EXPECT_THAT(ChooseGpus(Singles({0, 1, 2, 3, 4, 5, 6, 7}), 6),
              Optional(ElementsAre(0, 1, 2, 3, 4, 5)));
}

TEST(ChooseGpus, NeverSplitsOrOvershootsAUnit) {
  std::vector<GpuUnit> pairs = {{{0, 1}, 0}, {{2, 3}, 0}};
  EXPECT_EQ(ChooseGpus(pairs, 1), std::nullopt);
  EXPECT_THAT(ChooseGpus(pairs, 2), Optional(ElementsAre(0, 1)));
  EXPECT_EQ(ChooseGpus(pairs, 3), std::nullopt);
  std::vector<GpuUnit> mixed = {{{0, 1}, 0}, {{2}, 0}};
  EXPECT_THAT(ChooseGpus(mixed, 1), Optional(ElementsAre(2)));
  EXPECT_THAT(ChooseGpus(mixed, 3), Optional(ElementsAre(0, 1, 2)));
}

TEST(ChooseGpus, EdgeCounts) {
  EXPECT_THAT(ChooseGpus({}, 0), Optional(ElementsAre()));
  EXPECT_EQ(ChooseGpus(Singles({0, 1}), 3), std::nullopt);
  EXPECT_EQ(ChooseGpus(Singles({0}), kMaxGpusPerWorkspace + 1), std::nullopt);
}

TEST(ChooseGpus, UnknownNumaCountsAsOneMoreNode) {
  std::vector<GpuUnit> units = {{{0}, -1}, {{1}, 0}, {{2}, 0}};
  EXPECT_THAT(ChooseGpus(units, 2), Optional(ElementsAre(1, 2)));
}

}  // namespace
}  // namespace wsched::placement
