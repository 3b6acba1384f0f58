// One placer, many front doors (docs/architecture.md), across real server
// processes and PostgreSQL: the replica holding the placement lock commits
// every placement and stop, whichever replica the caller reached; a
// refusal comes back with its details; when the placer is killed, another
// replica places within two seconds, nothing acknowledged is lost and no
// GPU is held by a workspace that is not placed.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <utility>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/metrics_text.h"
#include "tests/support/placing_load.h"
#include "tests/support/rpc_details.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched {
namespace {

using Clock = testing::PlacingLoad::Clock;

testing::ServerConfig Replica(const testing::TestDatabase& db) {
  testing::ServerConfig config{db.url(), testing::SourcePath("classes/saas.yaml")};
  config.metrics = true;
  config.extra_flags = {"--advertise_host=127.0.0.1", "--placer_poll_interval=100ms"};
  return config;
}

double Metric(const testing::ServerProcess& server, const std::string& name,
              const std::vector<std::string>& labels = {}) {
  return testing::MetricValue(testing::HttpGet(server.metrics_port(), "/metrics"), name, labels)
      .value_or(-1);
}

// Which replicas' commits changed workspace `id` (change_log.replica).
std::string CommittedBy(const testing::TestDatabase& db, const std::string& id) {
  return db.Query("SELECT string_agg(DISTINCT replica, ',') FROM change_log WHERE '" + id +
                  "' = ANY(ids)");
}

TEST(Placer, AFrontDoorForwardsPlacementsAndStopsAndThePlacerCommitsThem) {
  testing::TestDatabase db;
  testing::ServerProcess placer(Replica(db));  // Started first: it takes the lock.
  ASSERT_TRUE(placer.started());
  testing::ServerProcess front_door(Replica(db));
  ASSERT_TRUE(front_door.started());
  EXPECT_EQ(Metric(placer, "wsched_placer"), 1);
  EXPECT_EQ(Metric(front_door, "wsched_placer"), 0);
  const std::string placer_id = db.Query("SELECT replica FROM placer");
  EXPECT_EQ(db.Query("SELECT address FROM placer"), absl::StrCat("127.0.0.1:", placer.port()));

  testing::RegisterNode(front_door.channel(), testing::FakeGpuNode("n-1", "gpu-h100"));
  v1::Workspace out;
  ASSERT_TRUE(testing::PlaceAs(front_door.channel(), "w-1", "gpu-1x", &out).ok());
  EXPECT_EQ(out.state(), v1::WORKSPACE_STATE_PLACED);
  EXPECT_EQ(out.node_name(), "n-1");
  EXPECT_EQ(out.gpus_size(), 1);
  EXPECT_EQ(CommittedBy(db, "w-1"), placer_id);

  // A refusal keeps its code and its details on the way back.
  grpc::Status refused = testing::PlaceAs(front_door.channel(), "w-2", "no-such-class", &out);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::NOT_FOUND) << refused.error_message();
  EXPECT_EQ(testing::ReasonOf(refused), "CLASS_NOT_FOUND");

