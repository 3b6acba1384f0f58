// WatchWorkspaces through real server processes and PostgreSQL (docs/api.md
// "Following every workspace"): the listing is the database's state at the
// SYNCED version, the changes after it are the change log's, in order,
// exactly once, also across a replica killed with SIGKILL; a version the log
// no longer keeps is refused with RESUME_TOO_OLD; filters and role scopes
// hold; a stream that never reads is ended with WATCH_TOO_SLOW while the
// others keep up.
#include <signal.h>

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/metrics_text.h"
#include "tests/support/placing_load.h"
#include "tests/support/server_process.h"
#include "tests/support/stream_reader.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::ElementsAre;
using Response = v1::WatchWorkspacesResponse;

// One stream, read on its own thread into memory.
class Watcher
    : public testing::StreamReader<v1::PlacementService, v1::WatchWorkspacesRequest, Response> {
 public:
  Watcher(const std::shared_ptr<grpc::Channel>& channel, const std::string& token,
          v1::WatchWorkspacesRequest request, bool reads = true)
      : StreamReader(channel, token, &v1::PlacementService::Stub::WatchWorkspaces, request, reads) {
  }
};

v1::WatchWorkspacesRequest From(int64_t version) {
  v1::WatchWorkspacesRequest request;
  request.set_resume_version(version);
  return request;
}

using testing::ErrorInfoOf;

// "version:id:workspace_version" of every change the stream received, in
// the order received (the listing left out).
std::vector<std::string> ChangesOf(const std::vector<Response>& messages) {
  std::vector<std::string> out;
  for (const Response& m : messages) {
    if (m.kind() != Response::KIND_CHANGES) continue;
    for (const v1::WorkspaceChange& c : m.changes()) {
      // Each change's own version: a message may carry several.
      EXPECT_LE(c.version(), m.version());
      out.push_back(absl::StrCat(c.version(), ":", c.workspace().id(), ":", c.workspace_version()));
    }
  }
  return out;
}

// The same, from the change log: every workspace change after `after` up to `through`.
std::vector<std::string> LoggedChanges(const testing::TestDatabase& db, int64_t after,
                                       int64_t through) {
  std::string joined = db.Query(absl::StrCat(
      "SELECT COALESCE(string_agg(c.seq || ':' || (e.value->>'id') || ':' || "
      "(e.value->>'version'), ',' ORDER BY c.seq, e.ord), '') FROM change_log c, "
      "jsonb_array_elements(c.workspaces) WITH ORDINALITY e(value, ord) "
      "WHERE c.seq > ", after, " AND c.seq <= ", through));
  std::vector<std::string> out;
  if (!joined.empty()) out = absl::StrSplit(joined, ',');
  return out;
}

// "id:state" of each listed workspace, in id order.
std::string ListingOf(const std::vector<Response>& messages) {
  std::vector<std::string> out;
  for (const Response& m : messages) {
    if (m.kind() != Response::KIND_EXISTING) continue;
    for (const v1::WorkspaceChange& c : m.changes()) {
      out.push_back(absl::StrCat(c.workspace().id(), ":",
                                 v1::WorkspaceState_Name(c.workspace().state()).substr(16)));
    }
  }
  return absl::StrJoin(out, ",");
}

int64_t Head(const testing::TestDatabase& db) {
  int64_t head = 0;
  EXPECT_TRUE(absl::SimpleAtoi(db.Query("SELECT seq FROM feed_head"), &head));
  return head;
}

testing::ServerConfig Config(const testing::TestDatabase& db, std::vector<std::string> flags = {}) {
  testing::ServerConfig config{db.url(), testing::SourcePath("classes/saas.yaml")};
  // Quiet streams learn the head within a second (the default is 10 s).
  config.extra_flags = {"--watch_bookmark_interval=1s"};
  config.extra_flags.insert(config.extra_flags.end(), flags.begin(), flags.end());
  return config;
}

void Place(const std::shared_ptr<grpc::Channel>& channel, const std::string& id) {
  v1::Workspace out;
  ASSERT_TRUE(testing::PlaceAs(channel, id, "gpu-1x", &out).ok()) << id;
}

