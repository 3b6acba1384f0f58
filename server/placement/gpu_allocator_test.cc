#include "server/placement/gpu_allocator.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/test_nodes.h"

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

// NVLink pairs 0-1, 2-3, 4-5, 6-7 as on a PCIe node with bridges.
NvlinkPeers BridgedPairs() {
  core::NodeInfo node = testing::FakeGpuNode("n", "p");
  for (int i = 0; i < 8; i += 2) testing::LinkPair(node, i, i + 1);
  return NvlinkPeers::Of(node.gpus);
}

TEST(NvlinkPeers, CountsALinkOnlyWhenBothGpusReportIt) {
  core::NodeInfo node = testing::FakeGpuNode("n", "p", "h100", 4);
  testing::LinkPair(node, 0, 1);
  node.gpus[3].links = {{2, core::GpuLinkKind::kNvlink, 2}};  // GPU 2 does not say so.
  NvlinkPeers peers = NvlinkPeers::Of(node.gpus);
  EXPECT_TRUE(peers.Linked(0, 1));
  EXPECT_TRUE(peers.Linked(1, 0));
  EXPECT_FALSE(peers.Linked(2, 3));
  EXPECT_EQ(NvlinkPeers::Weakest(node.gpus, {0, 1}), core::GpuLinkKind::kNvlink);
  EXPECT_EQ(NvlinkPeers::Weakest(node.gpus, {0, 1, 2}), core::GpuLinkKind::kSys);
  EXPECT_EQ(NvlinkPeers::Weakest(node.gpus, {0}), std::nullopt);
}

TEST(ChooseGpus, RequiredLinksTakeOnlyALinkedSet) {
  NvlinkPeers peers = BridgedPairs();
  const LinkRule required{&peers, /*require_linked=*/true};
  // 0 and 2 free with their peers taken: four GPUs free, no linked two.
  EXPECT_EQ(ChooseGpus(Singles({0, 2, 4, 6}), 2, required), std::nullopt);
  EXPECT_THAT(ChooseGpus(Singles({0, 2, 4, 6, 7}), 2, required), Optional(ElementsAre(6, 7)));
  // Four GPUs whose every two share NVLink do not exist on bridged pairs.
  EXPECT_EQ(ChooseGpus(Singles({0, 1, 2, 3, 4, 5, 6, 7}), 4, required), std::nullopt);
  // Links unknown: a required set is never guessed.
  EXPECT_EQ(ChooseGpus(Singles({0, 1}), 2, LinkRule{nullptr, true}), std::nullopt);
}

TEST(ChooseGpus, OneGpuGoesWhereItsPeerIsTakenSoFreePairsStayWhole) {
  NvlinkPeers peers = BridgedPairs();
  // GPU 1 is taken: 0 is the GPU whose pair is already broken.
  EXPECT_THAT(ChooseGpus(Singles({0, 2, 3, 4, 5, 6, 7}), 1, LinkRule{&peers}),
              Optional(ElementsAre(0)));
  // GPU 2 is taken: 3 (not 0, the lowest) keeps pair 0-1 whole.
  EXPECT_THAT(ChooseGpus(Singles({0, 1, 3, 4, 5, 6, 7}), 1, LinkRule{&peers}),
              Optional(ElementsAre(3)));
  // Without links the lowest index would have won.
  EXPECT_THAT(ChooseGpus(Singles({0, 1, 3, 4, 5, 6, 7}), 1), Optional(ElementsAre(0)));
}

TEST(ChooseGpus, TwoGpusTakeAPairEvenWithoutBeingAskedTo) {
  NvlinkPeers peers = BridgedPairs();
  // 1 and 2 are the lowest free, but 2 would break the free pair 2-3; 4-5 is
  // a whole pair that fills its NUMA node.
  EXPECT_THAT(ChooseGpus(Singles({1, 2, 3, 4, 5}), 2, LinkRule{&peers}),
              Optional(ElementsAre(4, 5)));
}

TEST(ChooseGpus, PreferredLinksWinOverNumaButFallBackToAnySet) {
  NvlinkPeers peers = BridgedPairs();
  const LinkRule preferred{&peers, false, /*prefer_linked=*/true};
  // NUMA 0 has 0 and 2 (peers taken); NUMA 1 has the pair 4-5.
  EXPECT_THAT(ChooseGpus(Singles({0, 2, 4, 5}), 2, preferred), Optional(ElementsAre(4, 5)));
  EXPECT_THAT(ChooseGpus(Singles({0, 2, 4, 6}), 2, preferred), Optional(ElementsAre(0, 2)));
}

TEST(ChooseGpus, EveryRequiredChoiceOnAnyFreeSetIsLinked) {
  NvlinkPeers peers = BridgedPairs();
  const LinkRule required{&peers, true};
  for (int mask = 0; mask < 256; ++mask) {
    std::vector<int> free;
    for (int i = 0; i < 8; ++i) {
      if (mask & (1 << i)) free.push_back(i);
    }
    bool has_pair = false;
    for (int i = 0; i < 8; i += 2) has_pair |= (mask >> i & 3) == 3;
    std::optional<std::vector<int>> pick = ChooseGpus(Singles(free), 2, required);
    EXPECT_EQ(pick.has_value(), has_pair) << "free mask " << mask;
    if (pick) {
      EXPECT_TRUE(peers.AllLinked(*pick)) << "free mask " << mask;
    }
  }
}

}  // namespace
}  // namespace wsched::placement
