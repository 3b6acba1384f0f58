#include "server/placement/queue_pass.h"

#include <optional>
#include <string>
#include <vector>

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

TEST(QueuePassTest, RunDecidesInQueueOrderSkipsWhatIsOutOfScopeAndStopsWhenNoClassHasRoom) {
  // Queue: a fits, a cpu entry out of scope, b finds no room, a second b
  // (not decided again), a finds no room -> the pass ends before "last".
  struct Entry {
    std::string id, class_id;
    Decision decision;
  };
  const std::vector<Entry> queue = {{"w1", "a", Placed{"n1", "p", {0}, {}}},
                                    {"w2", "cpu", Placed{"n1", "p", {}, {}}},
                                    {"w3", "b", NotNow{{"p"}}},
                                    {"w4", "b", Placed{"n1", "p", {1}, {}}},
                                    {"w5", "a", NotNow{{"p"}}},
                                    {"last", "a", Placed{"n1", "p", {2}, {}}}};
  std::vector<std::string> decided, visited;
  QueuePass({"a", "b"}).Run(
      [&](auto visit) {
        for (const Entry& entry : queue) {
          visited.push_back(entry.id);
          if (!visit(entry)) return;
        }
      },
      [](const Entry& entry) { return &entry.class_id; },
      [&](const Entry& entry) -> std::optional<Decision> {
        decided.push_back(entry.id);
        return entry.decision;
      });
  EXPECT_EQ(decided, (std::vector<std::string>{"w1", "w3", "w5"}));
  EXPECT_EQ(visited, (std::vector<std::string>{"w1", "w2", "w3", "w4", "w5", "last"}))
      << "the entry after the last class ran out of room ends the walk";
}

TEST(QueuePassTest, APassWithNothingInScopeIsDoneAtOnce) {
  EXPECT_TRUE(QueuePass({}).Done());
}

}  // namespace
}  // namespace wsched::placement