TEST(WorkspaceStream, ListThenWatchGivesTheDatabaseAtTheMarkerThenEveryChangeInOrder) {
  testing::TestDatabase db;
  testing::ServerProcess server(Config(db));
  ASSERT_TRUE(server.started());
  testing::RegisterNode(server.channel(), testing::FakeGpuNode("n-1", "gpu-h100"));
  for (int i = 0; i < 10; ++i) Place(server.channel(), absl::StrCat("w-", i));  // 8 GPUs: 2 wait.
  v1::Workspace out;
  ASSERT_TRUE(testing::StopAs(server.channel(), "w-0", &out).ok());
  // The stop lets w-8 in; list once the queue has moved.
  ASSERT_TRUE(testing::Eventually([&] {
    return testing::GetAs(server.channel(), "w-8", &out).ok() &&
           out.state() == v1::WORKSPACE_STATE_PLACED;
  }));

  Watcher watcher(server.channel(), testing::kControlPlaneToken, From(0));
  ASSERT_TRUE(testing::Eventually([&] { return watcher.Synced(); }));
  const int64_t synced = watcher.SyncedAt();
  // Nothing changed since: the listing is the database's live workspaces now.
  EXPECT_EQ(synced, Head(db));
  EXPECT_EQ(ListingOf(watcher.messages()),
            db.Query("SELECT string_agg(id || ':' || upper(state), ',' ORDER BY id) FROM "
                     "workspaces WHERE state IN ('pending', 'placed', 'lost')"));

  // A stop frees a GPU for a waiting one; new ones place and wait. The
  // queue's placement of w-9 commits on its own time: await it, so that the
  // head read below is past it.
  ASSERT_TRUE(testing::StopAs(server.channel(), "w-1", &out).ok());
  ASSERT_TRUE(testing::Eventually([&] {
    return testing::GetAs(server.channel(), "w-9", &out).ok() &&
           out.state() == v1::WORKSPACE_STATE_PLACED;
  }));
  for (int i = 10; i < 13; ++i) Place(server.channel(), absl::StrCat("w-", i));
  const int64_t head = Head(db);
  ASSERT_TRUE(testing::Eventually([&] { return watcher.version() >= head; }));
  const std::vector<std::string> seen = ChangesOf(watcher.messages());
  EXPECT_EQ(seen, LoggedChanges(db, synced, head));
  EXPECT_GE(seen.size(), 5u); // Two stops' worth of news at least: the stop,
                              // the queue moving, the new ones.

  // What each says happened: the stop of w-1 and the placement of w-10 onward.
  std::map<std::string, v1::WorkspaceChange::What> last;
  for (const Response& m : watcher.messages()) {
    if (m.kind() != Response::KIND_CHANGES) continue;
    for (const auto& c : m.changes()) last[c.workspace().id()] = c.what();
  }
  EXPECT_EQ(last["w-1"], v1::WorkspaceChange::WHAT_STOPPED);
  EXPECT_EQ(last["w-12"], v1::WorkspaceChange::WHAT_PENDING);
  std::printf("listing of %s workspaces at version %lld, then %zu changes up to %lld, equal to "
              "the change log\n",
              db.Query("SELECT count(*) FROM workspaces WHERE state IN ('pending','placed','lost')")
                  .c_str(),
              static_cast<long long>(synced), seen.size(), static_cast<long long>(head));
}

TEST(WorkspaceStream, AStreamResumedOnAnotherReplicaAfterSigkillMissesNothingAndRepeatsNothing) {
  testing::TestDatabase db;
  testing::ServerProcess a(Config(db));
  testing::ServerProcess b(Config(db));
  ASSERT_TRUE(a.started() && b.started());
  for (int n = 0; n < 3; ++n) {
    testing::RegisterNode(b.channel(), testing::FakeGpuNode(absl::StrCat("k-", n), "gpu-h100"));
  }
  auto first = std::make_unique<Watcher>(a.channel(), testing::kControlPlaneToken, From(0));
  ASSERT_TRUE(testing::Eventually([&] { return first->Synced(); }));
  const int64_t synced = first->SyncedAt();
  testing::PlacingLoad load(b.channel(), "resume", 4);  // 24 GPUs: later ones wait.
  ASSERT_TRUE(testing::Eventually([&] { return ChangesOf(first->messages()).size() >= 20; }, 30));
  a.Signal(SIGKILL);
  ASSERT_TRUE(testing::Eventually([&] { return first->ended(); }, 30));
  std::vector<Response> before_kill = first->messages();
  const int64_t resume_from = first->version();

  Watcher second(b.channel(), testing::kControlPlaneToken, From(resume_from));
  ASSERT_TRUE(testing::Eventually([&] { return ChangesOf(second.messages()).size() >= 20; }, 30));
  load.Stop();
  const int64_t head = Head(db);
  ASSERT_TRUE(testing::Eventually([&] { return second.version() >= head; }, 30));

  std::vector<std::string> seen = ChangesOf(before_kill);
  const std::vector<std::string> after_resume = ChangesOf(second.messages());
  seen.insert(seen.end(), after_resume.begin(), after_resume.end());
  const std::vector<std::string> logged = LoggedChanges(db, synced, head);
  EXPECT_EQ(seen, logged);  // Same order, nothing missing, nothing twice.
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), seen.size());
  std::printf("SIGKILL of the replica serving the stream: %zu changes before, %zu after resuming "
              "from version %lld on another replica; the %zu together equal the change log's "
              "(%lld, %lld]\n",
              ChangesOf(before_kill).size(), after_resume.size(),
              static_cast<long long>(resume_from), seen.size(), static_cast<long long>(synced),
              static_cast<long long>(head));
}

