#include "server/placement/pending_queue.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::placement {
namespace {

std::vector<std::string> Ids(const PendingQueue& queue) {
  std::vector<std::string> ids;
  for (const auto* entry : queue.Ordered()) ids.push_back(entry->workspace);
  return ids;
}

TEST(PendingQueue, FifoWithinAnOrg) {
  PendingQueue queue;
  queue.Upsert({"a1", "org-a"});
  queue.Upsert({"a2", "org-a"});
  queue.Upsert({"a3", "org-a"});
  EXPECT_THAT(Ids(queue), ::testing::ElementsAre("a1", "a2", "a3"));
  EXPECT_EQ(queue.Position("a3"), 3);
}

TEST(PendingQueue, OneOrgsBurstDoesNotStarveAnother) {
  PendingQueue queue;
  for (int i = 0; i < 5; ++i) queue.Upsert({"a" + std::to_string(i), "org-a"});
  queue.Upsert({"b0", "org-b"});
  queue.Upsert({"b1", "org-b"});
  EXPECT_THAT(Ids(queue), ::testing::ElementsAre("a0", "b0", "a1", "b1", "a2", "a3", "a4"));
  EXPECT_EQ(queue.Position("b0"), 2);
}

TEST(PendingQueue, HigherPriorityFirstAndRemoval) {
  PendingQueue queue;
  queue.Upsert({"low", "org-a", "c", 0});
  queue.Upsert({"high", "org-b", "c", 10});
  EXPECT_THAT(Ids(queue), ::testing::ElementsAre("high", "low"));
  EXPECT_TRUE(queue.Remove("high"));
  EXPECT_FALSE(queue.Remove("high"));
  EXPECT_EQ(queue.Position("low"), 1);
  EXPECT_EQ(queue.Position("high"), 0);
}

TEST(PendingQueue, UpsertKeepsThePlaceInLine) {
  PendingQueue queue;
  queue.Upsert({"a", "org-a"});
  queue.Upsert({"b", "org-a"});
  queue.Upsert({"a", "org-a", "c", 0, absl::InfinitePast(), "new reason"});
  EXPECT_THAT(Ids(queue), ::testing::ElementsAre("a", "b"));
  EXPECT_EQ(queue.Find("a")->reason, "new reason");
}

}  // namespace
}  // namespace wsched::placement
