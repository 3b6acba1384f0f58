// The follower that reads the change log's workspace history into the
// fanout (server/watch/history_follower.h), over an in-memory history.
#include "server/watch/history_follower.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/workspace.h"

namespace wsched::watch {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

// The change log in memory: it keeps the entries after `oldest`.
class FakeHistory : public HistorySource {
 public:
  absl::StatusOr<Listing> List(const Filter& filter) override { return listing; }

  absl::StatusOr<HistoryRead> ReadSince(int64_t after, int limit) override {
    read_afters.push_back(after);
    if (!fail_reads.ok()) return fail_reads;
    HistoryRead read;
    read.head = head;
    if (after < oldest) {
      read.reaches = false;
      read.oldest = oldest;
      return read;
    }
    for (const Entry& entry : entries) {
      if (entry.version <= after || entry.version > head) continue;
      if (static_cast<int>(read.entries.size()) == limit) break;
      read.entries.push_back(entry);
    }
    return read;
  }

  absl::StatusOr<int64_t> Head() override {
    ++head_calls;
    if (!fail_head.ok()) return fail_head;
    return head;
  }

  // Appends entry `version`, creating workspace w<version> of `org`, and moves the head to it.
  void Commit(int64_t version, std::string org = "o1") {
    core::Workspace w;
    w.id = "w" + std::to_string(version);
    w.org_id = std::move(org);
    w.project_id = "p1";
    w.class_id = "gpu-a100";
    w.state = core::WorkspaceState::kPending;
    auto happened = std::make_shared<Happened>();
    happened->id = w.id;
    happened->version = version;
    happened->before = FactsOf(w);
    happened->before.state = std::nullopt;
    happened->after = std::move(w);
    entries.push_back(Entry{version, {happened}});
    head = version;
  }

  std::vector<Entry> entries;
  int64_t head = 0;
  int64_t oldest = 0;
  Listing listing;
  absl::Status fail_reads;
  absl::Status fail_head;
  std::vector<int64_t> read_afters;
  int head_calls = 0;
};

class Recorder : public Subscriber {
 public:
  void Deliver(Batch batch) override { batches.push_back(std::move(batch)); }
  void Abandon(absl::Status why) override { abandoned.push_back(std::move(why)); }

  std::vector<int64_t> Versions() const {
    std::vector<int64_t> versions;
    for (const Batch& batch : batches) versions.push_back(batch.version);
    return versions;
  }

  std::vector<Batch> batches;
  std::vector<absl::Status> abandoned;
};

class HistoryFollowerTest : public ::testing::Test {
 protected:
  HistoryFollowerTest()
      : fanout_(absl::Seconds(10)),
        follower_(&history_, &fanout_, {.page = 2}, [this] { return now_; }) {}

