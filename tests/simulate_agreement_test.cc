// The simulator agrees with the server: a short trace is replayed through
// the real wsched-server (PostgreSQL, its scaling leader and the exec
// actuator) with this test as the cloud - it registers a fake node a fixed
// node start after the actuator asks for it, reports its driver installed
// a fixed install time later when the scenario has one, and removes the
// nodes the signal names - and through the simulator (server/simulate/)
// with the same trace and timings. The scale targets over time and every
// workspace's wait must agree within the jitter of the server's 250 ms
// tick; so must the time-to-GPU estimate each queued workspace is given
// (its phases with their p50 and p90) and the share of those placed within
// their p90, by pool.
//
// Event-driven: the actuator writes each signal to a FIFO the test reads,
// placements arrive on WatchWorkspace streams, and the loop waits only for
// those or for the next moment of the trace.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <queue>
#include <sstream>
#include <thread>

#include <google/protobuf/util/time_util.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/catalog/load.h"
#include "server/simulate/engine.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/metrics_text.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched {
namespace {

constexpr char kPool[] = "gpu-h100";
const absl::Duration kNodeStart = absl::Seconds(2);
// The server's tick (250 ms) on both sides of a comparison, the batching
// window between them, and a loaded machine's scheduling.
const absl::Duration kJitter = absl::Seconds(1);

struct TraceRow {
  std::string id, class_id;
  absl::Duration at, duration;
};

// A trace and how long the cloud takes: a node registers `node_start`
// after it is asked for, and with a `driver_install`, registers without
// its driver and has it installed that long after.
struct Scenario {
  std::vector<TraceRow> trace;
  absl::Duration node_start;
  absl::Duration driver_install = absl::ZeroDuration();
};

// Three 4-GPU workspaces from zero (two nodes); a 1-GPU one on the second
// node's free half; a 4-GPU one that does not fit, so a third node is asked
// for, but lands on the second node when the 1-GPU one ends first; then the
// three nodes go one by one, each a second or more apart.
const std::vector<TraceRow>& Trace() {
  static const auto* trace = new std::vector<TraceRow>{
      {"a1", "gpu-4x", absl::ZeroDuration(), absl::Seconds(8)},
      {"a2", "gpu-4x", absl::ZeroDuration(), absl::Seconds(8)},
      {"a3", "gpu-4x", absl::ZeroDuration(), absl::Seconds(9)},
      {"b1", "gpu-1x", absl::Seconds(4), absl::Seconds(2)},
      {"b2", "gpu-4x", absl::Seconds(5), absl::Seconds(5)},
  };
  return *trace;
}

// Nodes that install their driver for 4s after a 2s start: a1 waits for
// the first node's boot; a2, arriving while that node installs, for the
// rest of its install; a3 finds the node full and waits for a second boot.
const absl::Duration kDriverInstall = absl::Seconds(4);
const std::vector<TraceRow>& InstallTrace() {
  static const auto* trace = new std::vector<TraceRow>{
      {"a1", "gpu-4x", absl::ZeroDuration(), absl::Seconds(8)},
      {"a2", "gpu-4x", absl::Milliseconds(4500), absl::Seconds(6)},
      {"a3", "gpu-4x", absl::Seconds(5), absl::Seconds(4)},
  };
  return *trace;
}

// What the server did, as the cloud and the clients saw it.
struct Observed {
  std::vector<simulate::TargetChange> targets;  // Each change of the pool's target.
  std::map<std::string, absl::Time> arrived, placed;
  // PlaceWorkspace's answer to those it queued: the estimate they were given.
  std::map<std::string, v1::Workspace> queued;
};

// The cloud: reads the actuator's signals, starts and removes nodes; the
// clients: place, watch and stop the trace's workspaces.
class Replay {
 public:
  Replay(testing::ServerProcess& server, const std::string& fifo, const Scenario& scenario)
      : server_(server),
        scenario_(scenario),
        placement_(v1::PlacementService::NewStub(server.channel())),
        inventory_(v1::InventoryService::NewStub(server.channel())) {
    // O_RDWR: the open does not wait for a writer, and reads never see EOF
    // between the actuator's runs.
    fd_ = open(fifo.c_str(), O_RDWR);
    reader_ = std::thread([this] { ReadSignals(); });
  }
  ~Replay() {
    for (auto& [id, context] : watches_) context->TryCancel();
    for (std::thread& t : watchers_) t.join();
    // The reader stops at this line (the FIFO is open for writing here too).
    const char quit[] = "quit\n";
    (void)!write(fd_, quit, sizeof quit - 1);
    reader_.join();
    close(fd_);
  }

