// The node kind of the watch streams (server/watch/node_change.h), and the
// generic parts (fanout, outbox, history follower) instantiated for it.
#include "server/watch/node_change.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/watch/fanout.h"
#include "server/watch/history_follower.h"
#include "server/watch/history_source.h"
#include "server/watch/outbox.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::watch {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

// Node `name` of `pool` at `version`: registered, changed, or removed.
std::shared_ptr<const NodeHappened> NodeAt(int64_t version, std::string name,
                                           std::string pool,
                                           NodeWhat what = NodeWhat::kChanged) {
  auto happened = std::make_shared<NodeHappened>();
  happened->name = std::move(name);
  happened->pool = std::move(pool);
  happened->version = version;
  happened->registered = what == NodeWhat::kRegistered;
  if (what != NodeWhat::kRemoved) {
    store::StoredNode node;
    node.info.name = happened->name;
    node.info.pool = happened->pool;
    node.version = version;
    happened->after = std::move(node);
  }
  return happened;
}

NodeEntry EntryOf(int64_t version,
                  std::vector<std::shared_ptr<const NodeHappened>> happened) {
  return {version, std::move(happened)};
}

class NodeRecorder : public NodeSubscriber {
public:
  void Deliver(NodeBatch batch) override {
    batches.push_back(std::move(batch));
  }
  void Abandon(absl::Status why) override {
    abandoned.push_back(std::move(why));
  }

  // "version:what:node" of every change handed over, in order.
  std::vector<std::string> Told() const {
    std::vector<std::string> told;
    for (const NodeBatch &batch : batches) {
      for (const NodeChange &change : batch.changes) {
        told.push_back(std::to_string(batch.version) + ":" +
                       NodeWhatName(change.what) + ":" + change.happened->name);
      }
    }
    return told;
  }

  std::vector<NodeBatch> batches;
  std::vector<absl::Status> abandoned;
};

TEST(NodeChangeTest, AChangeSaysWhetherItRegisteredChangedOrRemovedTheNode) {
  const NodeFilter all;
  EXPECT_EQ(Classify(all, NodeAt(1, "n1", "west", NodeWhat::kRegistered))->what,
            NodeWhat::kRegistered);
  EXPECT_EQ(Classify(all, NodeAt(2, "n1", "west"))->what, NodeWhat::kChanged);
  std::optional<NodeChange> removed =
      Classify(all, NodeAt(3, "n1", "west", NodeWhat::kRemoved));
  ASSERT_TRUE(removed.has_value());
  EXPECT_EQ(removed->what, NodeWhat::kRemoved);
  // Neither the pool nor the name changes: a node never leaves a filter.
  EXPECT_FALSE(removed->left_filter);
}

TEST(NodeChangeTest, AFilterSelectsByPoolAndNodeName) {
  auto n1 = NodeAt(1, "n1", "west");
  EXPECT_TRUE(Classify(NodeFilter{}, n1).has_value());
  EXPECT_TRUE(Classify(NodeFilter{.pool = "west"}, n1).has_value());
  EXPECT_FALSE(Classify(NodeFilter{.pool = "east"}, n1).has_value());
  EXPECT_TRUE(Classify(NodeFilter{.node = "n1"}, n1).has_value());
  EXPECT_FALSE(Classify(NodeFilter{.node = "n2"}, n1).has_value());
  EXPECT_FALSE(
      Classify(NodeFilter{.pool = "east", .node = "n1"}, n1).has_value());
  // A removed node is still of its pool.
  EXPECT_TRUE(Classify(NodeFilter{.pool = "west"},
                       NodeAt(2, "n1", "west", NodeWhat::kRemoved))
                  .has_value());
}

TEST(NodeChangeTest, StreamsAreFiledByNodeThenPoolThenAll) {
  EXPECT_EQ(IndexKeyOf(NodeFilter{}), "*");
  EXPECT_EQ(IndexKeyOf(NodeFilter{.pool = "west"}), "pool:west");
  EXPECT_EQ(IndexKeyOf(NodeFilter{.pool = "west", .node = "n1"}), "node:n1");
  absl::flat_hash_set<std::string> keys;
  KeysOf(*NodeAt(1, "n1", "west"), keys);
  EXPECT_THAT(keys, UnorderedElementsAre("node:n1", "pool:west"));
}

