// Scaling end to end: a GPU pool goes 0 -> N -> 0 driven by the exec
// actuator (a script that starts real wsched-agent processes on fake sysfs
// trees and removes nodes it is told to), and leadership fails over.
#include <csignal>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"
#include "wsched/v1/scaling.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The actuator: scale up = start agents on copies of the H100 tree (with
// unique GPU UUIDs); scale down = stop the named agents and remove their
// nodes, as a cloud controller deleting instances would.
std::string WriteActuatorScript(const std::string& dir, int port) {
  std::string path = dir + "/actuator.sh";
  std::ofstream(path) << R"sh(#!/usr/bin/env bash
set -euo pipefail
dir=")sh" << dir << R"sh("
echo "target=$WSCHED_TARGET_SIZE current=$WSCHED_CURRENT_SIZE remove=${WSCHED_NODES_TO_REMOVE:-}" >> "$dir/actions.log"
IFS=',' read -r -a remove <<<"${WSCHED_NODES_TO_REMOVE:-}"
for node in "${remove[@]}"; do
  [ -n "$node" ] || continue
  [ -f "$dir/$node.pid" ] && kill "$(cat "$dir/$node.pid")" 2>/dev/null || true
  ")sh" << WSCHED_CTL_BINARY << R"sh(" --server=127.0.0.1:)sh" << port << R"sh( --token=)sh"
                      << testing::kAdminToken << R"sh( node remove "$node" >> "$dir/actions.log" 2>&1 || true
  rm -f "$dir/$node.pid"