  Observed Run(absl::Duration limit) {
    t0_ = absl::Now();
    for (size_t i = 0; i < trace().size(); ++i) {
      Schedule(t0_ + trace()[i].at, [this, i] { Arrive(i); });
    }
    const absl::Time give_up = t0_ + limit;
    while (!Done() && absl::Now() < give_up) {
      absl::Time next = actions_.empty() ? give_up : std::min(give_up, actions_.top().at);
      std::deque<Incoming> incoming;
      {
        absl::MutexLock lock(&mu_);
        mu_.AwaitWithDeadline(absl::Condition(this, &Replay::HasIncoming), next);
        incoming.swap(incoming_);
      }
      for (const Incoming& in : incoming) Handle(in);
      while (!actions_.empty() && actions_.top().at <= absl::Now()) {
        auto action = actions_.top().run;
        actions_.pop();
        action();
      }
    }
    return observed_;
  }

 private:
  struct Incoming {
    absl::Time at;
    std::string workspace;  // Placed; empty for a signal.
    std::string pool;
    int target = 0;
    std::vector<std::string> remove;
  };
  struct Action {
    absl::Time at;
    int64_t sequence;
    std::function<void()> run;
    bool operator>(const Action& o) const { return std::tie(at, sequence) > std::tie(o.at, o.sequence); }
  };

