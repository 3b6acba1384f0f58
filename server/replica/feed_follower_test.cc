#include "server/replica/feed_follower.h"

#include <deque>
#include <optional>
#include <thread>

#include "absl/synchronization/blocking_counter.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::replica {
namespace {

using store::ChangeRecord;
using store::Entity;

// The change log as a vector; entries before `oldest` are pruned.
class FakeSource : public FeedSource {
 public:
  absl::StatusOr<store::FeedRead> ReadSince(int64_t after, int limit) override {
    reads++;
    if (!up) return absl::UnavailableError("database down");
    store::FeedRead read;
    read.head = log.empty() ? pruned_head : log.back().seq;
    for (const auto& record : log) {
      if (record.seq > after && static_cast<int>(read.records.size()) < limit) {
        read.records.push_back(record);
      }
    }
    return read;
  }
  void Append(Entity entity, std::string id, int64_t version, absl::Time at = absl::UnixEpoch()) {
    int64_t seq = log.empty() ? pruned_head + 1 : log.back().seq + 1;
    log.push_back({seq, "other", at, {{entity, std::move(id), version}}});
  }
  void PruneThrough(int64_t seq) {
    while (!log.empty() && log.front().seq <= seq) {
      pruned_head = log.front().seq;
      log.pop_front();
    }
  }
  std::deque<ChangeRecord> log;
  int64_t pruned_head = 0;
  bool up = true;
  int reads = 0;
};

class FakeSink : public FeedSink {
 public:
  explicit FakeSink(FakeSource* source) : source_(source) {}
  absl::Status Apply(const std::vector<ChangeRecord>& records) override {
    if (fail_apply) return absl::UnavailableError("apply failed");
    for (const auto& r : records) applied.push_back(r.seq);
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> Reload() override {
    reloads++;
    return source_->log.empty() ? source_->pruned_head : source_->log.back().seq;
  }
  std::vector<int64_t> applied;
  int reloads = 0;
  bool fail_apply = false;

 private:
  FakeSource* source_;
};

class FeedFollowerTest : public ::testing::Test {
 protected:
  FeedFollowerTest() : sink_(&source_), follower_(&source_, &sink_, &metrics_, [this] { return now_; }, 2) {}

  bool MetricHas(const std::string& line) { return metrics_.Scrape().find(line) != std::string::npos; }

