// WatchNodes through real server processes and PostgreSQL (docs/api.md
// "Following every node"): the listing is the database's nodes at the
// SYNCED version; registrations, cordons, drains, uncordons, GPU health and
// removals after it arrive as the change log has them, in order, once each,
// also when the stream resumes on another replica; a version the log no
// longer keeps is refused with RESUME_TOO_OLD; pool and node filters hold;
// an agent follows only its own node and a project owner none.
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
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "tests/support/eventually.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/stream_reader.h"
#include "tests/support/test_database.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Response = v1::WatchNodesResponse;

// One stream, read on its own thread into memory.
class NodeWatcher
    : public testing::StreamReader<v1::InventoryService, v1::WatchNodesRequest, Response> {
 public:
  NodeWatcher(const std::shared_ptr<grpc::Channel> &channel, const std::string &token,
              v1::WatchNodesRequest request)
      : StreamReader(channel, token, &v1::InventoryService::Stub::WatchNodes, request) {}
};

v1::WatchNodesRequest From(int64_t version, const std::string &pool = "",
                           const std::string &node = "") {
  v1::WatchNodesRequest request;
  request.set_resume_version(version);
  request.mutable_filter()->set_pool(pool);
  request.mutable_filter()->set_node_name(node);
  return request;
}

using testing::ErrorInfoOf;

// "version:node:node_version" of every change received, in order (the
// listing left out).
std::vector<std::string> ChangesOf(const std::vector<Response> &messages) {
  std::vector<std::string> out;
  for (const Response &m : messages) {
    if (m.kind() != Response::KIND_CHANGES)
      continue;
    for (const v1::NodeChange &c : m.changes()) {
      EXPECT_LE(c.version(), m.version());
      out.push_back(absl::StrCat(c.version(), ":", c.node().info().name(), ":",
                                 c.node_version()));
    }
  }
  return out;
}

// "WHAT:node:STATE" of every change received, in order.
std::vector<std::string> WhatOf(const std::vector<Response> &messages) {
  std::vector<std::string> out;
  for (const Response &m : messages) {
    if (m.kind() != Response::KIND_CHANGES)
      continue;
    for (const v1::NodeChange &c : m.changes()) {
      out.push_back(
          absl::StrCat(v1::NodeChange::What_Name(c.what()).substr(5), ":",
                       c.node().info().name(), ":",
                       v1::NodeState_Name(c.node().state()).substr(11)));
    }
  }
  return out;
}

// The same from the change log: every node change after `after` up to
// `through`, of `pool` when given.
std::vector<std::string> LoggedChanges(const testing::TestDatabase &db,
                                       int64_t after, int64_t through,
                                       const std::string &pool = "") {
  std::string joined = db.Query(absl::StrCat(
      "SELECT COALESCE(string_agg(c.seq || ':' || (e.value->>'id') || ':' || "
      "(e.value->>'version'), ',' ORDER BY c.seq, e.ord), '') FROM change_log "
      "c, "
      "jsonb_array_elements(c.nodes) WITH ORDINALITY e(value, ord) "
      "WHERE c.seq > ",
      after, " AND c.seq <= ", through,
      pool.empty() ? ""
                   : absl::StrCat(" AND e.value->>'pool' = '", pool, "'")));
  std::vector<std::string> out;
  if (!joined.empty())
    out = absl::StrSplit(joined, ',');
  return out;
}

// "name:STATE:version" of each listed node, in name order.
std::string ListingOf(const std::vector<Response> &messages) {
  std::vector<std::string> out;
  for (const Response &m : messages) {
    if (m.kind() != Response::KIND_EXISTING)
      continue;
    for (const v1::NodeChange &c : m.changes()) {
      out.push_back(
          absl::StrCat(c.node().info().name(), ":",
                       v1::NodeState_Name(c.node().state()).substr(11), ":",
                       c.node_version()));
    }
  }
  return absl::StrJoin(out, ",");
}

int64_t Head(const testing::TestDatabase &db) {
  int64_t head = 0;
  EXPECT_TRUE(absl::SimpleAtoi(db.Query("SELECT seq FROM feed_head"), &head));
  return head;
}

testing::ServerConfig Config(const testing::TestDatabase &db) {
  testing::ServerConfig config{db.url(),
                               testing::SourcePath("classes/saas.yaml")};
  // Quiet streams learn the head within a second (the default is 10 s).
  config.extra_flags = {"--watch_bookmark_interval=1s"};
  return config;
}