done
running=$(find "$dir" -maxdepth 1 -name '*.pid' | wc -l)
while [ "$running" -lt "$WSCHED_TARGET_SIZE" ]; do
  n=$(cat "$dir/next" 2>/dev/null || echo 0); echo $((n + 1)) > "$dir/next"
  name="scaled-$n"
  cp -r ")sh" << WSCHED_SOURCE_DIR << R"sh(/tests/sysfs/h100-8gpu" "$dir/$name"
  sed -i "s/GPU-/GPU-$name-/" "$dir/$name"/proc/driver/nvidia/gpus/*/information
  # setsid: the agent outlives this command (the actuator reaps its group).
  setsid ")sh" << WSCHED_AGENT_BINARY << R"sh(" --root="$dir/$name" --server=127.0.0.1:)sh" << port
                      << R"sh( --token=)sh" << testing::kAgentToken << R"sh( --pool="$WSCHED_POOL" \
    --node_name="$name" --heartbeat_interval=1s --cdi_dir= >> "$dir/$name.log" 2>&1 &
  pid=$!
  echo $pid > "$dir/$name.pid"
  # Wait until the agent has left this command's process group (reaped on exit).
  for _ in $(seq 50); do
    [ "$(ps -o sid= -p $pid 2>/dev/null | tr -d ' ')" = "$pid" ] && break
    sleep 0.05
  done
  running=$((running + 1))
done
)sh";
  return path;
}

class ScalingTest : public ::testing::Test {
 protected:
  void TearDown() override {
    // Stop any agent the actuator left running.
    (void)!std::system(("for f in " + dir_ + "/*.pid; do [ -f \"$f\" ] && kill $(cat \"$f\") 2>/dev/null; done; true").c_str());
  }

  v1::ScalingState State(testing::ServerProcess& server) {
    auto stub = v1::ScalingService::NewStub(server.channel());
    grpc::ClientContext context;
    testing::Authorize(context, testing::kActuatorToken);
    v1::ScalingState state;
    EXPECT_TRUE(stub->GetScalingState(&context, {}, &state).ok());
    return state;
  }

  // A copy: callers pass the state as a temporary.
  std::optional<v1::PoolSignal> Pool(const v1::ScalingState& state, const std::string& pool) {
    for (const auto& signal : state.pools()) {
      if (signal.pool() == pool) return signal;
    }
    return std::nullopt;
  }

  // Polls `done` every 100 ms up to `seconds`.
  bool Eventually(const std::function<bool()>& done, int seconds) {
    for (int i = 0; i < seconds * 10; ++i) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return done();
  }

  std::string dir_ = [] {
    char pattern[] = "/tmp/wsched-scaling-XXXXXX";
    return std::string(mkdtemp(pattern));
  }();
};

TEST_F(ScalingTest, GpuPoolGoesFromZeroToTwoAndBackToZero) {
  testing::TestDatabase db;
  int port = testing::FreePort();
  std::string script = WriteActuatorScript(dir_, port);
  testing::ServerConfig config{db.url(), testing::SourcePath("tests/fixtures/scaling.yaml")};
  config.extra_flags = {"--actuator_command=bash," + script, "--scaling_batching_window=200ms",
                        "--node_lost_after=60s"};
  // A fixed port: the actuator script must know where to register.
  config.listen = "127.0.0.1:" + std::to_string(port);
  config.metrics = true;
  testing::ServerProcess server(config);
  ASSERT_TRUE(server.started()) << server.Log();

  auto placement = v1::PlacementService::NewStub(server.channel());
  auto place = [&](const std::string& id) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    v1::PlaceWorkspaceRequest request;
    request.set_workspace_id(id);
    request.set_org_id("o-1");
    request.set_project_id("p-1");
    request.set_user_id("u-1");
    request.set_class_id("gpu-1x");
    v1::Workspace w;
    EXPECT_TRUE(placement->PlaceWorkspace(&context, request, &w).ok());
    return w;
  };
  // Nine one-GPU workspaces on 8-GPU nodes: two nodes, from zero.
  v1::Workspace first = place("gpu-0");
  EXPECT_EQ(first.state(), v1::WORKSPACE_STATE_PENDING);
  EXPECT_TRUE(first.has_estimated_time_to_place()) << "time to GPU from the default";
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  EXPECT_EQ(first.estimated_seconds_to_place(), first.estimated_time_to_place().seconds())
      << "the deprecated seconds stay filled until v2";
#pragma GCC diagnostic pop
  for (int i = 1; i < 9; ++i) place("gpu-" + std::to_string(i));

  ASSERT_TRUE(Eventually([&] {
    std::optional<v1::PoolSignal> pool = Pool(State(server), "gpu-h100");
    return pool.has_value() && pool->target_size() == 2;
  }, 20)) << ReadFile(dir_ + "/actions.log") << server.Log();
  v1::ScalingState scaled_up = State(server);
  ASSERT_TRUE(Pool(scaled_up, "gpu-h100").has_value());
  EXPECT_THAT(Pool(scaled_up, "gpu-h100")->reasons(),
              ::testing::Contains(v1::SCALING_REASON_PENDING_WORKSPACES));

  // The actuator's agents register; every pending workspace gets placed.
  ASSERT_TRUE(Eventually([&] {
    return db.Query("SELECT count(*) FROM workspaces WHERE state = 'placed'") == "9";
  }, 30)) << ReadFile(dir_ + "/actions.log") << server.Log();
  EXPECT_EQ(db.Query("SELECT count(DISTINCT node_name) FROM workspaces"), "2");
  // The leader measured both nodes' start times for the time-to-GPU estimate.
  EXPECT_TRUE(Eventually([&] {
    return db.Query("SELECT count(*) FROM timing_samples WHERE kind = 'node_start' AND "
                    "pool = 'gpu-h100'") == "2";
  }, 10)) << server.Log();

  // Stop everything: after the idle time the nodes are named and removed.
  for (int i = 0; i < 9; ++i) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    v1::StopWorkspaceRequest request;
    request.set_workspace_id("gpu-" + std::to_string(i));
    v1::Workspace w;
    ASSERT_TRUE(placement->StopWorkspace(&context, request, &w).ok());
  }
  ASSERT_TRUE(Eventually([&] {
    std::optional<v1::PoolSignal> pool = Pool(State(server), "gpu-h100");
    return pool.has_value() && pool->target_size() == 0 && pool->current_size() == 0;
  }, 30)) << ReadFile(dir_ + "/actions.log") << server.Log();
  EXPECT_EQ(db.Query("SELECT count(*) FROM nodes WHERE pool = 'gpu-h100'"), "0");
  // Every run of the actuator is counted and logged.
  EXPECT_THAT(testing::HttpGet(server.metrics_port(), "/metrics"),
              HasSubstr("wsched_actuator_runs_total{pool=\"gpu-h100\",result=\"ok\"}"));
  EXPECT_THAT(server.Log(), HasSubstr("actuator command done"));
  std::string actions = ReadFile(dir_ + "/actions.log");
  EXPECT_THAT(actions, HasSubstr("target=2"));
  EXPECT_THAT(actions, HasSubstr("target=0"));
  EXPECT_THAT(actions, HasSubstr("remove=scaled-"));
}

TEST_F(ScalingTest, NodesAlreadyUpAreNoStartTimeSamples) {
  // Nodes registered with no scale-up asked for, then a restart: neither
  // leader saw them start, so neither may record how long they took (a
  // zero-second sample per node would drag the time-to-GPU estimate down).
  testing::TestDatabase db;
  testing::ServerConfig config{db.url(), testing::SourcePath("tests/fixtures/scaling.yaml")};
  for (int run = 0; run < 2; ++run) {
    testing::ServerProcess server(config);
    ASSERT_TRUE(server.started());
    if (run == 0) {
      testing::RegisterNode(server.channel(), testing::FakeCpuNode("up-1", "general"));
      testing::RegisterNode(server.channel(), testing::FakeCpuNode("up-2", "general"));
    }
    // This process leads and has evaluated both nodes once it logs a signal
    // counting them (start-time samples are written before the signal).
    ASSERT_TRUE(Eventually([&] {
      std::istringstream log(server.Log());
      for (std::string line; std::getline(log, line);) {
        if (line.find("\"msg\":\"scaling signal\"") != std::string::npos &&
            line.find("\"pool\":\"general\"") != std::string::npos &&
            line.find("\"current\":\"2\"") != std::string::npos) {
          return true;
        }
      }
      return false;
    }, 10)) << server.Log();
  }
  EXPECT_EQ(db.Query("SELECT count(*) FROM timing_samples WHERE kind = 'node_start'"), "0");
}

TEST_F(ScalingTest, AnotherReplicaTakesOverWhenTheLeaderDies) {
  testing::TestDatabase db;
  std::string catalog = testing::SourcePath("tests/fixtures/scaling.yaml");
  testing::ServerConfig config_a{db.url(), catalog};
  config_a.extra_flags = {"--scaling_batching_window=100ms"};
  testing::ServerProcess a(config_a);
  ASSERT_TRUE(a.started());
  ASSERT_TRUE(Eventually([&] { return !State(a).leader().empty(); }, 10));
  std::string leader_a = State(a).leader();
  testing::ServerProcess b(config_a);
  ASSERT_TRUE(b.started());

  // Pending GPU work: the leader asks for one node.
  auto placement = v1::PlacementService::NewStub(a.channel());
  grpc::ClientContext context;
  testing::Authorize(context, testing::kControlPlaneToken);
  v1::PlaceWorkspaceRequest request;
  request.set_workspace_id("needs-gpu");
  request.set_org_id("o-1");
  request.set_project_id("p-1");
  request.set_user_id("u-1");
  request.set_class_id("gpu-1x");
  v1::Workspace w;
  ASSERT_TRUE(placement->PlaceWorkspace(&context, request, &w).ok());
  int64_t generation = 0;
  ASSERT_TRUE(Eventually([&] {
    std::optional<v1::PoolSignal> pool = Pool(State(b), "gpu-h100");  // Served by the follower.
    if (!pool || pool->target_size() != 1) return false;
    generation = pool->generation();
    return true;
  }, 15));
  EXPECT_EQ(State(b).leader(), leader_a);

  a.Signal(SIGKILL);
  // One state, read once per try: the new leader publishes its pools one at a
  // time, so the leader's name can change before this pool's signal does.
  ASSERT_TRUE(Eventually([&] {
    v1::ScalingState state = State(b);
    std::optional<v1::PoolSignal> pool = Pool(state, "gpu-h100");
    return state.leader() != leader_a && pool.has_value() && pool->generation() > generation;
  }, 15)) << b.Log();
  std::optional<v1::PoolSignal> pool = Pool(State(b), "gpu-h100");
  ASSERT_TRUE(pool.has_value());
  EXPECT_EQ(pool->target_size(), 1);
}

}  // namespace
}  // namespace wsched
