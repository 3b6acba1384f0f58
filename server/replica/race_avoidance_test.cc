#include "server/replica/race_avoidance.h"

#include <variant>

#include "gtest/gtest.h"
#include "server/placement/test_nodes.h"

namespace wsched::replica {
namespace {

using placement::testing::FakeGpuNode;
using placement::testing::GpuClass;
using placement::testing::GpuPool;

class RaceAvoidanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    catalog_.classes = {GpuClass("gpu-1x", 1)};
    catalog_.pools = {GpuPool("gpu-h100", "h100", 8)};
    for (const char* name : {"g1", "g2"}) {
      ASSERT_TRUE(snapshot_
                      .UpsertNode(FakeGpuNode(name, "gpu-h100", "h100", 8), core::NodeState::kReady,
                                  core::DriverState::kReady)
                      .ok());
    }
  }
  std::string NodeChosen() {
    placement::Decision decision = races_.Decide(catalog_.classes[0], catalog_, snapshot_, now_);
    auto* placed = std::get_if<placement::Placed>(&decision);
    return placed == nullptr ? "" : placed->node;
  }
  core::Catalog catalog_;
  placement::Snapshot snapshot_;
  RaceAvoidance races_;
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
};

TEST_F(RaceAvoidanceTest, AContendedNodeIsAvoidedForAMomentWhileAnotherFits) {
  const std::string first = NodeChosen();
  ASSERT_FALSE(first.empty());
  races_.Contended(first, now_);
  EXPECT_NE(NodeChosen(), first);
  now_ += absl::Seconds(1);  // The winner's commit has arrived by now.
  EXPECT_EQ(NodeChosen(), first);
}

TEST_F(RaceAvoidanceTest, AContendedNodeIsStillUsedWhenNothingElseFits) {
  ASSERT_TRUE(snapshot_.RemoveNode("g2"));
  races_.Contended("g1", now_);
  EXPECT_EQ(NodeChosen(), "g1");
}

}  // namespace
}  // namespace wsched::replica
