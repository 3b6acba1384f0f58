// The simulator agrees with the server: a short trace is replayed through
// the real wsched-server (PostgreSQL, its scaling leader and the exec
// actuator) with this test as the cloud - it registers a fake node a fixed
// node start after the actuator asks for it and removes the nodes the signal
// names - and through the simulator (server/simulate/) with the same trace
// and node start. The scale targets over time and every workspace's wait
// must agree within the jitter of the server's 250 ms tick.
//
// Event-driven: the actuator writes each signal to a FIFO the test reads,
// placements arrive on WatchWorkspace streams, and the loop waits only for
// those or for the next moment of the trace.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <queue>
#include <sstream>
#include <thread>

#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/catalog/load.h"
#include "server/simulate/engine.h"
#include "tests/support/fake_nodes.h"
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

// What the server did, as the cloud and the clients saw it.
struct Observed {
  std::vector<simulate::TargetChange> targets;  // Each change of the pool's target.
  std::map<std::string, absl::Time> arrived, placed;
};

// The cloud: reads the actuator's signals, starts and removes nodes; the
// clients: place, watch and stop the trace's workspaces.
class Replay {
 public:
  Replay(testing::ServerProcess& server, const std::string& fifo)
      : server_(server),
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
    for (size_t i = 0; i < Trace().size(); ++i) Schedule(t0_ + Trace()[i].at, [this, i] { Arrive(i); });
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
  bool Done() const {
    return stopped_ == Trace().size() && !observed_.targets.empty() &&
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
      Schedule(in.at + kNodeStart, [this, name] {
        testing::RegisterNode(server_.channel(), testing::FakeGpuNode(name, kPool));
        --booting_;
        ++nodes_;
      });
    }
  }

  void Arrive(size_t i) {
    const TraceRow& row = Trace()[i];
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
    for (const TraceRow& row : Trace()) {
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

simulate::SimulationResult SimulateSameTrace(const Observed& real) {
  absl::StatusOr<core::Catalog> catalog =
      catalog::LoadCatalog(testing::SourcePath("tests/fixtures/simulate.yaml"));
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  simulate::SimulationInput input;
  input.catalog = *catalog;
  input.timings[kPool] = {.node_start = kNodeStart, .driver_install = absl::ZeroDuration()};
  input.options.batching_window = absl::Milliseconds(200);  // The server's flag below.
  std::vector<simulate::Arrival> trace;
  for (const TraceRow& row : Trace()) {
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

  Observed real;
  {
    Replay replay(server, fifo);
    real = replay.Run(absl::Seconds(45));
  }
  ASSERT_EQ(real.placed.size(), Trace().size()) << server.Log();
  simulate::SimulationResult sim = SimulateSameTrace(real);
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

}  // namespace
}  // namespace wsched
