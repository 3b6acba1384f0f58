#include "server/placement/queue_pass.h"

#include "gtest/gtest.h"

namespace wsched::placement {
namespace {

TEST(QueuePassTest, AClassWithoutRoomIsNotDecidedAgainAndThePassEndsWhenNoneHasRoom) {
  QueuePass pass({"gpu-1x", "gpu-8x"});
  EXPECT_FALSE(pass.ShouldDecide("cpu")) << "out of the pass's scope";
  ASSERT_TRUE(pass.ShouldDecide("gpu-8x"));
  pass.Decided("gpu-8x", NotNow{{"gpu-h100"}});
  EXPECT_FALSE(pass.ShouldDecide("gpu-8x"));
  EXPECT_FALSE(pass.Done());

  ASSERT_TRUE(pass.ShouldDecide("gpu-1x"));
  pass.Decided("gpu-1x", Placed{"g1", "gpu-h100", {0}, {}});
  EXPECT_TRUE(pass.ShouldDecide("gpu-1x")) << "room left after a placement may hold the next";
  pass.Decided("gpu-1x", Never{"class gone"});
  EXPECT_TRUE(pass.ShouldDecide("gpu-1x")) << "a Never says nothing of the room";
  pass.Decided("gpu-1x", NotNow{{"gpu-h100"}});
  EXPECT_TRUE(pass.Done());
}

TEST(QueuePassTest, APassWithNothingInScopeIsDoneAtOnce) {
  EXPECT_TRUE(QueuePass({}).Done());
}

}  // namespace
}  // namespace wsched::placement