// Cordon, drain or uncordon (`state`), or remove ("remove"), as an admin.
void Operate(const std::shared_ptr<grpc::Channel> &channel,
             const std::string &action, const std::string &node) {
  auto stub = v1::InventoryService::NewStub(channel);
  grpc::ClientContext context;
  testing::Authorize(context, testing::kAdminToken);
  v1::NodeNameRequest request;
  request.set_node_name(node);
  v1::Node out;
  v1::Empty empty;
  grpc::Status status =
      action == "cordon"     ? stub->CordonNode(&context, request, &out)
      : action == "drain"    ? stub->DrainNode(&context, request, &out)
      : action == "uncordon" ? stub->UncordonNode(&context, request, &out)
                             : stub->RemoveNode(&context, request, &empty);
  ASSERT_TRUE(status.ok()) << action << " " << node << ": "
                           << status.error_message();
}

// The agent reports GPU 0 of `node` unhealthy.
void ReportGpuUnhealthy(const std::shared_ptr<grpc::Channel> &channel,
                        const v1::NodeInfo &node) {
  auto stub = v1::InventoryService::NewStub(channel);
  grpc::ClientContext context;
  testing::Authorize(context, testing::kAgentToken);
  v1::HeartbeatRequest request;
  request.set_node_name(node.name());
  (*request.mutable_gpu_health_by_uuid())[node.gpus(0).uuid()] =
      v1::GPU_HEALTH_UNHEALTHY;
  (*request.mutable_gpu_health_reason_by_uuid())[node.gpus(0).uuid()] =
      "XID 79";
  v1::HeartbeatResponse response;
  grpc::Status status = stub->Heartbeat(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
}

TEST(NodeStream,
     ListThenWatchGivesTheDatabaseAtTheMarkerThenEveryChangeInOrder) {
  testing::TestDatabase db;
  testing::ServerProcess server(Config(db));
  ASSERT_TRUE(server.started());
  testing::RegisterNode(server.channel(),
                        testing::FakeGpuNode("n-1", "gpu-h100"));
  testing::RegisterNode(server.channel(),
                        testing::FakeGpuNode("n-2", "gpu-h100"));
  Operate(server.channel(), "cordon", "n-2");

  NodeWatcher watcher(server.channel(), testing::kControlPlaneToken, From(0));
  ASSERT_TRUE(testing::Eventually([&] { return watcher.SyncedAt() > 0; }));
  const int64_t synced = watcher.SyncedAt();
  EXPECT_EQ(synced, Head(db)); // Nothing changed since.
  EXPECT_EQ(ListingOf(watcher.messages()),
            db.Query("SELECT string_agg(name || ':' || upper(state) || ':' || "
                     "version, ',' "
                     "ORDER BY name) FROM nodes"));

  const v1::NodeInfo n3 = testing::FakeGpuNode("n-3", "gpu-h100");
  testing::RegisterNode(server.channel(), n3);
  Operate(server.channel(), "drain", "n-1");
  Operate(server.channel(), "uncordon", "n-2");
  ReportGpuUnhealthy(server.channel(), n3);
  Operate(server.channel(), "remove", "n-1");
  const int64_t head = Head(db);
  ASSERT_TRUE(testing::Eventually([&] { return watcher.version() >= head; }));
  const std::vector<Response> messages = watcher.messages();
  EXPECT_EQ(ChangesOf(messages), LoggedChanges(db, synced, head));
  EXPECT_THAT(WhatOf(messages),
              ElementsAre("REGISTERED:n-3:READY", "CHANGED:n-1:DRAINING",
                          "CHANGED:n-2:READY", "CHANGED:n-3:READY",
                          "REMOVED:n-1:UNSPECIFIED"));
  // The GPU health change carries the node as committed, GPUs and all; what
  // moves with placements is left out.
  for (const Response &m : messages) {
    for (const v1::NodeChange &c : m.changes()) {
      EXPECT_FALSE(c.node().has_held()) << c.ShortDebugString();
      EXPECT_EQ(c.node().workspace_count(), 0);
      if (c.what() == v1::NodeChange::WHAT_CHANGED &&
          c.node().info().name() == "n-3") {
        ASSERT_EQ(c.node().info().gpus_size(), n3.gpus_size());
        EXPECT_EQ(c.node().info().gpus(0).health(), v1::GPU_HEALTH_UNHEALTHY);
        EXPECT_EQ(c.node().info().gpus(0).health_reason(), "XID 79");
        EXPECT_EQ(c.node().version(), c.node_version());
      }
      if (c.what() == v1::NodeChange::WHAT_REMOVED) {
        EXPECT_EQ(c.node().info().pool(), "gpu-h100");
      }
    }
  }
}

TEST(NodeStream, AStreamResumedOnAnotherReplicaMissesNothingAndRepeatsNothing) {
  testing::TestDatabase db;
  testing::ServerProcess a(Config(db));
  testing::ServerProcess b(Config(db));
  ASSERT_TRUE(a.started() && b.started());
  auto first =
      std::make_unique<NodeWatcher>(a.channel(), testing::kAdminToken, From(0));
  ASSERT_TRUE(testing::Eventually([&] { return first->SyncedAt() > 0; }));
  const int64_t synced = first->SyncedAt();
  for (int n = 0; n < 3; ++n) {
    testing::RegisterNode(
        b.channel(), testing::FakeGpuNode(absl::StrCat("k-", n), "gpu-h100"));
  }
  const int64_t middle = Head(db);
  ASSERT_TRUE(testing::Eventually([&] { return first->version() >= middle; }));
  const std::vector<Response> before = first->messages();
  const int64_t resume_from = first->version();
  first.reset(); // The client goes; it resumes on the other replica.

  NodeWatcher second(b.channel(), testing::kAdminToken, From(resume_from));
  Operate(a.channel(), "cordon", "k-0");
  Operate(b.channel(), "drain", "k-1");
  Operate(a.channel(), "remove", "k-2");
  const int64_t head = Head(db);
  ASSERT_TRUE(testing::Eventually([&] { return second.version() >= head; }));
  std::vector<std::string> seen = ChangesOf(before);
  const std::vector<std::string> after = ChangesOf(second.messages());
  seen.insert(seen.end(), after.begin(), after.end());
  EXPECT_EQ(seen, LoggedChanges(db, synced,
                                head)); // Same order, none missing, none twice.
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(),
            seen.size());
  EXPECT_EQ(seen.size(), 6u);
}