  FakeSource source_;
  FakeSink sink_;
  metrics::Metrics metrics_;
  absl::Time now_ = absl::UnixEpoch() + absl::Seconds(100);
  FeedFollower follower_;
};

TEST_F(FeedFollowerTest, FirstCatchUpReloadsOnceThenAppliesOnlyDeltas) {
  source_.Append(Entity::kNode, "n1", 1);
  ASSERT_TRUE(follower_.CatchUp().ok());
  EXPECT_EQ(sink_.reloads, 1);
  EXPECT_EQ(follower_.position(), 1);
  EXPECT_TRUE(MetricHas("wsched_feed_full_reloads_total{reason=\"start\"} 1"));

  source_.Append(Entity::kWorkspace, "w1", 2);
  source_.Append(Entity::kWorkspace, "w2", 3);
  source_.Append(Entity::kNode, "n1", 4);
  ASSERT_TRUE(follower_.CatchUp().ok());
  // Batches of two (the limit), in order, no second reload.
  EXPECT_THAT(sink_.applied, ::testing::ElementsAre(2, 3, 4));
  EXPECT_EQ(sink_.reloads, 1);
  EXPECT_EQ(follower_.position(), 4);
  EXPECT_TRUE(MetricHas("wsched_feed_deltas_applied_total{entity=\"workspace\"} 2"));
  EXPECT_TRUE(MetricHas("wsched_feed_deltas_applied_total{entity=\"node\"} 1"));
}

TEST_F(FeedFollowerTest, NothingNewCostsOneReadAndNoApply) {
  ASSERT_TRUE(follower_.CatchUp().ok());
  int reads = source_.reads;
  ASSERT_TRUE(follower_.CatchUp().ok());
  EXPECT_EQ(source_.reads, reads + 1);
  EXPECT_TRUE(sink_.applied.empty());
}

TEST_F(FeedFollowerTest, MissedEntriesAreDetectedAsAGapAndReloaded) {
  ASSERT_TRUE(follower_.CatchUp().ok());  // Position 0.
  for (int i = 1; i <= 5; ++i) source_.Append(Entity::kWorkspace, "w", i);
  source_.PruneThrough(3);  // Entries 1-3 gone before this replica read them.
  ASSERT_TRUE(follower_.CatchUp().ok());
  EXPECT_EQ(sink_.reloads, 2);
  EXPECT_TRUE(sink_.applied.empty());  // The reload covered them.
  EXPECT_EQ(follower_.position(), 5);
  EXPECT_TRUE(MetricHas("wsched_feed_full_reloads_total{reason=\"gap\"} 1"));
}

TEST_F(FeedFollowerTest, EverythingPrunedWhileAwayIsAGapToo) {
  ASSERT_TRUE(follower_.CatchUp().ok());
  source_.Append(Entity::kNode, "n", 1);
  source_.PruneThrough(1);  // The log is empty, but the head moved on.
  ASSERT_TRUE(follower_.CatchUp().ok());
  EXPECT_EQ(sink_.reloads, 2);
  EXPECT_EQ(follower_.position(), 1);
}

TEST_F(FeedFollowerTest, HeadBehindPositionMeansARestoredDatabase) {
  source_.Append(Entity::kNode, "n", 1);
  source_.Append(Entity::kNode, "n", 2);
  ASSERT_TRUE(follower_.CatchUp().ok());
  source_.log.clear();
  source_.pruned_head = 0;
  source_.Append(Entity::kNode, "n", 1);  // Head 1 < position 2.
  ASSERT_TRUE(follower_.CatchUp().ok());
  EXPECT_EQ(sink_.reloads, 2);
  EXPECT_EQ(follower_.position(), 1);
}

TEST_F(FeedFollowerTest, FailedApplyKeepsThePositionAndRetriesTheSameEntries) {
  ASSERT_TRUE(follower_.CatchUp().ok());
  source_.Append(Entity::kWorkspace, "w", 1);
  sink_.fail_apply = true;
  EXPECT_FALSE(follower_.CatchUp().ok());
  EXPECT_EQ(follower_.position(), 0);
  sink_.fail_apply = false;
  ASSERT_TRUE(follower_.CatchUp().ok());
  EXPECT_THAT(sink_.applied, ::testing::ElementsAre(1));
}

TEST_F(FeedFollowerTest, DatabaseDownIsReportedAndRecovers) {
  ASSERT_TRUE(follower_.CatchUp().ok());
  source_.up = false;
  EXPECT_TRUE(absl::IsUnavailable(follower_.CatchUp()));
  EXPECT_TRUE(MetricHas("wsched_database_up 0"));
  source_.up = true;
  ASSERT_TRUE(follower_.CatchUp().ok());
  EXPECT_TRUE(MetricHas("wsched_database_up 1"));
}

TEST_F(FeedFollowerTest, LagIsMeasuredAgainstTheInjectedClock) {
  ASSERT_TRUE(follower_.CatchUp().ok());
  // Three entries, the oldest written 7 s before "now"; with a batch limit
  // of two, the first poll sees the whole lag.
  source_.Append(Entity::kNode, "a", 1, now_ - absl::Seconds(7));
  source_.Append(Entity::kNode, "b", 2, now_ - absl::Seconds(1));
  source_.Append(Entity::kNode, "c", 3, now_);
  sink_.fail_apply = true;
  EXPECT_FALSE(follower_.CatchUp().ok());
  EXPECT_TRUE(MetricHas("wsched_feed_lag_entries 3"));
  EXPECT_TRUE(MetricHas("wsched_feed_lag_seconds 7"));
  sink_.fail_apply = false;
  ASSERT_TRUE(follower_.CatchUp().ok());
  EXPECT_TRUE(MetricHas("wsched_feed_lag_entries 0"));
}

TEST_F(FeedFollowerTest, CaughtUpAtIsWhenTheLastCatchUpThatReachedTheHeadBegan) {
  EXPECT_EQ(follower_.caught_up_at(), absl::InfinitePast());
  ASSERT_TRUE(follower_.CatchUp().ok());
  const absl::Time first = now_;
  EXPECT_EQ(follower_.caught_up_at(), first);
  // Failed catch-ups (the database down, an apply refused) leave it behind.
  now_ += absl::Seconds(5);
  source_.up = false;
  EXPECT_FALSE(follower_.CatchUp().ok());
  source_.up = true;
  source_.Append(Entity::kNode, "a", 1, now_);
  sink_.fail_apply = true;
  EXPECT_FALSE(follower_.CatchUp().ok());
  EXPECT_EQ(follower_.caught_up_at(), first);
  sink_.fail_apply = false;
  ASSERT_TRUE(follower_.CatchUp().ok());
  EXPECT_EQ(follower_.caught_up_at(), now_);
}

// Records when each read came; thread-safe, unlike FakeSource. Closed, it
// holds reads at a gate until Open().
class RecordingSource : public FeedSource {
 public:
  absl::StatusOr<store::FeedRead> ReadSince(int64_t after, int) override {
    absl::MutexLock lock(&mu_);
    read_times_.push_back(absl::Now());
    mu_.Await(absl::Condition(&open_));
    return store::FeedRead{after, {}};
  }
  // Waits up to `timeout` for the n-th read to begin; its time, or nullopt.
  std::optional<absl::Time> NthRead(size_t n, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto arrived = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return read_times_.size() >= n; };
    if (!mu_.AwaitWithTimeout(absl::Condition(&arrived), timeout)) return std::nullopt;
    return read_times_[n - 1];
  }
  void SetOpen(bool open) {
    absl::MutexLock lock(&mu_);
    open_ = open;
  }
  size_t reads() {
    absl::MutexLock lock(&mu_);
    return read_times_.size();
  }