  ASSERT_TRUE(testing::StopAs(front_door.channel(), "w-1", &out).ok());
  EXPECT_EQ(out.state(), v1::WORKSPACE_STATE_STOPPED);
  EXPECT_EQ(CommittedBy(db, "w-1"), placer_id);
  // The caller reads its own write at the front door at once, though the
  // commit was the placer's.
  ASSERT_TRUE(testing::GetAs(front_door.channel(), "w-1", &out).ok());
  EXPECT_EQ(out.state(), v1::WORKSPACE_STATE_STOPPED);
  EXPECT_EQ(Metric(front_door, "wsched_placer_forwards_total",
                   {"method=\"PlaceWorkspace\"", "outcome=\"ok\""}), 1);
  EXPECT_EQ(Metric(front_door, "wsched_placer_forwards_total",
                   {"method=\"PlaceWorkspace\"", "outcome=\"refused\""}), 1);
  EXPECT_EQ(Metric(front_door, "wsched_placer_forwards_total",
                   {"method=\"StopWorkspace\"", "outcome=\"ok\""}), 1);
  // The placer serves its own callers itself.
  ASSERT_TRUE(testing::PlaceAs(placer.channel(), "w-3", "gpu-1x", &out).ok());
  EXPECT_EQ(CommittedBy(db, "w-3"), placer_id);
  EXPECT_EQ(Metric(placer, "wsched_placer_forwards_total",
                   {"method=\"PlaceWorkspace\"", "outcome=\"ok\""}), -1);
  // The callback handlers are counted per RPC like the synchronous ones, on
  // both sides: the placer saw the forwarded calls and its own.
  const std::string place = "method=\"/wsched.v1.PlacementService/PlaceWorkspace\"";
  const std::string stop = "method=\"/wsched.v1.PlacementService/StopWorkspace\"";
  EXPECT_EQ(Metric(front_door, "wsched_rpc_requests_total", {place, "code=\"OK\""}), 1);
  EXPECT_EQ(Metric(front_door, "wsched_rpc_requests_total", {place, "code=\"NOT_FOUND\""}), 1);
  EXPECT_EQ(Metric(front_door, "wsched_rpc_requests_total", {stop, "code=\"OK\""}), 1);
  EXPECT_EQ(Metric(placer, "wsched_rpc_requests_total", {place, "code=\"OK\""}), 2);
  EXPECT_EQ(Metric(placer, "wsched_rpc_requests_total", {place, "code=\"NOT_FOUND\""}), 1);
  EXPECT_EQ(Metric(placer, "wsched_rpc_requests_total", {stop, "code=\"OK\""}), 1);
}

TEST(Placer, OnlyThePlacerPlacesFromTheQueue) {
  testing::TestDatabase db;
  testing::ServerProcess placer(Replica(db));
  ASSERT_TRUE(placer.started());
  testing::ServerProcess front_door(Replica(db));
  ASSERT_TRUE(front_door.started());
  const std::string placer_id = db.Query("SELECT replica FROM placer");
  testing::RegisterNode(front_door.channel(), testing::FakeGpuNode("n-1", "gpu-h100"));
  v1::Workspace out;
  for (int i = 0; i < 9; ++i) {  // Eight GPUs: the ninth waits.
    ASSERT_TRUE(testing::PlaceAs(front_door.channel(), absl::StrCat("q-", i), "gpu-1x", &out).ok());
  }
  EXPECT_EQ(out.state(), v1::WORKSPACE_STATE_PENDING);
  // Capacity arrives through the front door, which mirrors it at once and
  // would place the queue if it drained it.
  testing::RegisterNode(front_door.channel(), testing::FakeGpuNode("n-2", "gpu-h100"));
  ASSERT_TRUE(testing::Eventually([&] {
    return testing::GetAs(front_door.channel(), "q-8", &out).ok() &&
           out.state() == v1::WORKSPACE_STATE_PLACED;
  }));
  EXPECT_EQ(out.node_name(), "n-2");
  EXPECT_EQ(CommittedBy(db, "q-8"), placer_id);
}

TEST(Placer, KillingThePlacerUnderLoadMovesPlacementToAnotherReplicaWithinTwoSeconds) {
  testing::TestDatabase db;
  auto placer = std::make_unique<testing::ServerProcess>(Replica(db));
  ASSERT_TRUE(placer->started());
  testing::ServerProcess survivor(Replica(db));
  ASSERT_TRUE(survivor.started());
  for (int n = 0; n < 8; ++n) {  // 64 GPUs: later placements go pending.
    testing::RegisterNode(survivor.channel(),
                          testing::FakeGpuNode(absl::StrCat("k-", n), "gpu-h100"));
  }
  testing::PlacingLoad load(survivor.channel(), "load", 4);
  ASSERT_TRUE(testing::Eventually([&] { return load.acked().size() >= 20; }));

  placer->Signal(SIGKILL);
  const Clock::time_point killed = Clock::now();
  ASSERT_TRUE(testing::Eventually(
      [&] { return load.FirstAckOfACallStartedAfter(killed).has_value(); }, 10,
      std::chrono::milliseconds(5)));
  const auto resumed = std::chrono::duration_cast<std::chrono::milliseconds>(
      *load.FirstAckOfACallStartedAfter(killed) - killed);
  std::printf("placements resumed through the survivor %lld ms after the placer was killed\n",
              static_cast<long long>(resumed.count()));
  EXPECT_LT(resumed, std::chrono::seconds(2));
  const size_t after_kill = load.acked().size();
  ASSERT_TRUE(testing::Eventually([&] { return load.acked().size() >= after_kill + 20; }));
  load.Stop();
  placer.reset();

  EXPECT_EQ(Metric(survivor, "wsched_placer"), 1);
  EXPECT_EQ(db.Query("SELECT address FROM placer"), absl::StrCat("127.0.0.1:", survivor.port()));
  for (const std::string& id : load.acked()) {
    EXPECT_THAT(db.Query("SELECT state FROM workspaces WHERE id = '" + id + "'"),
                ::testing::AnyOf("placed", "pending"))
        << id;
  }
  // No GPU held by a workspace that is not placed, and one hold per GPU
  // each placed workspace was given.
  EXPECT_EQ(db.Query("SELECT count(*) FROM gpu_holds h JOIN workspaces w ON w.id = h.workspace_id "
                     "WHERE w.state <> 'placed'"),
            "0");
  EXPECT_EQ(db.Query("SELECT count(*) FROM gpu_holds"),
            db.Query("SELECT count(*) FROM workspaces WHERE state = 'placed'"));
  for (grpc::StatusCode code : load.codes()) {
    EXPECT_THAT(code, ::testing::AnyOf(grpc::StatusCode::UNAVAILABLE,
                                       grpc::StatusCode::DEADLINE_EXCEEDED))
        << "only the calls in flight to the killed placer fail";
  }
}