TEST(NodeStream,
     AVersionTheLogNoLongerKeepsIsRefusedWithTheOldestThatCanResume) {
  testing::TestDatabase db;
  testing::ServerProcess server(Config(db));
  ASSERT_TRUE(server.started());
  for (int n = 0; n < 4; ++n) {
    testing::RegisterNode(
        server.channel(),
        testing::FakeGpuNode(absl::StrCat("n-", n), "gpu-h100"));
  }
  const int64_t head = Head(db);
  db.Query(absl::StrCat("DELETE FROM change_log WHERE seq <= ", head - 2,
                        " RETURNING 1"));

  NodeWatcher old(server.channel(), testing::kControlPlaneToken, From(1));
  ASSERT_TRUE(testing::Eventually([&] { return old.ended(); }));
  std::map<std::string, std::string> metadata;
  EXPECT_EQ(old.status().error_code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_EQ(ErrorInfoOf(old.status(), &metadata), "RESUME_TOO_OLD");
  EXPECT_EQ(metadata["oldest_version"], absl::StrCat(head - 2));
  EXPECT_TRUE(old.messages().empty());

  NodeWatcher kept(server.channel(), testing::kControlPlaneToken,
                   From(head - 2));
  ASSERT_TRUE(testing::Eventually([&] { return kept.version() >= head; }));
  EXPECT_EQ(ChangesOf(kept.messages()), LoggedChanges(db, head - 2, head));
  EXPECT_FALSE(kept.ended());

  NodeWatcher ahead(server.channel(), testing::kControlPlaneToken,
                    From(head + 100));
  ASSERT_TRUE(testing::Eventually([&] { return ahead.ended(); }));
  EXPECT_EQ(ahead.status().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ahead.status().error_message(), HasSubstr("resume_version"));
}

TEST(NodeStream, PoolAndNodeFiltersHold) {
  testing::TestDatabase db;
  testing::ServerProcess server(Config(db));
  ASSERT_TRUE(server.started());
  testing::RegisterNode(server.channel(),
                        testing::FakeGpuNode("h-1", "gpu-h100"));
  testing::RegisterNode(server.channel(),
                        testing::FakeGpuNode("a-1", "gpu-a100"));
  NodeWatcher h100(server.channel(), testing::kControlPlaneToken,
                   From(0, "gpu-h100"));
  NodeWatcher a1(server.channel(), testing::kControlPlaneToken,
                 From(0, "", "a-1"));
  ASSERT_TRUE(testing::Eventually(
      [&] { return h100.SyncedAt() > 0 && a1.SyncedAt() > 0; }));
  const int64_t synced = std::min(h100.SyncedAt(), a1.SyncedAt());
  EXPECT_THAT(ListingOf(h100.messages()), HasSubstr("h-1:READY"));
  EXPECT_THAT(ListingOf(h100.messages()), ::testing::Not(HasSubstr("a-1")));

  testing::RegisterNode(server.channel(),
                        testing::FakeGpuNode("a-2", "gpu-a100"));
  testing::RegisterNode(server.channel(),
                        testing::FakeGpuNode("h-2", "gpu-h100"));
  Operate(server.channel(), "cordon", "a-1");
  Operate(server.channel(), "remove", "h-1");
  const int64_t head = Head(db);
  ASSERT_TRUE(testing::Eventually(
      [&] { return h100.version() >= head && a1.version() >= head; }));
  EXPECT_THAT(WhatOf(h100.messages()),
              ElementsAre("REGISTERED:h-2:READY", "REMOVED:h-1:UNSPECIFIED"));
  EXPECT_EQ(ChangesOf(h100.messages()),
            LoggedChanges(db, h100.SyncedAt(), head, "gpu-h100"));
  EXPECT_THAT(WhatOf(a1.messages()), ElementsAre("CHANGED:a-1:CORDONED"));
  EXPECT_GT(head, synced);

  // Bad input names the field and the rule.
  NodeWatcher refused(server.channel(), testing::kControlPlaneToken,
                      From(0, "Not A Pool"));
  ASSERT_TRUE(testing::Eventually([&] { return refused.ended(); }));
  EXPECT_EQ(refused.status().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.status().error_message(), HasSubstr("filter.pool"));
}

TEST(NodeStream, AnAgentFollowsItsOwnNodeOnlyAndAProjectOwnerNone) {
  testing::TestDatabase db;
  testing::ServerProcess server(Config(db));
  ASSERT_TRUE(server.started());
  testing::RegisterNode(server.channel(),
                        testing::FakeGpuNode("n-1", "gpu-h100"));
  testing::RegisterNode(server.channel(),
                        testing::FakeGpuNode("n-2", "gpu-h100"));
  // n-1's own credential (docs/security.md "Node identity").
  auto stub = v1::InventoryService::NewStub(server.channel());
  grpc::ClientContext context;
  testing::Authorize(context, testing::kAdminToken);
  v1::RotateNodeCredentialRequest rotate;
  rotate.set_node_name("n-1");
  v1::RotateNodeCredentialResponse credential;
  ASSERT_TRUE(stub->RotateNodeCredential(&context, rotate, &credential).ok());
  const std::string token = credential.node_token();

  NodeWatcher own(server.channel(), token, From(0, "", "n-1"));
  ASSERT_TRUE(testing::Eventually([&] { return own.SyncedAt() > 0; }));
  EXPECT_EQ(ListingOf(own.messages()).substr(0, 10), "n-1:READY:");
  Operate(server.channel(), "cordon", "n-2");
  Operate(server.channel(), "cordon", "n-1");
  const int64_t head = Head(db);
  ASSERT_TRUE(testing::Eventually([&] { return own.version() >= head; }));
  EXPECT_THAT(WhatOf(own.messages()), ElementsAre("CHANGED:n-1:CORDONED"));

  NodeWatcher other(server.channel(), token, From(0, "", "n-2"));
  ASSERT_TRUE(testing::Eventually([&] { return other.ended(); }));
  EXPECT_EQ(other.status().error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(ErrorInfoOf(other.status(), nullptr), "NOT_THIS_NODE");

  NodeWatcher unnamed(server.channel(), token, From(0));
  ASSERT_TRUE(testing::Eventually([&] { return unnamed.ended(); }));
  EXPECT_EQ(unnamed.status().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(unnamed.status().error_message(), HasSubstr("filter.node_name"));

  NodeWatcher owner(server.channel(), testing::kOwnerToken, From(0));
  ASSERT_TRUE(testing::Eventually([&] { return owner.ended(); }));
  EXPECT_EQ(owner.status().error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(owner.messages().empty());
}

} // namespace
} // namespace wsched