TEST(NodeFanoutTest, EachStreamIsHandedTheChangesOfItsNodesInVersionOrder) {
  NodeFanout fanout(absl::Seconds(10));
  NodeRecorder all, west, n2;
  ASSERT_TRUE(fanout.Join(&all, NodeFilter{}, 0, kT0).id.has_value());
  ASSERT_TRUE(
      fanout.Join(&west, NodeFilter{.pool = "west"}, 0, kT0).id.has_value());
  ASSERT_TRUE(
      fanout.Join(&n2, NodeFilter{.node = "n2"}, 0, kT0).id.has_value());
  fanout.Publish({EntryOf(1, {NodeAt(1, "n1", "west", NodeWhat::kRegistered),
                              NodeAt(1, "n2", "east", NodeWhat::kRegistered)}),
                  EntryOf(2, {}), // It changed workspaces only.
                  EntryOf(3, {NodeAt(3, "n2", "east")}),
                  EntryOf(4, {NodeAt(4, "n1", "west", NodeWhat::kRemoved)})},
                 kT0);
  EXPECT_THAT(all.Told(), ElementsAre("1:registered:n1", "1:registered:n2",
                                      "3:changed:n2", "4:removed:n1"));
  EXPECT_THAT(west.Told(), ElementsAre("1:registered:n1", "4:removed:n1"));
  EXPECT_THAT(n2.Told(), ElementsAre("1:registered:n2", "3:changed:n2"));
  EXPECT_EQ(fanout.position(), 4);
}

TEST(NodeFanoutTest,
     StreamsHandedTheSameChangesShareOneBatchAndTheirOutboxesBoundThem) {
  NodeFanout fanout(absl::Seconds(10));
  int wakes = 0;
  NodeOutbox first(1, [&] { ++wakes; });
  NodeOutbox second(1, [&] { ++wakes; });
  ASSERT_TRUE(
      fanout.Join(&first, NodeFilter{.pool = "west"}, 0, kT0).id.has_value());
  ASSERT_TRUE(
      fanout.Join(&second, NodeFilter{.node = "n1"}, 0, kT0).id.has_value());
  fanout.Publish({EntryOf(1, {NodeAt(1, "n1", "west")})}, kT0);
  NodeOutbox::Next a = first.Take();
  NodeOutbox::Next b = second.Take();
  ASSERT_TRUE(a.batch.has_value() && b.batch.has_value());
  EXPECT_EQ(a.batch->memo, b.batch->memo); // One encoding for both.
  EXPECT_EQ(wakes, 2);
  // Two entries for a buffer of one: the stream ends, WATCH_TOO_SLOW.
  fanout.Publish({EntryOf(2, {NodeAt(2, "n1", "west")}),
                  EntryOf(3, {NodeAt(3, "n1", "west")})},
                 kT0);
  NodeOutbox::Next end = first.Take();
  EXPECT_FALSE(end.batch.has_value());
  ASSERT_TRUE(end.end.has_value());
  EXPECT_EQ(end.end->code(), absl::StatusCode::kResourceExhausted);
}

// The node history in memory.
class FakeNodeHistory : public NodeHistorySource {
public:
  absl::StatusOr<NodeListing> List(const NodeFilter &filter) override {
    return NodeListing{};
  }
  absl::StatusOr<NodeHistoryRead> ReadSince(int64_t after, int limit) override {
    NodeHistoryRead read;
    read.head = head;
    if (after < oldest) {
      read.reaches = false;
      read.oldest = oldest;
      return read;
    }
    for (const NodeEntry &entry : entries) {
      if (entry.version > after &&
          static_cast<int>(read.entries.size()) < limit) {
        read.entries.push_back(entry);
      }
    }
    return read;
  }
  absl::StatusOr<int64_t> Head() override { return head; }

  std::vector<NodeEntry> entries;
  int64_t head = 0;
  int64_t oldest = 0;
};

TEST(NodeHistoryFollowerTest,
     ItHandsTheNodeHistoryToTheNodeFanoutAndBookmarksQuietStreams) {
  FakeNodeHistory history;
  NodeFanout fanout(absl::Seconds(10));
  absl::Time now = kT0;
  NodeHistoryFollower follower(&history, &fanout, {.page = 2},
                               [&] { return now; });
  NodeRecorder n1, east;
  ASSERT_TRUE(
      fanout.Join(&n1, NodeFilter{.node = "n1"}, 0, now).id.has_value());
  ASSERT_TRUE(
      fanout.Join(&east, NodeFilter{.pool = "east"}, 0, now).id.has_value());
  for (int64_t v = 1; v <= 3; ++v)
    history.entries.push_back(EntryOf(v, {NodeAt(v, "n1", "west")}));
  history.head = 3;
  ASSERT_TRUE(follower.FollowOnce().ok());
  EXPECT_THAT(n1.Told(),
              ElementsAre("1:changed:n1", "2:changed:n1", "3:changed:n1"));
  EXPECT_THAT(east.batches, IsEmpty());
  now = kT0 + absl::Seconds(10);
  ASSERT_TRUE(follower.FollowOnce().ok());
  ASSERT_EQ(east.batches.size(), 1u);
  EXPECT_EQ(east.batches[0].kind, BatchKind::kBookmark);
  EXPECT_EQ(east.batches[0].version, 3);
  // Pruned past where the fanout is: its streams are abandoned.
  history.oldest = 5;
  history.head = 5;
  ASSERT_TRUE(follower.FollowOnce().ok());
  EXPECT_EQ(n1.abandoned.size(), 1u);
  EXPECT_EQ(east.abandoned.size(), 1u);
  EXPECT_EQ(fanout.position(), 5);
}

} // namespace
} // namespace wsched::watch
