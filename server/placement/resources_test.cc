#include "server/placement/resources.h"

#include <vector>

#include "gtest/gtest.h"

namespace wsched::placement {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

TEST(ResourcesTest, HowManyFitIsZeroExactlyWhenCoversSaysNo) {
  const Resources request{2000, 8 * kGi, 0, 10 * kGi};
  const std::vector<Resources> rooms = {
      {2000, 8 * kGi, 0, 10 * kGi},  {1999, 8 * kGi, 0, 10 * kGi}, {8000, 8 * kGi, 0, 40 * kGi},
      {8000, 64 * kGi, -1, 40 * kGi}, {0, 0, 0, 0},                {-500, 64 * kGi, 0, 40 * kGi}};
  for (const Resources& room : rooms) {
    EXPECT_EQ(HowManyFit(room, request) > 0, Covers(room, request))
        << room.cpu_millis << "m " << room.memory_bytes << " " << room.ephemeral_storage_bytes;
  }
  EXPECT_EQ(HowManyFit({8000, 64 * kGi, 0, 40 * kGi}, request), 4) << "four by CPU and disk";
}

TEST(ResourcesTest, AFreshNodeHoldsAsManyAsPlacingThemOneByOneWouldPlace) {
  // What the scaler counts per node (HowManyFit on the shape's room) is
  // what the decision would place on such a node, one Covers at a time.
  core::NodeShape shape;
  shape.cpu_millis = 16000;
  shape.memory_bytes = 60 * kGi;  // Disk and ephemeral storage not stated.
  const Resources request{3000, 7 * kGi, 20 * kGi, 50 * kGi};
  Resources room = RoomOfShape(shape);
  const int64_t counted = HowManyFit(room, request);
  int64_t placed = 0;
  while (Covers(room, request)) {
    room -= request;
    ++placed;
  }
  EXPECT_EQ(counted, placed);
  EXPECT_EQ(placed, 5) << "CPU limits: 16 / 3";
}

TEST(ResourcesTest, ARequestOfNothingFitsWithoutLimit) {
  EXPECT_EQ(HowManyFit({1, 1, 1, 1}, {}), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(HowManyFit({-1, 1, 1, 1}, {}), 0) << "an overcommitted node holds nothing more";
}

}  // namespace
}  // namespace wsched::placement
