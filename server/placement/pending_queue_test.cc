#include "server/placement/pending_queue.h"

#include <map>
#include <random>

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

// The order as the queue defined it before it kept lines per org: sort
// everything by priority, org and arrival, then take rounds.
std::vector<std::string> ReferenceOrder(const std::vector<PendingEntry>& by_arrival) {
  std::map<int, std::map<std::string, std::vector<size_t>>, std::greater<>> tiers;
  for (size_t i = 0; i < by_arrival.size(); ++i) {
    tiers[by_arrival[i].priority][by_arrival[i].org].push_back(i);
  }
  std::vector<std::string> ordered;
  for (auto& [priority, orgs] : tiers) {
    for (size_t round = 0;; ++round) {
      std::vector<size_t> heads;
      for (auto& [org, line] : orgs) {
        if (round < line.size()) heads.push_back(line[round]);
      }
      if (heads.empty()) break;
      std::sort(heads.begin(), heads.end());
      for (size_t i : heads) ordered.push_back(by_arrival[i].workspace);
    }
  }
  return ordered;
}

TEST(PendingQueue, RandomUpsertsAndRemovalsKeepTheRoundRobinOrder) {
  std::mt19937 rng(3);
  PendingQueue queue;
  // Live entries in arrival order (an upsert keeps its place).
  std::vector<PendingEntry> live;
  for (int step = 0; step < 3000; ++step) {
    int action = static_cast<int>(rng() % 10);
    if (action < 5 || live.empty()) {
      PendingEntry entry{"w" + std::to_string(step), "org-" + std::to_string(rng() % 5), "c",
                         static_cast<int>(rng() % 3) * 10};
      queue.Upsert(entry);
      live.push_back(entry);
    } else if (action < 8) {
      size_t i = rng() % live.size();
      EXPECT_TRUE(queue.Remove(live[i].workspace));
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      // A new priority or org, same place in line.
      PendingEntry& changed = live[rng() % live.size()];
      changed.org = "org-" + std::to_string(rng() % 5);
      changed.priority = static_cast<int>(rng() % 3) * 10;
      queue.Upsert(changed);
    }
    if (step % 97 == 0) {
      ASSERT_EQ(Ids(queue), ReferenceOrder(live)) << "step " << step;
    }
  }
  EXPECT_EQ(Ids(queue), ReferenceOrder(live));
  EXPECT_EQ(queue.size(), live.size());
  // Visiting stops where the visitor says.
  std::vector<std::string> head;
  queue.ForEachOrdered([&](const PendingEntry& entry) {
    head.push_back(entry.workspace);
    return head.size() < 10;
  });
  std::vector<std::string> all = ReferenceOrder(live);
  ASSERT_GE(all.size(), 10u);
  EXPECT_EQ(head, std::vector<std::string>(all.begin(), all.begin() + 10));
}

}  // namespace
}  // namespace wsched::placement