  bool HasIncoming() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !incoming_.empty(); }
  void Push(Incoming in) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    incoming_.push_back(std::move(in));
  }
  void Schedule(absl::Time at, std::function<void()> run) {
    actions_.push({at, sequence_++, std::move(run)});
  }
  const std::vector<TraceRow>& trace() const { return scenario_.trace; }
  bool Done() const {
    return stopped_ == trace().size() && !observed_.targets.empty() &&
           observed_.targets.back().target == 0 && nodes_ == 0 && booting_ == 0;
  }

  // One line per actuator run: POOL TARGET REMOVE.
  void ReadSignals() {
    std::string buffer;
    char chunk[512];
    for (ssize_t n; (n = read(fd_, chunk, sizeof chunk)) > 0;) {
      buffer.append(chunk, static_cast<size_t>(n));
      for (size_t end; (end = buffer.find('\n')) != std::string::npos; buffer.erase(0, end + 1)) {
        std::vector<std::string> words = absl::StrSplit(buffer.substr(0, end), ' ');
        if (words[0] == "quit") return;
        if (words.size() < 2) continue;
        Incoming in{.at = absl::Now(), .pool = words[0], .target = std::stoi(words[1])};
        if (words.size() > 2 && !words[2].empty()) in.remove = absl::StrSplit(words[2], ',');
        Push(std::move(in));
      }
    }
  }

  void Handle(const Incoming& in) {
    if (!in.workspace.empty()) {
      observed_.placed[in.workspace] = in.at;
      RunFor(in.workspace, in.at);
      return;
    }
    if (in.pool != kPool) return;
    if (observed_.targets.empty() || observed_.targets.back().target != in.target) {
      observed_.targets.push_back({in.at, in.target});
    }
    for (const std::string& node : in.remove) {
      grpc::ClientContext context;
      testing::Authorize(context, testing::kAdminToken);
      v1::NodeNameRequest request;
      request.set_node_name(node);
      v1::Empty empty;
      ASSERT_TRUE(inventory_->RemoveNode(&context, request, &empty).ok()) << node;
      --nodes_;
    }
    // As a cloud's node group: never cancel a booting node.
    while (nodes_ + booting_ < in.target) {
      std::string name = "sim-node-" + std::to_string(next_node_++);
      ++booting_;
      Schedule(in.at + scenario_.node_start, [this, name] { Boot(name); });
    }
  }

  void Boot(const std::string& name) {
    v1::NodeInfo info = testing::FakeGpuNode(name, kPool);
    const bool installs = scenario_.driver_install > absl::ZeroDuration();
    if (installs) info.set_driver_version("");
    testing::RegisterNode(server_.channel(), info);
    --booting_;
    ++nodes_;
    if (installs) {
      Schedule(absl::Now() + scenario_.driver_install, [this, info] { DriverInstalled(info); });
    }
  }

  // The agent's install, reported with the time it took, then the driver
  // loaded at its next heartbeat. A node removed meanwhile is not found.
  void DriverInstalled(const v1::NodeInfo& node) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::ReportDriverInstallRequest report;
    report.set_node_name(node.name());
    report.set_kernel_version(node.kernel_version());
    report.set_success(true);
    report.set_detail("550.54.15");
    *report.mutable_duration() = google::protobuf::util::TimeUtil::MillisecondsToDuration(
        absl::ToInt64Milliseconds(scenario_.driver_install));
    v1::Node after;
    if (!inventory_->ReportDriverInstall(&context, report, &after).ok()) return;
    grpc::ClientContext beat;
    testing::Authorize(beat, testing::kAgentToken);
    v1::HeartbeatRequest heartbeat;
    heartbeat.set_node_name(node.name());
    heartbeat.set_kernel_version(node.kernel_version());
    heartbeat.set_driver_version("550.54.15");
    v1::HeartbeatResponse response;
    ASSERT_TRUE(inventory_->Heartbeat(&beat, heartbeat, &response).ok()) << node.name();
  }

  void Arrive(size_t i) {
    const TraceRow& row = trace()[i];
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    v1::PlaceWorkspaceRequest request;
    request.set_workspace_id(row.id);
    request.set_org_id("o-1");
    request.set_project_id("p-1");
    request.set_user_id("u-1");
    request.set_class_id(row.class_id);
    v1::Workspace w;
    observed_.arrived[row.id] = absl::Now();
    ASSERT_TRUE(placement_->PlaceWorkspace(&context, request, &w).ok()) << row.id;
    if (w.state() == v1::WORKSPACE_STATE_PLACED) {
      observed_.placed[row.id] = absl::Now();
      RunFor(row.id, absl::Now());
      return;
    }
    observed_.queued[row.id] = w;
    auto watch = std::make_unique<grpc::ClientContext>();
    testing::Authorize(*watch, testing::kControlPlaneToken);
    grpc::ClientContext* raw = watch.get();
    watches_[row.id] = std::move(watch);
    watchers_.emplace_back([this, raw, id = row.id] {
      v1::WatchWorkspaceRequest request;
      request.set_workspace_id(id);
      auto stream = placement_->WatchWorkspace(raw, request);
      for (v1::Workspace update; stream->Read(&update);) {
        if (update.state() == v1::WORKSPACE_STATE_PLACED) {
          Push({.at = absl::Now(), .workspace = id});
          return;
        }
      }
    });
  }

  // A placed workspace runs its duration, then stops.
  void RunFor(const std::string& id, absl::Time placed) {
    absl::Duration duration;
    for (const TraceRow& row : trace()) {
      if (row.id == id) duration = row.duration;
    }
    Schedule(placed + duration, [this, id] {
      grpc::ClientContext context;
      testing::Authorize(context, testing::kControlPlaneToken);
      v1::StopWorkspaceRequest request;
      request.set_workspace_id(id);
      v1::Workspace w;
      ASSERT_TRUE(placement_->StopWorkspace(&context, request, &w).ok()) << id;
      ++stopped_;
    });
  }

  testing::ServerProcess& server_;
  const Scenario scenario_;
  std::unique_ptr<v1::PlacementService::Stub> placement_;
  std::unique_ptr<v1::InventoryService::Stub> inventory_;
  int fd_ = -1;
  std::thread reader_;
  std::map<std::string, std::unique_ptr<grpc::ClientContext>> watches_;
  std::vector<std::thread> watchers_;
  absl::Mutex mu_;
  std::deque<Incoming> incoming_ ABSL_GUARDED_BY(mu_);
  // The loop's own.
  std::priority_queue<Action, std::vector<Action>, std::greater<>> actions_;
  int64_t sequence_ = 0;
  absl::Time t0_;
  int nodes_ = 0, booting_ = 0, next_node_ = 0;
  size_t stopped_ = 0;
  Observed observed_;
};