TEST(Placer, ATermSignalUnderLoadAnswersEveryCallInFlightAndHandsPlacementOn) {
  testing::TestDatabase db;
  testing::ServerConfig config = Replica(db);
  // The front door's forwarding channel stays open; do not wait long for it.
  config.extra_flags.push_back("--shutdown_grace=2s");
  auto placer = std::make_unique<testing::ServerProcess>(config);
  ASSERT_TRUE(placer->started());
  testing::ServerProcess front_door(Replica(db));
  ASSERT_TRUE(front_door.started());
  for (int n = 0; n < 8; ++n) {
    testing::RegisterNode(front_door.channel(),
                          testing::FakeGpuNode(absl::StrCat("t-", n), "gpu-h100"));
  }
  // Every call goes through the front door to the placer's callback
  // handlers and its blocking pool.
  testing::PlacingLoad load(front_door.channel(), "term", 4);
  ASSERT_TRUE(testing::Eventually([&] { return load.acked().size() >= 20; }));

  const Clock::time_point stopped = Clock::now();
  EXPECT_EQ(placer->Stop(), 0) << "SIGTERM under load exits cleanly";
  const auto exited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - stopped);
  ASSERT_TRUE(testing::Eventually(
      [&] { return load.FirstAckOfACallStartedAfter(stopped).has_value(); }, 10,
      std::chrono::milliseconds(5)));
  const auto resumed = std::chrono::duration_cast<std::chrono::milliseconds>(
      *load.FirstAckOfACallStartedAfter(stopped) - stopped);
  std::printf("placer exited %lld ms after SIGTERM; a call begun after it was answered %lld ms "
              "after it\n",
              static_cast<long long>(exited.count()), static_cast<long long>(resumed.count()));
  load.Stop();
  placer.reset();

  EXPECT_EQ(Metric(front_door, "wsched_placer"), 1);
  const std::set<std::string> acked = load.acked();
  std::vector<std::string> quoted;
  for (const std::string& id : acked) quoted.push_back(absl::StrCat("'", id, "'"));
  EXPECT_EQ(db.Query(absl::StrCat("SELECT count(*) FROM workspaces WHERE state IN "
                                  "('placed', 'pending') AND id IN (",
                                  absl::StrJoin(quoted, ","), ")")),
            absl::StrCat(acked.size()))
      << "every acknowledged placement is stored";
  EXPECT_EQ(db.Query("SELECT count(*) FROM gpu_holds"),
            db.Query("SELECT count(*) FROM workspaces WHERE state = 'placed'"));
  // A call the stopping placer could not finish is answered UNAVAILABLE
  // (retry: another replica places), never left hanging or INTERNAL.
  for (grpc::StatusCode code : load.codes()) {
    EXPECT_EQ(code, grpc::StatusCode::UNAVAILABLE) << load.internal();
  }
}

}  // namespace
}  // namespace wsched
