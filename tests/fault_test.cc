// Faults under load, against the real server and PostgreSQL: the server
// killed mid-placement, PostgreSQL stopped and started, a caller that gives
// up mid-call and retries, an agent that vanishes. After each: nothing
// acknowledged is lost, no GPU is held by a workspace that is not placed,
// held capacity is exactly what the placed workspaces hold.
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/placing_load.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;


// The store's invariants, as one count of violations: GPU holds of
// workspaces that are not placed, nodes whose held CPU is not what their
// placed workspaces hold.
constexpr char kViolations[] =
    "SELECT (SELECT count(*) FROM gpu_holds h JOIN workspaces w ON w.id = h.workspace_id "
    "        WHERE w.state <> 'placed') + "
    "       (SELECT count(*) FROM nodes n LEFT JOIN (SELECT node_name, sum(cpu_millis) AS cpu "
    "        FROM workspaces WHERE state = 'placed' GROUP BY node_name) s ON s.node_name = n.name "
    "        WHERE n.held_cpu_millis <> COALESCE(s.cpu, 0))";

std::string Violations(const testing::TestDatabase& db) { return db.Query(kViolations); }

void ExpectAllStored(const testing::TestDatabase& db, const std::set<std::string>& ids) {
  for (const auto& id : ids) {
    EXPECT_THAT(db.Query("SELECT state FROM workspaces WHERE id = '" + id + "'"),
                ::testing::AnyOf("placed", "pending"))
        << id;
  }
}

TEST(Faults, ServerKilledDuringPlacementsLosesNothingAcknowledged) {
  testing::TestDatabase db;
  const std::string catalog = testing::SourcePath("classes/saas.yaml");
  std::set<std::string> acked;
  {
    testing::ServerProcess server({db.url(), catalog});
    ASSERT_TRUE(server.started());
    for (int n = 0; n < 3; ++n) {
      testing::RegisterNode(server.channel(), testing::FakeGpuNode(absl::StrCat("k-", n), "gpu-h100"));
    }
    testing::PlacingLoad load(server.channel(), "kill", 4);  // 24 GPUs: some go pending.
    testing::Eventually([&] { return load.acked().size() >= 30; }, 30);
    server.Signal(SIGKILL);
    load.Stop();
    acked = load.acked();
  }
  ASSERT_GE(acked.size(), 30u);
  testing::ServerProcess restarted({db.url(), catalog});
  ASSERT_TRUE(restarted.started());
  ExpectAllStored(db, acked);
  EXPECT_EQ(Violations(db), "0");
  std::printf("SIGKILL under load: %zu acknowledged workspaces verified stored, %s GPU holds checked "
              "against placed workspaces, %s nodes' held capacity checked\n",
              acked.size(), db.Query("SELECT count(*) FROM gpu_holds").c_str(),
              db.Query("SELECT count(*) FROM nodes").c_str());
  // SERVING and placing again, with the pending queue back in line.
  EXPECT_EQ(db.Query("SELECT count(*) FROM workspaces WHERE state = 'placed'"), "24");
  const std::string waiting =
      db.Query("SELECT id FROM workspaces WHERE state = 'pending' ORDER BY created_at LIMIT 1");
  ASSERT_FALSE(waiting.empty());
  v1::Workspace out;
  ASSERT_TRUE(testing::PlaceAs(restarted.channel(), waiting, "gpu-1x", &out).ok());
  EXPECT_EQ(out.state(), v1::WORKSPACE_STATE_PENDING);
  EXPECT_GE(out.queue_position(), 1);  // In the rebuilt queue, not lost from it.
}

