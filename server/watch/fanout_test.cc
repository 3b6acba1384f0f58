// The fanout that hands committed workspace changes to the streams that
// follow them (server/watch/fanout.h).
#include "server/watch/fanout.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/workspace.h"

namespace wsched::watch {
namespace {

using core::WorkspaceState;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);
constexpr absl::Duration kBookmarkEvery = absl::Seconds(10);

// Records what the fanout hands it.
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

// Counts deliveries across many subscribers.
class Counter : public Subscriber {
 public:
  explicit Counter(int* delivers) : delivers_(delivers) {}
  void Deliver(Batch batch) override { ++*delivers_; }
  void Abandon(absl::Status why) override {}

 private:
  int* const delivers_;
};

core::Workspace WorkspaceIn(std::string id, WorkspaceState state, std::string node = "",
                            std::string org = "o1") {
  core::Workspace w;
  w.id = std::move(id);
  w.org_id = std::move(org);
  w.project_id = "p1";
  w.class_id = "gpu-a100";
  w.state = state;
  if (!node.empty()) {
    w.pool = "west";
    w.node_name = std::move(node);
  }
  return w;
}

std::shared_ptr<const Happened> Changed(int64_t version, std::optional<core::Workspace> before,
                                        std::optional<core::Workspace> after) {
  auto happened = std::make_shared<Happened>();
  happened->id = before ? before->id : after->id;
  happened->version = version;
  if (before) {
    happened->before = FactsOf(*before);
  } else {
    happened->before = FactsOf(*after);
    happened->before.state = std::nullopt;
  }
  happened->after = std::move(after);
  return happened;
}

// Entry `version` creating pending workspace `id` of `org`.
Entry Created(int64_t version, std::string id = "w1", std::string org = "o1") {
  return {version,
          {Changed(version, std::nullopt,
                   WorkspaceIn(std::move(id), WorkspaceState::kPending, "", org))}};
}

// Entry `version` placing pending workspace `id` on `node`.
Entry PlacedOn(int64_t version, std::string id, std::string node) {
  return {version,
          {Changed(version, WorkspaceIn(id, WorkspaceState::kPending),
                   WorkspaceIn(id, WorkspaceState::kPlaced, node))}};
}

TEST(FanoutTest, AJoinBehindThePositionIsRefusedWithThePositionToReadUpTo) {
  Fanout fanout(kBookmarkEvery);
  ASSERT_TRUE(fanout.SkipTo(5));
  Recorder stream;
  Fanout::Joined behind = fanout.Join(&stream, Filter{}, 3, kT0);
  EXPECT_FALSE(behind.id.has_value());
  EXPECT_EQ(behind.position, 5);
  EXPECT_EQ(fanout.size(), 0u);
  // Having read the log up to the position, it joins.
  Fanout::Joined joined = fanout.Join(&stream, Filter{}, 5, kT0);
  EXPECT_TRUE(joined.id.has_value());
  EXPECT_EQ(joined.position, 5);
  EXPECT_EQ(fanout.size(), 1u);
}

TEST(FanoutTest, AMemberIsHandedOnlyTheEntriesItsFilterMatchesInVersionOrder) {
  Fanout fanout(kBookmarkEvery);
  Recorder stream;
  ASSERT_TRUE(fanout.Join(&stream, Filter{.org_id = "o1"}, 0, kT0).id.has_value());
  fanout.Publish({Created(1, "w1", "o1"), Created(2, "w2", "o2"), PlacedOn(3, "w1", "n1"),
                  Entry{4, {}}, Created(5, "w3", "o1")},
                 kT0);
  EXPECT_THAT(stream.Versions(), ElementsAre(1, 3, 5));
  for (const Batch& batch : stream.batches) {
    EXPECT_EQ(batch.kind, Batch::Kind::kChanges);
    ASSERT_EQ(batch.changes.size(), 1u);
  }
  EXPECT_EQ(stream.batches[0].changes[0].what, What::kPending);
  EXPECT_EQ(stream.batches[1].changes[0].what, What::kPlaced);
  EXPECT_EQ(stream.batches[2].changes[0].happened->id, "w3");
  // The position follows every entry, matched or not.
  EXPECT_EQ(fanout.position(), 5);
}

TEST(FanoutTest, StreamsHandedTheSameChangesShareOneEncoding) {
  Fanout fanout(kBookmarkEvery);
  Recorder all_a, all_b, o1, o2;
  ASSERT_TRUE(fanout.Join(&all_a, Filter{}, 0, kT0).id.has_value());
  ASSERT_TRUE(fanout.Join(&all_b, Filter{}, 0, kT0).id.has_value());
  ASSERT_TRUE(fanout.Join(&o1, Filter{.org_id = "o1"}, 0, kT0).id.has_value());
  ASSERT_TRUE(fanout.Join(&o2, Filter{.org_id = "o2"}, 0, kT0).id.has_value());
  Entry both = Created(1, "w1", "o1");
  both.happened.push_back(Created(1, "w2", "o2").happened[0]);
  fanout.Publish({both}, kT0);
  ASSERT_EQ(all_a.batches.size(), 1u);
  ASSERT_EQ(all_b.batches.size(), 1u);
  ASSERT_EQ(o1.batches.size(), 1u);
  ASSERT_EQ(o2.batches.size(), 1u);
  // The two unfiltered streams: one batch, one memo; each org its own.
  ASSERT_NE(all_a.batches[0].memo, nullptr);
  EXPECT_EQ(all_a.batches[0].memo, all_b.batches[0].memo);
  EXPECT_NE(o1.batches[0].memo, all_a.batches[0].memo);
  EXPECT_NE(o1.batches[0].memo, o2.batches[0].memo);
  EXPECT_EQ(all_a.batches[0].changes.size(), 2u);
  EXPECT_EQ(o1.batches[0].changes.size(), 1u);
}

TEST(FanoutTest, AnEntryIsHandedOutOnceEvenWhenPublishedTwice) {
  Fanout fanout(kBookmarkEvery);
  Recorder stream;
  ASSERT_TRUE(fanout.Join(&stream, Filter{}, 0, kT0).id.has_value());
  fanout.Publish({Created(1, "w1"), Created(2, "w2")}, kT0);
  // A retried page overlaps what was published.
  fanout.Publish({Created(2, "w2"), Created(3, "w3")}, kT0);
  EXPECT_THAT(stream.Versions(), ElementsAre(1, 2, 3));
}

TEST(FanoutTest, AChangeReachesOnlyTheStreamsItsNodeIsFiledUnder) {
  Fanout fanout(kBookmarkEvery);
  Recorder n1, n2;
  ASSERT_TRUE(fanout.Join(&n1, Filter{.node = "n1"}, 0, kT0).id.has_value());
  ASSERT_TRUE(fanout.Join(&n2, Filter{.node = "n2"}, 0, kT0).id.has_value());
  // Placed on n1: n1's node is the one after.
  fanout.Publish({PlacedOn(1, "w1", "n1")}, kT0);
  // Stopped off n1: n1's node is the one before, and the workspace leaves its filter.
  fanout.Publish({{2,
                   {Changed(2, WorkspaceIn("w1", WorkspaceState::kPlaced, "n1"),
                            WorkspaceIn("w1", WorkspaceState::kStopped))}}},
                 kT0);
  // Lost on n1, placed again on n2: both nodes hear of it.
  fanout.Publish({{3,
                   {Changed(3, WorkspaceIn("w2", WorkspaceState::kLost, "n1"),
                            WorkspaceIn("w2", WorkspaceState::kPlaced, "n2"))}}},
                 kT0);
  // A pending workspace has no node: neither hears of it.
  fanout.Publish({Created(4, "w3")}, kT0);

  EXPECT_THAT(n1.Versions(), ElementsAre(1, 2, 3));
  EXPECT_FALSE(n1.batches[0].changes[0].left_filter);
  EXPECT_EQ(n1.batches[1].changes[0].what, What::kStopped);
  EXPECT_TRUE(n1.batches[1].changes[0].left_filter);
  EXPECT_TRUE(n1.batches[2].changes[0].left_filter);
  EXPECT_THAT(n2.Versions(), ElementsAre(3));
  EXPECT_EQ(n2.batches[0].changes[0].what, What::kPlaced);
  EXPECT_FALSE(n2.batches[0].changes[0].left_filter);
}

TEST(FanoutTest, EachMemberIsHandedOnlyItsOwnChangesOfAnEntry) {
  Fanout fanout(kBookmarkEvery);
  Recorder everything, o2, pool;
  ASSERT_TRUE(fanout.Join(&everything, Filter{}, 0, kT0).id.has_value());
  ASSERT_TRUE(fanout.Join(&o2, Filter{.org_id = "o2"}, 0, kT0).id.has_value());
  ASSERT_TRUE(fanout.Join(&pool, Filter{.pool = "west"}, 0, kT0).id.has_value());
  Entry entry = Created(1, "w1", "o1");
  entry.happened.push_back(Created(1, "w2", "o2").happened[0]);
  entry.happened.push_back(PlacedOn(1, "w3", "n4").happened[0]);
  fanout.Publish({entry}, kT0);

  ASSERT_EQ(everything.batches.size(), 1u);
  ASSERT_EQ(everything.batches[0].changes.size(), 3u);
  ASSERT_EQ(o2.batches.size(), 1u);
  ASSERT_EQ(o2.batches[0].changes.size(), 1u);
  EXPECT_EQ(o2.batches[0].changes[0].happened->id, "w2");
  ASSERT_EQ(pool.batches.size(), 1u);
  ASSERT_EQ(pool.batches[0].changes.size(), 1u);
  EXPECT_EQ(pool.batches[0].changes[0].happened->id, "w3");
}

TEST(FanoutTest, AMemberJoinedAheadIsNotHandedWhatItAlreadyRead) {
  Fanout fanout(kBookmarkEvery);
  ASSERT_TRUE(fanout.SkipTo(5));
  Recorder stream;
  // It read the log itself up to 7, past the fanout's position.
  Fanout::Joined joined = fanout.Join(&stream, Filter{}, 7, kT0);
  ASSERT_TRUE(joined.id.has_value());
  EXPECT_EQ(joined.position, 5);
  fanout.Publish({Created(6, "w6"), Created(7, "w7"), Created(8, "w8")}, kT0);
  EXPECT_THAT(stream.Versions(), ElementsAre(8));
}

TEST(FanoutTest, AMemberThatLeftIsHandedNothingMore) {
  Fanout fanout(kBookmarkEvery);
  Recorder stream, other;
  std::optional<Fanout::Id> id = fanout.Join(&stream, Filter{}, 0, kT0).id;
  ASSERT_TRUE(id.has_value());
  ASSERT_TRUE(fanout.Join(&other, Filter{}, 0, kT0).id.has_value());
  fanout.Publish({Created(1, "w1")}, kT0);
  fanout.Leave(*id);
  EXPECT_EQ(fanout.size(), 1u);
  fanout.Publish({Created(2, "w2")}, kT0);
  fanout.Bookmark(kT0 + absl::Hours(1));
  EXPECT_THAT(stream.Versions(), ElementsAre(1));
  EXPECT_THAT(other.Versions(), ElementsAre(1, 2));
  // Leaving twice is harmless.
  fanout.Leave(*id);
  EXPECT_EQ(fanout.size(), 1u);
}

TEST(FanoutTest, SkipToMovesThePositionOnlyWhileNobodyIsSubscribed) {
  Fanout fanout(kBookmarkEvery);
  EXPECT_TRUE(fanout.SkipTo(5));
  EXPECT_EQ(fanout.position(), 5);
  Recorder stream;
  std::optional<Fanout::Id> id = fanout.Join(&stream, Filter{}, 5, kT0).id;
  ASSERT_TRUE(id.has_value());
  // A member needs the entries in between.
  EXPECT_FALSE(fanout.SkipTo(9));
  EXPECT_EQ(fanout.position(), 5);
  fanout.Leave(*id);
  EXPECT_TRUE(fanout.SkipTo(9));
  EXPECT_EQ(fanout.position(), 9);
  // Never back.
  EXPECT_TRUE(fanout.SkipTo(3));
  EXPECT_EQ(fanout.position(), 9);
  EXPECT_THAT(stream.batches, IsEmpty());
}

TEST(FanoutTest, AQuietMemberIsToldThePositionOnlyAfterBookmarkEvery) {
  Fanout fanout(kBookmarkEvery);
  Recorder stream;
  ASSERT_TRUE(fanout.Join(&stream, Filter{.org_id = "o1"}, 0, kT0).id.has_value());
  // Entries it does not follow move the position past what it has.
  fanout.Publish({Created(1, "w1", "o2"), Created(2, "w2", "o2")}, kT0);
  fanout.Bookmark(kT0 + kBookmarkEvery - absl::Seconds(1));
  EXPECT_THAT(stream.batches, IsEmpty());
  fanout.Bookmark(kT0 + kBookmarkEvery);
  ASSERT_EQ(stream.batches.size(), 1u);
  EXPECT_EQ(stream.batches[0].kind, Batch::Kind::kBookmark);
  EXPECT_EQ(stream.batches[0].version, 2);
  EXPECT_THAT(stream.batches[0].changes, IsEmpty());
  // Nothing new since: no second bookmark, however long it stays quiet.
  fanout.Bookmark(kT0 + kBookmarkEvery * 5);
  EXPECT_EQ(stream.batches.size(), 1u);
}

// `n` members that joined at kT0 and then missed a change they do not
// follow: all due for a bookmark at kT0 + kBookmarkEvery. Each counts
// what it is told into `told`.
std::vector<std::unique_ptr<Counter>> QuietMembers(Fanout& fanout, int n, int* told) {
  std::vector<std::unique_ptr<Counter>> streams;
  for (int i = 0; i < n; ++i) {
    streams.push_back(std::make_unique<Counter>(told));
    EXPECT_TRUE(fanout.Join(streams.back().get(), Filter{.org_id = "o1"}, 0, kT0).id.has_value());
  }
  fanout.Publish({Created(1, "w1", "o2")}, kT0);
  return streams;
}

TEST(FanoutTest, BookmarksToManyQuietMembersAreSpreadOverSeveralLooks) {
  Fanout fanout(kBookmarkEvery);
  constexpr int kMembers = 500;
  int told = 0;
  auto streams = QuietMembers(fanout, kMembers, &told);
  const absl::Duration look = kBookmarkEvery / Fanout::kSweepsPerInterval;
  fanout.Bookmark(kT0 + kBookmarkEvery - look);  // A look just before they are due.
  EXPECT_EQ(told, 0);
  const absl::Time due = kT0 + kBookmarkEvery;
  fanout.Bookmark(due);
  // A look one hundredth of an interval after the last tells at most
  // max(64, 2 x members / 100) members.
  EXPECT_EQ(told, 64);
  fanout.Bookmark(due);  // Too soon for another look.
  EXPECT_EQ(told, 64);
  int looks = 1;
  for (absl::Time now = due + look; told < kMembers; now += look, ++looks) fanout.Bookmark(now);
  EXPECT_EQ(looks, (kMembers + 63) / 64);
  // Each was told once: nothing is due again before another interval.
  fanout.Bookmark(due + kBookmarkEvery / 2);
  EXPECT_EQ(told, kMembers);
}

TEST(FanoutTest, ALookLongAfterTheLastTellsMore) {
  // Called rarely (a quiet replica reads the log once per poll), it keeps
  // up all the same: the budget is prorated to the time since the last look.
  Fanout fanout(kBookmarkEvery);
  constexpr int kMembers = 1000;
  int told = 0;
  auto streams = QuietMembers(fanout, kMembers, &told);
  fanout.Bookmark(kT0 + kBookmarkEvery - absl::Seconds(1));
  EXPECT_EQ(told, 0);
  fanout.Bookmark(kT0 + kBookmarkEvery);  // One second later: 2 x 1000 x 1/10.
  EXPECT_EQ(told, 200);
  fanout.Bookmark(kT0 + kBookmarkEvery + absl::Seconds(4));  // 2 x 1000 x 4/10.
  EXPECT_EQ(told, kMembers);
}

TEST(FanoutTest, TheBookmarkClockRestartsWithEachBatchSent) {
  Fanout fanout(kBookmarkEvery);
  Recorder stream;
  ASSERT_TRUE(fanout.Join(&stream, Filter{.org_id = "o1"}, 0, kT0).id.has_value());
  fanout.Publish({Created(1, "w1", "o1")}, kT0 + absl::Seconds(8));
  fanout.Publish({Created(2, "w2", "o2")}, kT0 + absl::Seconds(9));
  // Ten seconds since it joined, but only four since it was sent version 1.
  fanout.Bookmark(kT0 + absl::Seconds(12));
  EXPECT_THAT(stream.Versions(), ElementsAre(1));
  fanout.Bookmark(kT0 + absl::Seconds(18));
  ASSERT_EQ(stream.batches.size(), 2u);
  EXPECT_EQ(stream.batches[1].kind, Batch::Kind::kBookmark);
  EXPECT_EQ(stream.batches[1].version, 2);
  // A bookmark restarts it too.
  fanout.Publish({Created(3, "w3", "o2")}, kT0 + absl::Seconds(19));
  fanout.Bookmark(kT0 + absl::Seconds(27));
  EXPECT_EQ(stream.batches.size(), 2u);
  fanout.Bookmark(kT0 + absl::Seconds(28));
  ASSERT_EQ(stream.batches.size(), 3u);
  EXPECT_EQ(stream.batches[2].kind, Batch::Kind::kBookmark);
  EXPECT_EQ(stream.batches[2].version, 3);
}

TEST(FanoutTest, AMemberThatHasThePositionIsNotBookmarked) {
  Fanout fanout(kBookmarkEvery);
  Recorder current, ahead;
  ASSERT_TRUE(fanout.Join(&current, Filter{}, 0, kT0).id.has_value());
  ASSERT_TRUE(fanout.Join(&ahead, Filter{}, 9, kT0).id.has_value());
  fanout.Publish({Created(1, "w1")}, kT0);
  fanout.Bookmark(kT0 + absl::Hours(1));
  EXPECT_THAT(current.Versions(), ElementsAre(1));
  // Its resume point is already past the position.
  EXPECT_THAT(ahead.batches, IsEmpty());
}

TEST(FanoutTest, RebaseAbandonsOnlyTheMembersBehindTheOldestVersionKept) {
  Fanout fanout(kBookmarkEvery);
  ASSERT_TRUE(fanout.SkipTo(5));
  Recorder behind, at_oldest, ahead;
  std::optional<Fanout::Id> behind_id = fanout.Join(&behind, Filter{}, 5, kT0).id;
  ASSERT_TRUE(behind_id.has_value());
  ASSERT_TRUE(fanout.Join(&at_oldest, Filter{}, 10, kT0).id.has_value());
  ASSERT_TRUE(fanout.Join(&ahead, Filter{}, 12, kT0).id.has_value());

  fanout.Rebase(absl::UnavailableError("fell behind"), 10);
  ASSERT_EQ(behind.abandoned.size(), 1u);
  EXPECT_EQ(behind.abandoned[0].code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(behind.abandoned[0].message(), "fell behind");
  EXPECT_THAT(at_oldest.abandoned, IsEmpty());
  EXPECT_THAT(ahead.abandoned, IsEmpty());
  EXPECT_EQ(fanout.size(), 2u);
  EXPECT_EQ(fanout.position(), 10);

  // The ones kept carry on from the oldest version; the abandoned one hears nothing more.
  fanout.Publish({Created(11, "w11"), Created(12, "w12"), Created(13, "w13")}, kT0);
  EXPECT_THAT(at_oldest.Versions(), ElementsAre(11, 12, 13));
  EXPECT_THAT(ahead.Versions(), ElementsAre(13));
  EXPECT_THAT(behind.batches, IsEmpty());
  // Its stream leaving afterwards is harmless.
  fanout.Leave(*behind_id);
  EXPECT_EQ(fanout.size(), 2u);
}

TEST(FanoutTest, TheCostOfAChangeFollowsTheStreamsItMatchesNotTheStreamsThereAre) {
  Fanout fanout(kBookmarkEvery);
  int delivers = 0;
  std::vector<std::unique_ptr<Counter>> streams;
  for (int i = 0; i < 1000; ++i) {
    streams.push_back(std::make_unique<Counter>(&delivers));
    ASSERT_TRUE(fanout.Join(streams.back().get(), Filter{.node = absl::StrCat("n", i)}, 0, kT0).id);
  }
  fanout.Publish({PlacedOn(1, "w1", "n417")}, kT0);
  EXPECT_EQ(delivers, 1);
  fanout.Publish({Created(2, "w2")}, kT0);  // On no node.
  EXPECT_EQ(delivers, 1);
}

TEST(FanoutTest, AFilterIsFiledUnderItsMostSelectiveField) {
  EXPECT_EQ(IndexKeyOf(Filter{}), "*");
  EXPECT_EQ(IndexKeyOf(Filter{.states = {WorkspaceState::kPending}}), "*");
  EXPECT_EQ(IndexKeyOf(Filter{.org_id = "o1"}), "org:o1");
  EXPECT_EQ(IndexKeyOf(Filter{.org_id = "o1", .class_id = "c1"}), "class:c1");
  EXPECT_EQ(IndexKeyOf(Filter{.org_id = "o1", .class_id = "c1", .pool = "west"}), "pool:west");
  EXPECT_EQ(
      IndexKeyOf(Filter{.org_id = "o1", .project_id = "p1", .class_id = "c1", .pool = "west"}),
      "project:p1");
  EXPECT_EQ(
      IndexKeyOf(Filter{
          .org_id = "o1", .project_id = "p1", .class_id = "c1", .pool = "west", .node = "n7"}),
      "node:n7");
  // A scope is no field of the workspace's own.
  EXPECT_EQ(IndexKeyOf(Filter{.scope_orgs = std::vector<std::string>{"o1"}}), "*");
}

TEST(FanoutTest, AStreamFiledUnderAnyIndexKeyHearsOfTheChangesItMatches) {
  Fanout fanout(kBookmarkEvery);
  Recorder by_org, by_class, by_pool, by_project, by_node, by_scope;
  const std::vector<std::pair<Recorder*, Filter>> members = {
      {&by_org, Filter{.org_id = "o1"}},
      {&by_class, Filter{.class_id = "gpu-a100"}},
      {&by_pool, Filter{.pool = "west"}},
      {&by_project, Filter{.project_id = "p1"}},
      {&by_node, Filter{.node = "n3"}},
      {&by_scope, Filter{.scope_projects = std::vector<std::string>{"p1"}}},
  };
  for (const auto& [stream, filter] : members) {
    ASSERT_TRUE(fanout.Join(stream, filter, 0, kT0).id.has_value());
  }
  fanout.Publish({PlacedOn(1, "w1", "n3")}, kT0);
  for (const auto& [stream, filter] : members) {
    EXPECT_THAT(stream->Versions(), ElementsAre(1)) << IndexKeyOf(filter);
  }
}

}  // namespace
}  // namespace wsched::watch