TEST(WorkspaceStream, AVersionTheLogNoLongerKeepsIsRefusedWithTheOldestThatCanResume) {
  testing::TestDatabase db;
  testing::ServerProcess server(Config(db));
  ASSERT_TRUE(server.started());
  testing::RegisterNode(server.channel(), testing::FakeGpuNode("n-1", "gpu-h100"));
  for (int i = 0; i < 4; ++i) Place(server.channel(), absl::StrCat("w-", i));
  const int64_t head = Head(db);
  // Pruning (--feed_retention) as it would after 15 minutes.
  db.Query(absl::StrCat("DELETE FROM change_log WHERE seq <= ", head - 2, " RETURNING 1"));

  Watcher old(server.channel(), testing::kControlPlaneToken, From(1));
  ASSERT_TRUE(testing::Eventually([&] { return old.ended(); }));
  std::map<std::string, std::string> metadata;
  EXPECT_EQ(old.status().error_code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_EQ(ErrorInfoOf(old.status(), &metadata), "RESUME_TOO_OLD");
  EXPECT_EQ(metadata["oldest_version"], absl::StrCat(head - 2));
  EXPECT_TRUE(old.messages().empty());

  // From the oldest kept: the two entries after it, and nothing refused.
  Watcher kept(server.channel(), testing::kControlPlaneToken, From(head - 2));
  ASSERT_TRUE(testing::Eventually([&] { return kept.version() >= head; }));
  EXPECT_EQ(ChangesOf(kept.messages()), LoggedChanges(db, head - 2, head));
  EXPECT_FALSE(kept.ended());

  Watcher ahead(server.channel(), testing::kControlPlaneToken, From(head + 100));
  ASSERT_TRUE(testing::Eventually([&] { return ahead.ended(); }));
  EXPECT_EQ(ahead.status().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ahead.status().error_message(), ::testing::HasSubstr("resume_version"));
}

TEST(WorkspaceStream, FiltersAndRoleScopesHold) {
  testing::TestDatabase db;
  testing::ServerProcess server(Config(db));
  ASSERT_TRUE(server.started());
  // Pending only: a workspace that gets placed leaves the filter, once.
  v1::WatchWorkspacesRequest pending_only = From(0);
  pending_only.mutable_filter()->add_states(v1::WORKSPACE_STATE_PENDING);
  Watcher pending(server.channel(), testing::kControlPlaneToken, pending_only);
  // A project owner of o-1/p-42 sees none of p-1's workspaces.
  Watcher owner(server.channel(), testing::kOwnerToken, From(0));
  ASSERT_TRUE(testing::Eventually([&] { return pending.Synced() && owner.Synced(); }));

  Place(server.channel(), "wait-1");  // No node yet: pending.
  testing::RegisterNode(server.channel(), testing::FakeGpuNode("n-1", "gpu-h100"));
  v1::Workspace out;
  ASSERT_TRUE(testing::Eventually([&] {
    return testing::GetAs(server.channel(), "wait-1", &out).ok() &&
           out.state() == v1::WORKSPACE_STATE_PLACED;
  }));
  ASSERT_TRUE(testing::StopAs(server.channel(), "wait-1", &out).ok());
  const int64_t head = Head(db);
  ASSERT_TRUE(testing::Eventually([&] { return pending.version() >= head; }));
  std::vector<std::string> told;
  for (const Response& m : pending.messages()) {
    for (const auto& c : m.changes()) {
      told.push_back(absl::StrCat(v1::WorkspaceChange::What_Name(c.what()),
                                  c.left_filter() ? "/left" : ""));
    }
  }
  // Queued, then placed (it leaves the filter); its stop is no longer this stream's.
  EXPECT_THAT(told, ElementsAre("WHAT_PENDING", "WHAT_PLACED/left"));

  ASSERT_TRUE(testing::Eventually([&] { return owner.version() >= head; }, 15));
  for (const Response& m : owner.messages()) EXPECT_EQ(m.changes_size(), 0) << m.ShortDebugString();

  // An agent follows only the node it speaks for, and must say which.
  Watcher agent(server.channel(), testing::kAgentToken, From(0));
  ASSERT_TRUE(testing::Eventually([&] { return agent.ended(); }));
  EXPECT_EQ(agent.status().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(agent.status().error_message(), ::testing::HasSubstr("filter.node_name"));
  // Bad input names the field and the rule.
  v1::WatchWorkspacesRequest bad = From(-1);
  Watcher refused(server.channel(), testing::kControlPlaneToken, bad);
  ASSERT_TRUE(testing::Eventually([&] { return refused.ended(); }));
  EXPECT_EQ(refused.status().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.status().error_message(), ::testing::HasSubstr("resume_version"));
}

TEST(WorkspaceStream, AStreamThatNeverReadsIsEndedWithItsLastVersionAndSlowsNoOtherStream) {
  testing::TestDatabase db;
  // A buffer above the follower's page (256 entries), so a burst does not
  // end a stream that reads.
  testing::ServerConfig config = Config(db, {"--watch_buffer=300"});
  config.metrics = true;
  testing::ServerProcess server(config);
  ASSERT_TRUE(server.started());
  for (int n = 0; n < 3; ++n) {
    testing::RegisterNode(
        server.channel(),
        testing::FakeGpuNode(absl::StrCat("k-", n), "gpu-h100"));
  }
  Watcher reader(server.channel(), testing::kControlPlaneToken, From(0));
  // Its own connection, with small HTTP/2 windows that do not grow: what
  // it does not read soon backs up into the server's buffer for it.
  grpc::ChannelArguments small_windows;
  small_windows.SetInt("grpc.http2.bdp_probe", 0);
  small_windows.SetInt("grpc.http2.lookahead_bytes", 1024);
  small_windows.SetInt("grpc.use_local_subchannel_pool", 1);
  Watcher stalled(grpc::CreateCustomChannel(server.address(), grpc::InsecureChannelCredentials(),
                                            small_windows),
                  testing::kControlPlaneToken, From(0), /*reads=*/false);
  ASSERT_TRUE(testing::Eventually([&] { return reader.Synced(); }));
  {
    // Enough news to fill the stalled stream's transport windows and its buffer.
    testing::PlacingLoad load(server.channel(), "slow", 4);
    ASSERT_TRUE(testing::Eventually([&] { return load.acked().size() >= 1500; }, 120));
  }
  const int64_t head = Head(db);
  // The reading stream has everything, whatever the other does.
  ASSERT_TRUE(testing::Eventually([&] { return reader.version() >= head; }, 30))
      << reader.status().error_message();
  EXPECT_FALSE(reader.ended());

  stalled.Read();
  ASSERT_TRUE(testing::Eventually([&] { return stalled.ended(); }, 30));
  std::map<std::string, std::string> metadata;
  EXPECT_EQ(stalled.status().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(ErrorInfoOf(stalled.status(), &metadata), "WATCH_TOO_SLOW");
  int64_t last = -1;
  ASSERT_TRUE(absl::SimpleAtoi(metadata["last_version"], &last));
  // Everything it received is whole and in order up to its last version,
  // so resuming from it misses nothing.
  const std::vector<Response> got = stalled.messages();
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back().version(), last);
  int64_t synced = 0;
  for (const Response& m : got) {
    if (m.kind() == Response::KIND_SYNCED) synced = m.version();
  }
  EXPECT_EQ(ChangesOf(got), LoggedChanges(db, synced, last));
  auto metric = [&](const std::string& name, const std::vector<std::string>& labels) {
    return testing::MetricValue(testing::HttpGet(server.metrics_port(), "/metrics"), name, labels)
        .value_or(-1);
  };
  // Counted once the server is done with it; the reader stays open.
  EXPECT_TRUE(testing::Eventually([&] {
    return metric("wsched_watch_streams_ended_total", {"reason=\"too_slow\""}) == 1 &&
           metric("wsched_watch_streams", {}) == 1;
  }));
  Watcher resumed(server.channel(), testing::kControlPlaneToken, From(last));
  ASSERT_TRUE(testing::Eventually([&] { return resumed.version() >= head; }, 30));
  EXPECT_EQ(ChangesOf(resumed.messages()), LoggedChanges(db, last, head));
  std::printf("a stream that did not read was ended at version %lld (WATCH_TOO_SLOW) while the "
              "reading stream reached the head, %lld; resumed, it got the rest\n",
              static_cast<long long>(last), static_cast<long long>(head));
}

}  // namespace
}  // namespace wsched