TEST(Faults, PostgresRestartIsUnavailableNeverInternalAndHealsItself) {
  // A private PostgreSQL: stopping the shared one would fail other tests.
  const std::string pg = testing::SourcePath("deploy/local/pg.sh");
  const std::string dir = absl::StrCat("/tmp/wsched-fault-pg-", getpid());
  const int port = testing::FreePort();
  auto pg_ctl = [&](const std::string& verb) {
    std::string command = absl::StrCat(pg, " ", verb, " ", dir, verb == "start" ? absl::StrCat(" ", port) : "",
                                       " >/dev/null 2>&1");
    return std::system(command.c_str());
  };
  ASSERT_EQ(pg_ctl("start"), 0);
  const std::string url = absl::StrCat("postgresql://postgres@127.0.0.1:", port, "/postgres");
  {
    testing::ServerProcess server({url, testing::SourcePath("classes/saas.yaml")});
    ASSERT_TRUE(server.started());
    testing::RegisterNode(server.channel(), testing::FakeGpuNode("pgr-1", "gpu-h100"));
    testing::RegisterNode(server.channel(), testing::FakeCpuNode("pgr-c", "general"));
    testing::PlacingLoad load(server.channel(), "pgr", 2);
    testing::Eventually([&] { return load.acked().size() >= 5; }, 30);
    ASSERT_EQ(pg_ctl("stop"), 0);
    v1::Workspace out;
    grpc::Status down = testing::PlaceAs(server.channel(), "while-down", "standard", &out);
    EXPECT_EQ(down.error_code(), grpc::StatusCode::UNAVAILABLE) << down.error_message();
    ASSERT_EQ(pg_ctl("start"), 0);
    // It recovers on its own: a placement succeeds again within seconds.
    grpc::Status up;
    for (int i = 0; i < 100; ++i) {
      up = testing::PlaceAs(server.channel(), absl::StrCat("after-", i), "standard", &out);
      if (up.ok()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(up.ok()) << up.error_message();
    load.Stop();
    EXPECT_EQ(load.codes().count(grpc::StatusCode::INTERNAL), 0u) << load.internal();
    // No double allocation and exact capacity, read from the restarted database.
    pqxx::connection connection(url);
    pqxx::work txn(connection);
    EXPECT_EQ(txn.exec1(kViolations)[0].as<int64_t>(), 0);
    std::printf("PostgreSQL restart under load: %zu placements acknowledged; while it was down the "
                "call failed with gRPC code %d (UNAVAILABLE is 14); after recovery %lld GPU holds "
                "and %lld nodes checked\n",
                load.acked().size(), static_cast<int>(down.error_code()),
                static_cast<long long>(txn.exec1("SELECT count(*) FROM gpu_holds")[0].as<int64_t>()),
                static_cast<long long>(txn.exec1("SELECT count(*) FROM nodes")[0].as<int64_t>()));
  }
  pg_ctl("stop");
  std::system(absl::StrCat("rm -rf ", dir, " ", dir, ".initdb.log").c_str());
}

TEST(Faults, ACallerThatGivesUpAndRetriesGetsExactlyOnePlacement) {
  testing::TestDatabase db;
  testing::ServerProcess server({db.url(), testing::SourcePath("classes/saas.yaml")});
  ASSERT_TRUE(server.started());
  testing::RegisterNode(server.channel(), testing::FakeGpuNode("c-1", "gpu-h100"));
  int gave_up = 0;
  for (int i = 0; i < 8; ++i) {  // One GPU each, 8 GPUs.
    const std::string id = absl::StrCat("impatient-", i);
    v1::Workspace first, again;
    // Gives up after a fraction of a millisecond to a few: the server may or
    // may not have committed by then.
    grpc::Status impatient =
        testing::PlaceAs(server.channel(), id, "gpu-1x", &first, std::chrono::microseconds(400 * (i + 1)));
    if (impatient.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) ++gave_up;
    grpc::Status retried = testing::PlaceAs(server.channel(), id, "gpu-1x", &again);
    ASSERT_TRUE(retried.ok()) << retried.error_message();
    ASSERT_EQ(again.state(), v1::WORKSPACE_STATE_PLACED);
    ASSERT_EQ(again.gpus_size(), 1);
    // The answer is what is stored, and the workspace holds exactly its GPU.
    EXPECT_EQ(db.Query("SELECT gpu_uuid FROM gpu_holds WHERE workspace_id = '" + id + "'"),
              again.gpus(0).uuid());
  }
  EXPECT_GT(gave_up, 0);  // The fault happened.
  std::printf("give up and retry: 8 workspaces retried, %d first calls gave up mid-call, "
              "8 GPU holds checked against the answers\n", gave_up);
  EXPECT_EQ(db.Query("SELECT count(*) FROM gpu_holds"), "8");
  EXPECT_EQ(Violations(db), "0");
}

TEST(Faults, AVanishedAgentsNodeGoesLostAndItsWorkspacesWithIt) {
  testing::TestDatabase db;
  testing::ServerProcess server({db.url(), testing::SourcePath("classes/saas.yaml"),
                                 {"--heartbeat_interval=1s", "--node_lost_after=2s"}});
  ASSERT_TRUE(server.started());
  testing::RegisterNode(server.channel(), testing::FakeGpuNode("gone-1", "gpu-h100"));
  v1::Workspace out;
  ASSERT_TRUE(testing::PlaceAs(server.channel(), "on-gone", "gpu-1x", &out).ok());
  ASSERT_EQ(out.node_name(), "gone-1");
  // No heartbeat ever comes: lost by the database clock after 2 s.
  std::string state;
  for (int i = 0; i < 100 && state != "lost"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    state = db.Query("SELECT state FROM nodes WHERE name = 'gone-1'");
  }
  EXPECT_EQ(state, "lost");
  grpc::ClientContext context;
  testing::Authorize(context, testing::kControlPlaneToken);
  v1::GetWorkspaceRequest request;
  request.set_workspace_id("on-gone");
  v1::Workspace seen;
  ASSERT_TRUE(v1::PlacementService::NewStub(server.channel())->GetWorkspace(&context, request, &seen).ok());
  EXPECT_EQ(seen.state(), v1::WORKSPACE_STATE_LOST);
  EXPECT_THAT(seen.pending_reason(), HasSubstr("gone-1 was lost"));
  std::printf("vanished agent: node gone-1 %s, its workspace reported %s\n", state.c_str(),
              v1::WorkspaceState_Name(seen.state()).c_str());
}

TEST(Faults, AfterAnOutageAgentsGetOneTimeoutBeforeTheirNodesAreLost) {
  testing::TestDatabase db;
  const std::vector<std::string> flags = {"--heartbeat_interval=1s", "--node_lost_after=3s"};
  {
    testing::ServerProcess before({db.url(), testing::SourcePath("classes/saas.yaml"), flags});
    ASSERT_TRUE(before.started());
    testing::RegisterNode(before.channel(), testing::FakeGpuNode("kept-1", "gpu-h100"));
    v1::Workspace out;
    ASSERT_TRUE(testing::PlaceAs(before.channel(), "kept", "gpu-1x", &out).ok());
  }
  // No replica served for an hour (an upgrade, a restore): every heartbeat
  // on record is old.
  db.Query("UPDATE node_liveness SET last_heartbeat = now() - interval '1 hour'");
  const auto started = std::chrono::steady_clock::now();
  testing::ServerProcess after({db.url(), testing::SourcePath("classes/saas.yaml"), flags});
  ASSERT_TRUE(after.started());
  // The node's agent, reconnecting within the timeout, keeps it and its workspace.
  auto inventory = v1::InventoryService::NewStub(after.channel());
  grpc::ClientContext context;
  testing::Authorize(context, testing::kAgentToken);
  v1::HeartbeatRequest heartbeat;
  heartbeat.set_node_name("kept-1");
  v1::HeartbeatResponse response;
  ASSERT_TRUE(inventory->Heartbeat(&context, heartbeat, &response).ok());
  EXPECT_EQ(db.Query("SELECT state FROM nodes WHERE name = 'kept-1'"), "ready");
  EXPECT_EQ(db.Query("SELECT state FROM workspaces WHERE id = 'kept'"), "placed");
  // Without further heartbeats it is lost, but not before a full timeout
  // after the start.
  std::string state;
  for (int i = 0; i < 200 && state != "lost"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    state = db.Query("SELECT state FROM nodes WHERE name = 'kept-1'");
  }
  ASSERT_EQ(state, "lost");
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::seconds(3));
  std::printf("outage: node kept-1 stayed ready through the restart, lost only %.1f s after it\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

}  // namespace
}  // namespace wsched
