#include "server/scaling/demand_pool.h"

#include <map>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::scaling {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const std::vector<std::string> kH100ThenA100 = {"gpu-h100", "gpu-a100"};

auto Grows() {
  return [](const std::string&) { return true; };
}

// A pool that holds up to `room[pool]` workspaces in all, taken as asked.
auto Holds(std::map<std::string, int64_t>& room) {
  return [&room](const std::string& pool, int64_t count) {
    const int64_t taken = std::min(count, room[pool]);
    room[pool] -= taken;
    return taken;
  };
}

TEST(SplitDemandTest, ThePreferredPoolTakesAllItHolds) {
  std::map<std::string, int64_t> room = {{"gpu-h100", 16}, {"gpu-a100", 16}};
  EXPECT_THAT(SplitDemand(kH100ThenA100, 5, Grows(), Holds(room)),
              ElementsAre(DemandShare{"gpu-h100", 5}));
  EXPECT_EQ(room["gpu-h100"], 11);
}

TEST(SplitDemandTest, WhatThePreferredCannotHoldGoesToTheFallback) {
  std::map<std::string, int64_t> room = {{"gpu-h100", 3}, {"gpu-a100", 16}};
  EXPECT_THAT(SplitDemand(kH100ThenA100, 5, Grows(), Holds(room)),
              ElementsAre(DemandShare{"gpu-h100", 3}, DemandShare{"gpu-a100", 2}));
}

TEST(SplitDemandTest, APoolThatCannotGrowIsSkipped) {
  std::map<std::string, int64_t> room = {{"gpu-h100", 16}, {"gpu-a100", 16}};
  std::set<std::string> backing_off = {"gpu-h100"};
  EXPECT_THAT(
      SplitDemand(
          kH100ThenA100, 5, [&](const std::string& pool) { return !backing_off.contains(pool); },
          Holds(room)),
      ElementsAre(DemandShare{"gpu-a100", 5}));
  EXPECT_EQ(room["gpu-h100"], 16);  // Not even asked.
}

TEST(SplitDemandTest, WhatNoPoolHoldsCountsOnThePreferredPool) {
  std::map<std::string, int64_t> room = {{"gpu-h100", 3}, {"gpu-a100", 1}};
  EXPECT_THAT(SplitDemand(kH100ThenA100, 6, Grows(), Holds(room)),
              ElementsAre(DemandShare{"gpu-h100", 5}, DemandShare{"gpu-a100", 1}));
  room = {{"gpu-h100", 0}, {"gpu-a100", 2}};
  EXPECT_THAT(SplitDemand(kH100ThenA100, 6, Grows(), Holds(room)),
              ElementsAre(DemandShare{"gpu-h100", 4}, DemandShare{"gpu-a100", 2}));
  EXPECT_THAT(SplitDemand(
                  kH100ThenA100, 6, [](const std::string&) { return false; }, Holds(room)),
              ElementsAre(DemandShare{"gpu-h100", 6}));
}

TEST(SplitDemandTest, ATakeOutsideWhatWasAskedIsBounded) {
  EXPECT_THAT(SplitDemand(kH100ThenA100, 4, Grows(),
                          [](const std::string&, int64_t) -> int64_t { return 99; }),
              ElementsAre(DemandShare{"gpu-h100", 4}));
  EXPECT_THAT(SplitDemand(kH100ThenA100, 4, Grows(),
                          [](const std::string&, int64_t) -> int64_t { return -3; }),
              ElementsAre(DemandShare{"gpu-h100", 4}));
}

TEST(SplitDemandTest, NothingToSplit) {
  std::map<std::string, int64_t> room;
  EXPECT_THAT(SplitDemand({}, 3, Grows(), Holds(room)), IsEmpty());
  EXPECT_THAT(SplitDemand(kH100ThenA100, 0, Grows(), Holds(room)), IsEmpty());
}

}  // namespace
}  // namespace wsched::scaling