std::string WriteActuator(const std::string& dir, const std::string& fifo) {
  std::string path = dir + "/actuator.sh";
  std::ofstream(path) << "#!/usr/bin/env bash\n"
                      << "printf '%s %s %s\\n' \"$WSCHED_POOL\" \"$WSCHED_TARGET_SIZE\" "
                      << "\"${WSCHED_NODES_TO_REMOVE:-}\" >> " << fifo << "\n";
  return path;
}

simulate::SimulationResult SimulateSameTrace(const Observed& real, const Scenario& scenario) {
  absl::StatusOr<core::Catalog> catalog =
      catalog::LoadCatalog(testing::SourcePath("tests/fixtures/simulate.yaml"));
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  simulate::SimulationInput input;
  input.catalog = *catalog;
  input.timings[kPool] = {.node_start = scenario.node_start,
                          .driver_install = scenario.driver_install};
  input.options.batching_window = absl::Milliseconds(200);  // The server's flag below.
  std::vector<simulate::Arrival> trace;
  for (const TraceRow& row : scenario.trace) {
    trace.push_back({.id = row.id, .time = real.arrived.at(row.id), .org = "o-1",
                     .project = "p-1", .class_id = row.class_id, .duration = row.duration});
  }
  absl::StatusOr<simulate::SimulationResult> result = simulate::Simulate(input, trace);
  EXPECT_TRUE(result.ok()) << result.status();
  return *result;
}

// The changes after the first to a nonzero target (both start at 0).
std::vector<simulate::TargetChange> FromFirstScaleUp(std::vector<simulate::TargetChange> changes) {
  while (!changes.empty() && changes.front().target == 0) changes.erase(changes.begin());
  return changes;
}

std::string Describe(const std::vector<simulate::TargetChange>& changes, absl::Time t0) {
  std::string out;
  for (const auto& c : changes) {
    out += absl::StrCat(c.target, "@", absl::FormatDuration(c.at - t0), " ");
  }
  return out;
}

