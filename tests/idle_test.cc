// The idle-GPU policy through the real server and a real PostgreSQL, with
// fake agents sending GPU utilisation in their heartbeats: a notify class
// tells the watcher (IDLE with idle_since) and counts wsched_idle_gpus, a
// busy sample clears it and starts the clock again, one busy GPU of two
// keeps a workspace from ever idling, and a stop class warns first (IDLE
// with stops_at) and then stops the workspace, its usage record ending with
// reason "idle". The classes use durations of
// seconds (--min_idle_for=1s); every step awaits the watch stream or the
// server, none sleeps for a guess.
#include <chrono>
#include <memory>
#include <string>

#include <google/protobuf/util/time_util.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/catalog_file.h"
#include "tests/support/fake_agent.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/metrics_text.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched {
namespace {

using google::protobuf::util::TimeUtil;

constexpr char kCatalog[] = R"(classes:
  - id: standard
    display_name: Standard
    resources: {cpu: 4, memory: 16Gi}
    default: true
  - id: gpu-notify
    display_name: 1 GPU, idle after 2s
    resources: {cpu: 4, memory: 16Gi}
    gpu: {count: 1, models: [H100]}
    idle: {gpu_utilization_below: 5%, for: 2s, action: notify}
  - id: gpu-stop
    display_name: 2 GPUs, stopped after 3s idle
    resources: {cpu: 4, memory: 16Gi}
    gpu: {count: 2, models: [H100]}
    idle: {gpu_utilization_below: 5%, for: 3s, action: stop, warn_before: 1s}
pools:
  - id: general
    node: {cpu: 30, memory: 120Gi}
    max_size: 4
  - id: gpu-h100
    node: {cpu: 200, memory: 1700Gi, gpus: 8, gpu_model: H100}
    max_size: 2
driver_policy:
  - kernel: "5.15.0-*-generic"
    os_id: ubuntu
    os_version: "22.04"
    driver_version: 550.54.15
    driver_branch: "550"
    installer_repo: registry.example.com/nvidia/driver
)";

absl::Time TimeOf(const google::protobuf::Timestamp& t) {
  return absl::FromUnixMicros(TimeUtil::TimestampToMicroseconds(t));
}

// One WatchWorkspace stream, read message by message.
class Watch {
 public:
  Watch(v1::PlacementService::Stub& stub, const std::string& id) {
    testing::Authorize(context_, testing::kControlPlaneToken);
    context_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(40));
    v1::WatchWorkspaceRequest request;
    request.set_workspace_id(id);
    reader_ = stub.WatchWorkspace(&context_, request);
  }
  ~Watch() { context_.TryCancel(); }

  // The next message that satisfies `done`, and when it arrived; fails the
  // test when the stream ends first.
  template <typename Done>
  std::pair<v1::Workspace, absl::Time> Await(Done done, const std::string& what) {
    v1::Workspace update;
    while (reader_->Read(&update)) {
      seen_.push_back(update);
      if (done(update)) return {update, absl::Now()};
    }
    ADD_FAILURE() << "the watch ended before " << what << "; last: " << update.DebugString();
    return {update, absl::Now()};
  }
  const std::vector<v1::Workspace>& seen() const { return seen_; }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::Workspace>> reader_;
  std::vector<v1::Workspace> seen_;
};

bool Idle(const v1::Workspace& w) { return w.event().kind() == v1::WorkspaceEvent::KIND_IDLE; }

class IdleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::ServerConfig config{db_.url(), catalog_.path()};
    // Heartbeats every second: samples older than 3 s say nothing.
    config.extra_flags = {"--min_idle_for=1s", "--heartbeat_interval=1s"};
    config.metrics = true;
    server_ = std::make_unique<testing::ServerProcess>(config);
    ASSERT_TRUE(server_->started());
    placement_ = v1::PlacementService::NewStub(server_->channel());
    node_ = testing::FakeGpuNode("h100-a", "gpu-h100");
    testing::RegisterNode(server_->channel(), node_);
  }

  v1::Workspace Place(const std::string& id, const std::string& class_id) {
    v1::Workspace w;
    grpc::Status status = testing::PlaceAs(server_->channel(), id, class_id, &w);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(w.state(), v1::WORKSPACE_STATE_PLACED);
    return w;
  }

  std::optional<double> Metric(const std::string& name, const std::string& class_id) {
    return testing::MetricValue(testing::HttpGet(server_->metrics_port(), "/metrics"), name,
                                {"pool=\"gpu-h100\"", absl::StrCat("class=\"", class_id, "\"")});
  }

  testing::TestDatabase db_;
  testing::CatalogFile catalog_{"idle", kCatalog};
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::PlacementService::Stub> placement_;
  v1::NodeInfo node_;
};