  absl::Time now_ = kT0;
  FakeHistory history_;
  Fanout fanout_;
  HistoryFollower follower_;  // Never started: the tests call FollowOnce.
};

TEST_F(HistoryFollowerTest, WithNobodyWatchingItOnlySkipsToTheHead) {
  for (int64_t v = 1; v <= 5; ++v) history_.Commit(v);
  ASSERT_TRUE(follower_.FollowOnce().ok());
  EXPECT_THAT(history_.read_afters, IsEmpty());
  EXPECT_EQ(fanout_.position(), 5);
}

TEST_F(HistoryFollowerTest, ItReadsPageByPageAndHandsEverythingOutInOrder) {
  Recorder stream;
  ASSERT_TRUE(fanout_.Join(&stream, Filter{}, 0, now_).id.has_value());
  for (int64_t v = 1; v <= 5; ++v) history_.Commit(v);
  ASSERT_TRUE(follower_.FollowOnce().ok());
  EXPECT_THAT(stream.Versions(), ElementsAre(1, 2, 3, 4, 5));
  // Two entries a page, until the head.
  EXPECT_THAT(history_.read_afters, ElementsAre(0, 2, 4));
  EXPECT_EQ(fanout_.position(), 5);
  EXPECT_THAT(stream.abandoned, IsEmpty());
}

TEST_F(HistoryFollowerTest, EachWakeUpReadsOnlyWhatWasCommittedSince) {
  Recorder stream;
  ASSERT_TRUE(fanout_.Join(&stream, Filter{}, 0, now_).id.has_value());
  history_.Commit(1);
  ASSERT_TRUE(follower_.FollowOnce().ok());
  // Nothing new: one read that finds nothing.
  history_.read_afters.clear();
  ASSERT_TRUE(follower_.FollowOnce().ok());
  EXPECT_THAT(history_.read_afters, ElementsAre(1));
  history_.Commit(2);
  history_.Commit(3);
  ASSERT_TRUE(follower_.FollowOnce().ok());
  EXPECT_THAT(stream.Versions(), ElementsAre(1, 2, 3));
  EXPECT_EQ(fanout_.position(), 3);
}

TEST_F(HistoryFollowerTest, AStreamThatMatchesNothingIsBookmarkedAfterTheRead) {
  Recorder stream;
  ASSERT_TRUE(fanout_.Join(&stream, Filter{.org_id = "o2"}, 0, now_).id.has_value());
  for (int64_t v = 1; v <= 3; ++v) history_.Commit(v, "o1");
  now_ = kT0 + absl::Seconds(5);
  ASSERT_TRUE(follower_.FollowOnce().ok());
  EXPECT_THAT(stream.batches, IsEmpty());  // Not quiet long enough yet.
  now_ = kT0 + absl::Seconds(10);
  ASSERT_TRUE(follower_.FollowOnce().ok());
  ASSERT_EQ(stream.batches.size(), 1u);
  EXPECT_EQ(stream.batches[0].kind, Batch::Kind::kBookmark);
  EXPECT_EQ(stream.batches[0].version, 3);
}

TEST_F(HistoryFollowerTest, AStreamBehindWhatTheLogKeepsIsAbandonedAndTheRestCarryOn) {
  for (int64_t v = 1; v <= 10; ++v) history_.Commit(v);
  ASSERT_TRUE(fanout_.SkipTo(2));
  Recorder behind, ahead;
  ASSERT_TRUE(fanout_.Join(&behind, Filter{}, 2, now_).id.has_value());
  // This one read the log itself up to 8.
  ASSERT_TRUE(fanout_.Join(&ahead, Filter{}, 8, now_).id.has_value());
  // Retention dropped everything up to 6 before the follower got to it.
  history_.oldest = 6;

  ASSERT_TRUE(follower_.FollowOnce().ok());
  ASSERT_EQ(behind.abandoned.size(), 1u);
  EXPECT_EQ(behind.abandoned[0].code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(behind.batches, IsEmpty());
  EXPECT_THAT(ahead.abandoned, IsEmpty());
  EXPECT_THAT(ahead.Versions(), ElementsAre(9, 10));
  // It carried on from the oldest version kept.
  EXPECT_THAT(history_.read_afters, ElementsAre(2, 6, 8));
  EXPECT_EQ(fanout_.position(), 10);
  EXPECT_EQ(fanout_.size(), 1u);
}

TEST_F(HistoryFollowerTest, AFailedReadIsReturnedAndLeavesThePosition) {
  Recorder stream;
  ASSERT_TRUE(fanout_.Join(&stream, Filter{}, 0, now_).id.has_value());
  history_.Commit(1);
  history_.fail_reads = absl::UnavailableError("database down");
  absl::Status status = follower_.FollowOnce();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(fanout_.position(), 0);
  EXPECT_THAT(stream.batches, IsEmpty());
  // The next wake-up picks up where it stopped.
  history_.fail_reads = absl::OkStatus();
  ASSERT_TRUE(follower_.FollowOnce().ok());
  EXPECT_THAT(stream.Versions(), ElementsAre(1));
}

TEST_F(HistoryFollowerTest, AFailedHeadWithNobodyWatchingIsReturned) {
  history_.Commit(1);
  history_.fail_head = absl::UnavailableError("database down");
  EXPECT_EQ(follower_.FollowOnce().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(fanout_.position(), 0);
  EXPECT_THAT(history_.read_afters, IsEmpty());
}

}  // namespace
}  // namespace wsched::watch