TEST(SimulateAgreement, TargetsAndWaitsMatchTheServer) {
  testing::TestDatabase db;
  char pattern[] = "/tmp/wsched-agreement-XXXXXX";
  std::string dir = mkdtemp(pattern);
  std::string fifo = dir + "/signals";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  testing::ServerConfig config{db.url(), testing::SourcePath("tests/fixtures/simulate.yaml")};
  config.extra_flags = {"--actuator_command=bash," + WriteActuator(dir, fifo),
                        "--scaling_batching_window=200ms", "--node_lost_after=10m"};
  testing::ServerProcess server(config);
  ASSERT_TRUE(server.started()) << server.Log();

  const Scenario scenario{Trace(), kNodeStart};
  Observed real;
  {
    Replay replay(server, fifo, scenario);
    real = replay.Run(absl::Seconds(45));
  }
  ASSERT_EQ(real.placed.size(), Trace().size()) << server.Log();
  simulate::SimulationResult sim = SimulateSameTrace(real, scenario);
  const absl::Time t0 = real.arrived.at("a1");

  const simulate::PoolResult* pool = nullptr;
  for (const auto& p : sim.pools) {
    if (p.pool == kPool) pool = &p;
  }
  ASSERT_NE(pool, nullptr);
  std::vector<simulate::TargetChange> server_targets = FromFirstScaleUp(real.targets);
  std::vector<simulate::TargetChange> sim_targets = FromFirstScaleUp(pool->targets);
  const std::string both = absl::StrCat("server: ", Describe(server_targets, t0),
                                        "\nsimulator: ", Describe(sim_targets, t0));
  std::cout << both << "\n";  // The margins, for the log of a run that passed.
  ASSERT_EQ(server_targets.size(), sim_targets.size()) << both;
  for (size_t i = 0; i < sim_targets.size(); ++i) {
    EXPECT_EQ(server_targets[i].target, sim_targets[i].target) << both;
    EXPECT_LE(absl::AbsDuration(server_targets[i].at - sim_targets[i].at), kJitter) << both;
  }
  // The shape the trace was written for: 2 nodes, a third, then one by one.
  std::vector<int> values;
  for (const auto& c : sim_targets) values.push_back(c.target);
  EXPECT_THAT(values, ::testing::ElementsAre(2, 3, 2, 1, 0)) << both;

  for (const simulate::WorkspaceOutcome& w : sim.workspaces) {
    ASSERT_TRUE(w.placed_at.has_value()) << w.id;
    absl::Duration simulated = *w.placed_at - w.arrival;
    absl::Duration served = real.placed.at(w.id) - real.arrived.at(w.id);
    std::cout << w.id << ": server waited " << served << ", simulator " << simulated << "\n";
    EXPECT_LE(absl::AbsDuration(served - simulated), kJitter)
        << w.id << ": server waited " << served << ", simulator " << simulated;
  }
  // b2 waited for b1's GPUs, not for the third node.
  absl::Duration b2 = real.placed.at("b2") - real.arrived.at("b2");
  EXPECT_LT(b2, kNodeStart) << "b2 landed on the second node when b1 ended";
}

// "KIND_NODE_BOOT" for placement::PhaseKind::kNodeBoot, as the API names it.
std::string ApiName(placement::PhaseKind kind) {
  return absl::AsciiStrToUpper(absl::StrCat("KIND_", placement::PhaseKindName(kind)));
}

double SecondsOf(const google::protobuf::Duration& d) { return d.seconds() + d.nanos() / 1e9; }

