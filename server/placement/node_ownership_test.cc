#include "server/placement/node_ownership.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace wsched::placement {
namespace {

std::vector<std::string> Nodes(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(absl::StrCat("gpu-node-", i));
  return out;
}

TEST(NodeOwnership, AloneAReplicaOwnsEveryNode) {
  for (const auto& node : Nodes(50)) EXPECT_TRUE(OwnsNode(node, "replica-a", {}));
}

TEST(NodeOwnership, EveryNodeHasExactlyOneOwnerAndTheSharesAreFair) {
  const std::vector<std::string> replicas = {"host-1:4242", "host-2:4242", "host-3:4242"};
  std::vector<int> owned(replicas.size());
  for (const auto& node : Nodes(3000)) {
    int owners = 0;
    for (size_t r = 0; r < replicas.size(); ++r) {
      std::vector<std::string> peers;
      for (size_t p = 0; p < replicas.size(); ++p) {
        if (p != r) peers.push_back(replicas[p]);
      }
      if (OwnsNode(node, replicas[r], peers)) {
        ++owners;
        ++owned[r];
      }
    }
    EXPECT_EQ(owners, 1) << node;
  }
  for (int count : owned) {
    EXPECT_GT(count, 850);  // 1000 each on average.
    EXPECT_LT(count, 1150);
  }
}

TEST(NodeOwnership, AReplicaLeavingMovesOnlyItsOwnNodes) {
  for (const auto& node : Nodes(500)) {
    bool a_owned_with_c = OwnsNode(node, "a", {"b", "c"});
    bool b_owned_with_c = OwnsNode(node, "b", {"a", "c"});
    // Without c, a node that a or b owned stays where it was.
    if (a_owned_with_c) {
      EXPECT_TRUE(OwnsNode(node, "a", {"b"})) << node;
    }
    if (b_owned_with_c) {
      EXPECT_TRUE(OwnsNode(node, "b", {"a"})) << node;
    }
  }
}

TEST(NodeOwnership, TheWeightIsFixedNotSeededPerProcess) {
  // Replicas must agree: the weight is a function of its inputs alone.
  EXPECT_EQ(RendezvousWeight("n1", "r1"), RendezvousWeight("n1", "r1"));
  EXPECT_NE(RendezvousWeight("ab", "c"), RendezvousWeight("a", "bc"));
  // Pinned: replicas of different builds (a rolling upgrade) must agree.
  EXPECT_EQ(RendezvousWeight("gpu-node-7", "host-1:4242"), 0x26684c8354306212ULL);
}

}  // namespace
}  // namespace wsched::placement