 private:
  absl::Mutex mu_;
  std::vector<absl::Time> read_times_ ABSL_GUARDED_BY(mu_);
  bool open_ ABSL_GUARDED_BY(mu_) = true;
};

class NoChangeSink : public FeedSink {
 public:
  absl::Status Apply(const std::vector<ChangeRecord>&) override { return absl::OkStatus(); }
  absl::StatusOr<int64_t> Reload() override { return 0; }
};

// A follower on the real clock, past its start's reload (which reads
// nothing from the source).
class FollowerThreadsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(follower_.CatchUp().ok()); }

  RecordingSource source_;
  NoChangeSink sink_;
  metrics::Metrics metrics_;
  FeedFollower follower_{&source_, &sink_, &metrics_, [] { return absl::Now(); }};
};

TEST_F(FollowerThreadsTest, NotificationsDuringTheGapShareOneRead) {
  const absl::Duration gap = absl::Milliseconds(300);
  follower_.StartFollowing(/*poll=*/absl::Hours(1), gap);
  follower_.Notify();
  std::optional<absl::Time> first = source_.NthRead(1, absl::Seconds(10));
  ASSERT_TRUE(first.has_value());
  for (int i = 0; i < 50; ++i) follower_.Notify();  // A busy writer's commits.
  std::optional<absl::Time> second = source_.NthRead(2, absl::Seconds(10));
  ASSERT_TRUE(second.has_value()) << "the notifications were never read";
  EXPECT_GE(*second - *first, gap);
  // All fifty were served by that one read: nothing new, nothing read.
  EXPECT_FALSE(source_.NthRead(3, gap * 2).has_value());
}

TEST_F(FollowerThreadsTest, CallersThatArriveDuringACatchUpShareTheNextOne) {
  source_.SetOpen(false);
  std::thread first([&] { EXPECT_TRUE(follower_.CatchUp().ok()); });
  ASSERT_TRUE(source_.NthRead(1, absl::Seconds(10)).has_value());  // Held at the gate.
  constexpr int kCallers = 8;
  absl::BlockingCounter started(kCallers);
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&] {
      started.DecrementCount();
      EXPECT_TRUE(follower_.CatchUp().ok());
    });
  }
  started.Wait();
  source_.SetOpen(true);
  first.join();
  for (auto& caller : callers) caller.join();
  // One after the first serves every caller that arrived during it; one
  // more at most for a caller that arrived as that one began. One each
  // would be 1 + 8.
  EXPECT_LE(source_.reads(), 3u);
}

}  // namespace
}  // namespace wsched::replica