TEST_F(IdleTest, NotifyTellsTheWatcherCountsTheMetricAndActivityStartsTheClockAgain) {
  const v1::Workspace placed = Place("ws-notify", "gpu-notify");
  ASSERT_EQ(placed.gpus_size(), 1);
  const std::string gpu = placed.gpus(0).uuid();
  Watch watch(*placement_, "ws-notify");
  watch.Await([](const v1::Workspace& w) { return w.state() == v1::WORKSPACE_STATE_PLACED; },
              "the current state");
  const absl::Time before = absl::Now();
  testing::FakeAgent agent(server_->channel(), node_);
  agent.Set(gpu, 3);

  auto [idle, told_at] = watch.Await(Idle, "the IDLE event");
  ASSERT_TRUE(Idle(idle));
  EXPECT_EQ(idle.state(), v1::WORKSPACE_STATE_PLACED);
  const absl::Time idle_since = TimeOf(idle.event().idle_since());
  EXPECT_GE(idle_since, before - absl::Milliseconds(50));  // The first idle sample.
  EXPECT_LT(idle_since, before + absl::Seconds(2));
  EXPECT_GE(told_at, idle_since + absl::Seconds(2)) << "told before `for` passed";
  EXPECT_FALSE(idle.event().has_stops_at()) << "notify never stops";
  // Every replica's readers see it: it is on the record.
  v1::Workspace read;
  ASSERT_TRUE(testing::GetAs(server_->channel(), "ws-notify", &read).ok());
  EXPECT_TRUE(Idle(read));
  EXPECT_EQ(Metric("wsched_idle_gpus", "gpu-notify"), 1.0);

  // In use again: the event is cleared at the next tick, the metric drops.
  agent.Set(gpu, 40);
  auto [busy, busy_at] = watch.Await([](const v1::Workspace& w) { return !Idle(w); },
                                     "the event cleared");
  EXPECT_EQ(busy.state(), v1::WORKSPACE_STATE_PLACED);
  EXPECT_EQ(Metric("wsched_idle_gpus", "gpu-notify"), 0.0);
  EXPECT_DOUBLE_EQ(*Metric("wsched_gpu_utilization_ratio", "gpu-notify"), 0.4);

  // Idle once more: counted from a sample after the busy one, not from the first.
  const absl::Time busy_seen = absl::Now();
  agent.Set(gpu, 0);
  auto [again, again_at] = watch.Await(Idle, "the second IDLE event");
  EXPECT_GT(TimeOf(again.event().idle_since()), idle_since + absl::Seconds(1));
  EXPECT_GE(again_at, TimeOf(again.event().idle_since()) + absl::Seconds(2));
  EXPECT_GE(TimeOf(again.event().idle_since()), busy_seen - absl::Seconds(1));
  EXPECT_EQ(Metric("wsched_idle_gpus", "gpu-notify"), 1.0);
  // Notify never stops it.
  ASSERT_TRUE(testing::GetAs(server_->channel(), "ws-notify", &read).ok());
  EXPECT_EQ(read.state(), v1::WORKSPACE_STATE_PLACED);
}

TEST_F(IdleTest, StopWarnsFirstThenStopsAndOneBusyGpuKeepsAWorkspaceRunning) {
  const v1::Workspace idle_one = Place("ws-idle", "gpu-stop");
  const v1::Workspace busy_one = Place("ws-half-busy", "gpu-stop");
  ASSERT_EQ(idle_one.gpus_size(), 2);
  ASSERT_EQ(busy_one.gpus_size(), 2);
  Watch watch(*placement_, "ws-idle");
  watch.Await([](const v1::Workspace& w) { return w.state() == v1::WORKSPACE_STATE_PLACED; },
              "the current state");
  testing::FakeAgent agent(server_->channel(), node_);
  for (const auto& gpu : idle_one.gpus()) agent.Set(gpu.uuid(), 0);
  agent.Set(busy_one.gpus(0).uuid(), 0);
  agent.Set(busy_one.gpus(1).uuid(), 55);  // One GPU of two in use.

  // First the warning: IDLE with stops_at = idle_since + for, warn_before ahead.
  auto [warned, warned_at] = watch.Await(Idle, "the warning");
  ASSERT_TRUE(warned.event().has_stops_at());
  const absl::Time idle_since = TimeOf(warned.event().idle_since());
  const absl::Time stops_at = TimeOf(warned.event().stops_at());
  EXPECT_EQ(stops_at, idle_since + absl::Seconds(3));
  EXPECT_GE(warned_at, idle_since + absl::Seconds(2)) << "warned before for - warn_before";
  EXPECT_EQ(warned.state(), v1::WORKSPACE_STATE_PLACED);

  // Then the stop, not before stops_at, and the stream's last message.
  auto [stopped, stopped_at] = watch.Await(
      [](const v1::Workspace& w) { return w.state() == v1::WORKSPACE_STATE_STOPPED; }, "the stop");
  EXPECT_GE(stopped_at, stops_at);
  EXPECT_TRUE(server_->WaitForLog("workspace stopped: GPUs idle", absl::Seconds(5)));
  EXPECT_EQ(Metric("wsched_idle_stops_total", "gpu-stop"), 1.0);
  // The usage ledger says why it ended: the stop path's reason, "idle".
  EXPECT_EQ(db_.Query("SELECT string_agg(end_reason, ',') FROM usage_records "
                      "WHERE workspace_id = 'ws-idle'"),
            "idle");
  // Every message between the warning and the stop still said when.
  for (const v1::Workspace& w : watch.seen()) {
    if (w.state() == v1::WORKSPACE_STATE_PLACED && Idle(w)) {
      EXPECT_EQ(TimeOf(w.event().stops_at()), stops_at);
    }
  }

  // The half-busy workspace, sampled as long as the other, was never idle.
  v1::Workspace half;
  ASSERT_TRUE(testing::GetAs(server_->channel(), "ws-half-busy", &half).ok());
  EXPECT_EQ(half.state(), v1::WORKSPACE_STATE_PLACED);
  EXPECT_FALSE(Idle(half));
  EXPECT_EQ(Metric("wsched_idle_gpus", "gpu-stop"), 0.0);
}

}  // namespace
}  // namespace wsched
