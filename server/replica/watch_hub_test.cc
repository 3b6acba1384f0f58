#include "server/replica/watch_hub.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace wsched::replica {
namespace {

TEST(WatchHubTest, ReturnsAtOnceWhenTheCallersStateIsAlreadyNewer) {
  WatchHub hub;
  EXPECT_EQ(hub.Wait("w1", 4, absl::InfiniteDuration(), [] { return int64_t{5}; }), 5);
  EXPECT_EQ(hub.watched_ids(), 0u);  // Nothing stays behind a finished wait.
}

TEST(WatchHubTest, APublishWakesTheWatcherOfThatIdWithTheNewVersion) {
  WatchHub hub;
  absl::Notification registered;
  int64_t seen = 0;
  std::thread watcher([&] {
    seen = hub.Wait("w1", 3, absl::InfiniteDuration(), [&] {
      registered.Notify();
      return int64_t{3};
    });
  });
  registered.WaitForNotification();
  hub.Publish("w1", 7);
  watcher.join();
  EXPECT_EQ(seen, 7);
  EXPECT_EQ(hub.wakeups(), 1);
}

TEST(WatchHubTest, APublishRacingTheRegistrationIsNotMissed) {
  WatchHub hub;
  int64_t seen = 0;
  std::thread watcher([&] {
    // The publish lands while the caller reads its own state, which is
    // still the old version: the hub already holds the new one.
    seen = hub.Wait("w1", 3, absl::InfiniteDuration(), [&] {
      hub.Publish("w1", 9);
      return int64_t{3};
    });
  });
  watcher.join();
  EXPECT_EQ(seen, 9);
}

TEST(WatchHubTest, PublishingOtherIdsWakesNobodyAndTheWaitEndsAtItsDeadline) {
  WatchHub hub;
  absl::Notification registered;
  int64_t seen = -1;
  std::thread watcher([&] {
    seen = hub.Wait("w1", 2, absl::Milliseconds(300), [&] {
      registered.Notify();
      return int64_t{2};
    });
  });
  registered.WaitForNotification();
  for (int i = 0; i < 100; ++i) hub.Publish("other-" + std::to_string(i), 50);
  watcher.join();
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(hub.wakeups(), 0);
}

TEST(WatchHubTest, StopWakesEveryWatcherAndLaterWaitsReturnAtOnce) {
  WatchHub hub;
  absl::Notification a_registered, b_registered;
  std::thread a([&] {
    hub.Wait("a", 1, absl::InfiniteDuration(), [&] {
      a_registered.Notify();
      return int64_t{1};
    });
  });
  std::thread b([&] {
    hub.Wait("b", 1, absl::InfiniteDuration(), [&] {
      b_registered.Notify();
      return int64_t{1};
    });
  });
  a_registered.WaitForNotification();
  b_registered.WaitForNotification();
  hub.Stop();
  a.join();
  b.join();
  EXPECT_EQ(hub.Wait("c", 1, absl::InfiniteDuration(), [] { return int64_t{1}; }), 1);
}

TEST(WatchHubTest, ManyWatchersOfOneIdShareOneEntryAndAllWake) {
  WatchHub hub;
  constexpr int kWatchers = 8;
  std::atomic<int> registered{0};
  std::vector<std::thread> watchers;
  std::vector<int64_t> seen(kWatchers, 0);
  for (int i = 0; i < kWatchers; ++i) {
    watchers.emplace_back([&, i] {
      seen[i] = hub.Wait("w", 0, absl::InfiniteDuration(), [&] {
        registered++;
        return int64_t{0};
      });
    });
  }
  while (registered.load() < kWatchers) std::this_thread::yield();
  // Each watcher has run `current` and may not be asleep yet; a publish
  // reaches it either way (its wait checks the version before sleeping).
  hub.Publish("w", 4);
  for (auto& t : watchers) t.join();
  for (int64_t v : seen) EXPECT_EQ(v, 4);
  EXPECT_EQ(hub.watched_ids(), 0u);
}

}  // namespace
}  // namespace wsched::replica