TEST(SimulateAgreement, EstimatesAndTheirAccuracyMatchTheServer) {
  testing::TestDatabase db;
  char pattern[] = "/tmp/wsched-agreement-XXXXXX";
  std::string dir = mkdtemp(pattern);
  std::string fifo = dir + "/signals";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  testing::ServerConfig config{db.url(), testing::SourcePath("tests/fixtures/simulate.yaml")};
  config.extra_flags = {"--actuator_command=bash," + WriteActuator(dir, fifo),
                        "--scaling_batching_window=200ms", "--node_lost_after=10m"};
  config.metrics = true;
  testing::ServerProcess server(config);
  ASSERT_TRUE(server.started()) << server.Log();
  // The history the server learns its p50 and p90 from, as the simulator's
  // single figures: every start took 2s, every install 4s. Written before
  // any estimate is read.
  for (int i = 0; i < 5; ++i) {
    db.Query(
        "INSERT INTO timing_samples (kind, pool, kernel, seconds) VALUES "
        "('node_start', 'gpu-h100', '', 2)");
    db.Query(
        "INSERT INTO timing_samples (kind, pool, kernel, seconds) VALUES "
        "('driver_install', 'gpu-h100', '5.15.0-91-generic', 4)");
  }

  const Scenario scenario{InstallTrace(), kNodeStart, kDriverInstall};
  Observed real;
  {
    Replay replay(server, fifo, scenario);
    real = replay.Run(absl::Seconds(45));
  }
  ASSERT_EQ(real.placed.size(), InstallTrace().size()) << server.Log();
  simulate::SimulationResult sim = SimulateSameTrace(real, scenario);

  // Each queued workspace: the same phases, each with the same p50 and p90
  // and as much of it left. The server's figures also learn from the starts
  // this run measured (about 2s each), so within a quarter second.
  const double kFigure = 0.25, kLeft = absl::ToDoubleSeconds(kJitter);
  std::vector<std::string> phases_seen;
  const std::vector<std::string> kBootThenInstall = {"KIND_NODE_BOOT", "KIND_DRIVER_INSTALL"};
  for (const simulate::WorkspaceOutcome& w : sim.workspaces) {
    SCOPED_TRACE(w.id);
    auto served = real.queued.find(w.id);
    ASSERT_EQ(served != real.queued.end(), !w.estimate_phases.empty()) << "queued on one side only";
    if (served == real.queued.end()) continue;
    const auto& phases = served->second.estimate_phases();
    ASSERT_EQ(static_cast<size_t>(phases.size()), w.estimate_phases.size())
        << served->second.estimate_basis();
    for (size_t i = 0; i < w.estimate_phases.size(); ++i) {
      const placement::EstimatePhase& simulated = w.estimate_phases[i];
      const v1::EstimatePhase& given = phases[static_cast<int>(i)];
      std::cout << w.id << " " << ApiName(simulated.kind) << ": server p50 "
                << SecondsOf(given.p50()) << "s p90 " << SecondsOf(given.p90()) << "s left "
                << SecondsOf(given.remaining_p90()) << "s; simulator p50 " << simulated.p50
                << " p90 " << simulated.p90 << " left " << simulated.remaining_p90 << "\n";
      EXPECT_EQ(v1::EstimatePhase::Kind_Name(given.kind()), ApiName(simulated.kind));
      EXPECT_NEAR(SecondsOf(given.p50()), absl::ToDoubleSeconds(simulated.p50), kFigure);
      EXPECT_NEAR(SecondsOf(given.p90()), absl::ToDoubleSeconds(simulated.p90), kFigure);
      EXPECT_NEAR(SecondsOf(given.remaining_p90()), absl::ToDoubleSeconds(simulated.remaining_p90),
                  kLeft);
      phases_seen.push_back(ApiName(simulated.kind));
    }
  }
  // What the trace was written for: waits for a node's boot and for the
  // rest of an install under way.
  EXPECT_THAT(phases_seen, ::testing::Contains("KIND_NODE_BOOT"));
  EXPECT_THAT(phases_seen, ::testing::Contains("KIND_DRIVER_INSTALL"));
  // And a wait for a new node, whose install follows its boot.
  EXPECT_NE(std::search(phases_seen.begin(), phases_seen.end(), kBootThenInstall.begin(),
                        kBootThenInstall.end()),
            phases_seen.end());

  // The share within the p90, by pool: the same placements checked, the
  // same ones kept.
  const simulate::PoolResult* pool = nullptr;
  for (const auto& p : sim.pools) {
    if (p.pool == kPool) pool = &p;
  }
  ASSERT_NE(pool, nullptr);
  const std::string metrics = testing::HttpGet(server.metrics_port(), "/metrics");
  auto checked = [&](const char* within) {
    return testing::MetricValue(metrics, "wsched_estimate_checked_total",
                                {"pool=\"gpu-h100\"", within})
        .value_or(0);
  };
  const double within = checked("within_p90=\"true\"");
  const double outside = checked("within_p90=\"false\"");
  std::cout << "within p90: server " << within << " of " << within + outside << ", simulator "
            << pool->estimates_within_p90 << " of " << pool->estimates_checked << "\n";
  ASSERT_GT(pool->estimates_checked, 0);
  EXPECT_EQ(within + outside, pool->estimates_checked) << metrics;
  EXPECT_EQ(within, pool->estimates_within_p90) << metrics;
  EXPECT_NEAR(
      testing::MetricValue(metrics, "wsched_estimate_within_p90_ratio", {"pool=\"gpu-h100\""})
          .value_or(-1),
      static_cast<double>(pool->estimates_within_p90) / pool->estimates_checked, 1e-9);
}

}  // namespace
}  // namespace wsched
