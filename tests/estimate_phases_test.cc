// Estimates that are checked, through the real server and PostgreSQL: a
// pending workspace shows the phases its time to GPU is made of, each with
// the p50 and p90 learned from the pool's measured samples (or the default
// that stood in); the estimate it was given when queued is stored with it,
// and once the queue places it, the share of placements within their p90
// is reported by pool. The measured history is written to timing_samples
// by the test, so the learned figures are known exactly. A placed
// workspace's first ready report teaches its pool the FIRST_READY phase.
#include <google/protobuf/util/time_util.h>

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"
#include "tests/support/catalog_file.h"
#include "tests/support/eventually.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/metrics_text.h"
#include "tests/support/rpc_details.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"
#include "wsched/v1/scaling.grpc.pb.h"

namespace wsched {
namespace {

// Two pools of one node each whose nodes register before their driver is
// installed; gpu-elastic has no node and may start one.
constexpr char kCatalog[] = R"(classes:
  - id: standard
    display_name: Standard
    resources: {cpu: 4, memory: 16Gi, ephemeral_storage: 30Gi, disk: 50Gi}
    pool_selector: {workload: general}
    default: true
  - id: gpu-slow
    display_name: 1 GPU where installs are slow
    resources: {cpu: 4, memory: 16Gi, ephemeral_storage: 100Gi, disk: 200Gi}
    gpu: {count: 1, models: [H100], isolation: container}
    pool_selector: {size: slow}
  - id: gpu-fast
    display_name: 1 GPU where installs were instant
    resources: {cpu: 4, memory: 16Gi, ephemeral_storage: 100Gi, disk: 200Gi}
    gpu: {count: 1, models: [H100], isolation: container}
    pool_selector: {size: fast}
  - id: gpu-elastic
    display_name: 1 GPU, elastic pool
    resources: {cpu: 4, memory: 16Gi, ephemeral_storage: 100Gi, disk: 200Gi}
    gpu: {count: 1, models: [H100], isolation: container}
    pool_selector: {size: elastic}
  - id: gpu-elastic-8x
    display_name: 8 GPUs, elastic pool
    resources: {cpu: 32, memory: 256Gi, ephemeral_storage: 100Gi, disk: 200Gi}
    gpu: {count: 8, models: [H100], isolation: container}
    pool_selector: {size: elastic}
pools:
  - id: general
    labels: {workload: general}
    node: {cpu: 30, memory: 120Gi, ephemeral_storage: 300Gi, disk: 1Ti}
    max_size: 4
  - id: gpu-slow
    labels: {size: slow}
    node: {cpu: 200, memory: 1700Gi, ephemeral_storage: 3Ti, disk: 4Ti, gpus: 8, gpu_model: H100}
    max_size: 1
  - id: gpu-fast
    labels: {size: fast}
    node: {cpu: 200, memory: 1700Gi, ephemeral_storage: 3Ti, disk: 4Ti, gpus: 8, gpu_model: H100}
    max_size: 1
  - id: gpu-elastic
    labels: {size: elastic}
    node: {cpu: 200, memory: 1700Gi, ephemeral_storage: 3Ti, disk: 4Ti, gpus: 8, gpu_model: H100}
    max_size: 3
driver_policy:
  - kernel: "5.15.0-*-generic"
    os_id: ubuntu
    os_version: "22.04"
    driver_version: 550.54.15
    driver_branch: "550"
    installer_repo: registry.example.com/nvidia/driver
)";
constexpr char kKernel[] = "5.15.0-91-generic";

double Seconds(const google::protobuf::Duration& d) { return d.seconds() + d.nanos() / 1e9; }

class EstimatePhasesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::ServerConfig config{db_.url(), catalog_.path()};
    config.extra_flags = {"--scaling_batching_window=100ms"};
    config.metrics = true;
    server_ = std::make_unique<testing::ServerProcess>(config);
    ASSERT_TRUE(server_->started());
    inventory_ = v1::InventoryService::NewStub(server_->channel());
  }

  // Measured history, as the server would have recorded it. Written before
  // any estimate is read, so the server's first read of the samples has it.
  void Sample(const std::string& kind, const std::string& pool, const std::string& kernel,
              double seconds) {
    db_.Query("INSERT INTO timing_samples (kind, pool, kernel, seconds) VALUES ('" + kind + "', '" +
              pool + "', '" + kernel + "', " + std::to_string(seconds) + ")");
  }

  v1::Workspace Place(const std::string& id, const std::string& class_id) {
    v1::Workspace w;
    grpc::Status status = testing::PlaceAs(server_->channel(), id, class_id, &w);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return w;
  }

  void RegisterWithoutDriver(const std::string& node, const std::string& pool) {
    v1::NodeInfo info = testing::FakeGpuNode(node, pool);
    info.set_driver_version("");
    testing::RegisterNode(server_->channel(), info);
  }

  // The agent's install: reported, then the new driver loaded.
  void ReportDriverInstalled(const std::string& node) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::ReportDriverInstallRequest report;
    report.set_node_name(node);
    report.set_kernel_version(kKernel);
    report.set_success(true);
    report.set_detail("550.54.15");
    v1::Node after;
    grpc::Status status = inventory_->ReportDriverInstall(&context, report, &after);
    ASSERT_TRUE(status.ok()) << status.error_message();
    // The agent's next heartbeat carries the driver it loaded: ready.
    grpc::ClientContext beat;
    testing::Authorize(beat, testing::kAgentToken);
    v1::HeartbeatRequest heartbeat;
    heartbeat.set_node_name(node);
    heartbeat.set_kernel_version(kKernel);
    heartbeat.set_driver_version("550.54.15");
    v1::HeartbeatResponse response;
    status = inventory_->Heartbeat(&beat, heartbeat, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  // Follows the workspace's watch stream until it is placed.
  void AwaitPlaced(const std::string& id) {
    auto placement = v1::PlacementService::NewStub(server_->channel());
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    v1::WatchWorkspaceRequest request;
    request.set_workspace_id(id);
    auto stream = placement->WatchWorkspace(&context, request);
    v1::Workspace update;
    while (stream->Read(&update)) {
      if (update.state() == v1::WORKSPACE_STATE_PLACED) {
        context.TryCancel();
        return;
      }
    }
    ADD_FAILURE() << "workspace " << id << " was never placed; last: " << update.pending_reason();
  }

  // ReportWorkspaceReady as the control plane calls it; `ready_time`
  // unset when null.
  grpc::Status ReportReady(const std::string& id, const google::protobuf::Timestamp* ready_time,
                           v1::Workspace* out) {
    auto placement = v1::PlacementService::NewStub(server_->channel());
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    v1::ReportWorkspaceReadyRequest request;
    request.set_workspace_id(id);
    if (ready_time != nullptr) *request.mutable_ready_time() = *ready_time;
    return placement->ReportWorkspaceReady(&context, request, out);
  }

  // What a refused report left behind: the first_ready samples and the
  // workspaces with a ready time.
  std::string ReadyRecords() {
    return db_.Query(
        "SELECT (SELECT count(*) FROM timing_samples WHERE kind = 'first_ready') || '/' || "
        "(SELECT count(*) FROM workspaces WHERE ready_at IS NOT NULL)");
  }

  double Metric(const std::string& name, const std::vector<std::string>& labels) {
    std::string text = testing::HttpGet(server_->metrics_port(), "/metrics");
    return testing::MetricValue(text, name, labels).value_or(-1);
  }

  testing::TestDatabase db_;
  testing::CatalogFile catalog_{"estimate-phases", kCatalog};
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::InventoryService::Stub> inventory_;
};

TEST_F(EstimatePhasesTest, APendingWorkspaceShowsItsPhaseWithTheLearnedP50AndP90) {
  // Five measured starts of 100s to 500s: p50 300s, p90 460s (interpolated).
  for (double seconds : {500, 100, 400, 200, 300}) Sample("node_start", "gpu-elastic", "", seconds);
  v1::Workspace w = Place("elastic", "gpu-elastic");
  ASSERT_EQ(w.state(), v1::WORKSPACE_STATE_PENDING);
  // Before the scale-up is asked for, the batching window (100ms) comes
  // first; once asked for, the node boot, then the driver install its new
  // node needs under the driver policy (none measured: the default).
  ASSERT_GE(w.estimate_phases_size(), 2) << w.estimate_basis();
  const v1::EstimatePhase& boot = w.estimate_phases(w.estimate_phases_size() - 2);
  EXPECT_EQ(boot.kind(), v1::EstimatePhase::KIND_NODE_BOOT);
  const v1::EstimatePhase& install = w.estimate_phases(w.estimate_phases_size() - 1);
  EXPECT_EQ(install.kind(), v1::EstimatePhase::KIND_DRIVER_INSTALL);
  EXPECT_TRUE(install.default_used());
  EXPECT_DOUBLE_EQ(Seconds(install.remaining_p90()), 600);
  double p50_left = 0, p90_left = 0;
  for (const v1::EstimatePhase& phase : w.estimate_phases()) {
    p50_left += Seconds(phase.remaining_p50());
    p90_left += Seconds(phase.remaining_p90());
  }
  if (w.estimate_phases_size() == 3) {
    EXPECT_EQ(w.estimate_phases(0).kind(), v1::EstimatePhase::KIND_QUEUE);
    EXPECT_NEAR(Seconds(w.estimate_phases(0).p90()), 0.1, 1e-6);
  }
  EXPECT_DOUBLE_EQ(Seconds(boot.p50()), 300);
  EXPECT_NEAR(Seconds(boot.p90()), 460, 1e-3);
  EXPECT_EQ(boot.samples(), 5);
  EXPECT_FALSE(boot.default_used());
  // Whatever of the boot elapsed is taken off both; the sum of the p50s
  // left is the estimate.
  EXPECT_NEAR(Seconds(boot.remaining_p50()), 300 - Seconds(boot.elapsed()), 1e-3);
  EXPECT_NEAR(Seconds(boot.remaining_p90()), 460 - Seconds(boot.elapsed()), 1e-3);
  EXPECT_NEAR(Seconds(w.estimated_time_to_place()), p50_left, 1e-3);

  // The estimate it was given when queued is stored with it: the sums of
  // what was left of each phase.
  EXPECT_NEAR(std::stod(db_.Query("SELECT estimate_p50_seconds FROM workspaces WHERE id = "
                                  "'elastic'")),
              p50_left, 1e-3);
  EXPECT_NEAR(std::stod(db_.Query("SELECT estimate_p90_seconds FROM workspaces WHERE id = "
                                  "'elastic'")),
              p90_left, 1e-3);
  EXPECT_EQ(db_.Query("SELECT estimate_took_seconds IS NULL FROM workspaces WHERE id = 'elastic'"),
            "t");
}

TEST_F(EstimatePhasesTest, AWaitForANewNodeWaitsTheInstallLearnedOnThePoolsLatestKernel) {
  for (double seconds : {20, 40}) Sample("node_start", "gpu-elastic", "", seconds);
  // No node of the pool is up: the kernel of its most recent install
  // stands in for the new node's. An older kernel's slower installs do not.
  for (double seconds : {60, 120, 180}) Sample("driver_install", "gpu-elastic", kKernel, seconds);
  db_.Query(
      "INSERT INTO timing_samples (kind, pool, kernel, seconds, measured_at) VALUES "
      "('driver_install', 'gpu-elastic', '5.15.0-88-generic', 900, now() - interval '1 day')");
  v1::Workspace w = Place("elastic", "gpu-elastic");
  ASSERT_EQ(w.state(), v1::WORKSPACE_STATE_PENDING);
  ASSERT_GE(w.estimate_phases_size(), 2) << w.estimate_basis();
  const v1::EstimatePhase& boot = w.estimate_phases(w.estimate_phases_size() - 2);
  const v1::EstimatePhase& install = w.estimate_phases(w.estimate_phases_size() - 1);
  EXPECT_EQ(boot.kind(), v1::EstimatePhase::KIND_NODE_BOOT);
  EXPECT_EQ(install.kind(), v1::EstimatePhase::KIND_DRIVER_INSTALL);
  EXPECT_DOUBLE_EQ(Seconds(install.p50()), 120);
  EXPECT_NEAR(Seconds(install.p90()), 168, 1e-3);  // Interpolated between 120 and 180.
  EXPECT_EQ(install.samples(), 3);
  EXPECT_FALSE(install.default_used());
  EXPECT_EQ(Seconds(install.elapsed()), 0) << "it begins once the new node registers";
  EXPECT_THAT(w.estimate_basis(),
              ::testing::HasSubstr("then driver install median on kernel " + std::string(kKernel)));
  // The estimate is the boot and the install left, and the window if it
  // was not asked for yet.
  double p50_left = 0;
  for (const v1::EstimatePhase& phase : w.estimate_phases()) {
    p50_left += Seconds(phase.remaining_p50());
  }
  EXPECT_NEAR(Seconds(w.estimated_time_to_place()), p50_left, 1e-3);
  EXPECT_GE(Seconds(w.estimated_time_to_place()), 120);
}

TEST_F(EstimatePhasesTest, WithCloudStartsMeasuredANewNodeStartsWithTheCloudsStart) {
  // From the signal to RUNNING 30s to 90s; from RUNNING to registered 100s
  // to 300s. The node starts of the pool (from the request) no longer count.
  for (double seconds : {30, 60, 90}) Sample("cloud_start", "gpu-elastic", "", seconds);
  for (double seconds : {100, 200, 300}) Sample("node_boot", "gpu-elastic", "", seconds);
  Sample("node_start", "gpu-elastic", "", 1000);
  v1::Workspace w = Place("elastic", "gpu-elastic");
  ASSERT_EQ(w.state(), v1::WORKSPACE_STATE_PENDING);
  ASSERT_GE(w.estimate_phases_size(), 3) << w.estimate_basis();
  const int n = w.estimate_phases_size();
  const v1::EstimatePhase& cloud = w.estimate_phases(n - 3);
  const v1::EstimatePhase& boot = w.estimate_phases(n - 2);
  EXPECT_EQ(cloud.kind(), v1::EstimatePhase::KIND_CLOUD_START);
  EXPECT_DOUBLE_EQ(Seconds(cloud.p50()), 60);
  EXPECT_NEAR(Seconds(cloud.p90()), 84, 1e-3);
  EXPECT_EQ(cloud.samples(), 3);
  EXPECT_EQ(boot.kind(), v1::EstimatePhase::KIND_NODE_BOOT);
  EXPECT_DOUBLE_EQ(Seconds(boot.p50()), 200);
  EXPECT_NEAR(Seconds(boot.p90()), 280, 1e-3);
  EXPECT_EQ(boot.elapsed().seconds(), 0) << "the boot begins once the instance runs";
  EXPECT_EQ(w.estimate_phases(n - 1).kind(), v1::EstimatePhase::KIND_DRIVER_INSTALL);
}

TEST_F(EstimatePhasesTest, TheActuatorsRunningReportSplitsANodeStartIntoCloudStartAndBoot) {
  Place("elastic", "gpu-elastic");
  auto scaling = v1::ScalingService::NewStub(server_->channel());
  // The scale-up the actuator is asked for, and its generation.
  int64_t generation = 0;
  ASSERT_TRUE(testing::Eventually([&] {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kActuatorToken);
    v1::ScalingState state;
    if (!scaling->GetScalingState(&context, {}, &state).ok()) return false;
    for (const v1::PoolSignal& signal : state.pools()) {
      if (signal.pool() == "gpu-elastic" && signal.target_size() > 0) {
        generation = signal.generation();
        return true;
      }
    }
    return false;
  }));
  auto report = [&](int64_t of_generation) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kActuatorToken);
    v1::ActuatorReport running;
    running.set_pool("gpu-elastic");
    running.set_generation(of_generation);
    running.set_state(v1::ActuatorReport::INSTANCE_STATE_RUNNING);
    running.set_instances(1);
    v1::ActuatorReportResponse ignored;
    ASSERT_TRUE(scaling->ReportActuator(&context, running, &ignored).ok());
  };
  auto count = [&](const std::string& kind) {
    return db_.Query("SELECT count(*) FROM timing_samples WHERE pool = 'gpu-elastic' AND kind = '" +
                     kind + "'");
  };
  // A report of a generation no request was handed on with measures nothing.
  report(generation + 100);
  report(generation);
  report(generation);  // Only the first RUNNING of a request counts.
  ASSERT_TRUE(testing::Eventually([&] { return count("cloud_start") == "1"; }))
      << count("cloud_start");
  RegisterWithoutDriver("elastic-1", "gpu-elastic");
  ASSERT_TRUE(testing::Eventually([&] { return count("node_boot") == "1"; }));
  EXPECT_EQ(count("cloud_start"), "1");
  // Each within what the test took; the cloud start from the signal.
  EXPECT_EQ(db_.Query("SELECT bool_and(seconds < 30) FROM timing_samples WHERE pool = "
                      "'gpu-elastic' AND kind IN ('cloud_start', 'node_boot')"),
            "t");
}

TEST_F(EstimatePhasesTest, WithoutSamplesTheDefaultStandsInAndSaysSo) {
  RegisterWithoutDriver("slow-1", "gpu-slow");
  v1::Workspace w = Place("waits", "gpu-slow");
  ASSERT_EQ(w.state(), v1::WORKSPACE_STATE_PENDING);
  ASSERT_EQ(w.estimate_phases_size(), 1) << w.estimate_basis();
  const v1::EstimatePhase& install = w.estimate_phases(0);
  EXPECT_EQ(install.kind(), v1::EstimatePhase::KIND_DRIVER_INSTALL);
  EXPECT_TRUE(install.default_used());
  EXPECT_EQ(install.samples(), 0);
  // --default_driver_install_time, 10 minutes, for both.
  EXPECT_DOUBLE_EQ(Seconds(install.p50()), 600);
  EXPECT_DOUBLE_EQ(Seconds(install.p90()), 600);
}

TEST_F(EstimatePhasesTest, TheShareWithinTheP90IsReportedByPool) {
  // In gpu-slow installs took 30 to 60 minutes (p90 56m); in gpu-fast one
  // to two minutes (p90 1m48s).
  for (double seconds : {1800, 2400, 3600}) Sample("driver_install", "gpu-slow", kKernel, seconds);
  for (double seconds : {60, 90, 120}) Sample("driver_install", "gpu-fast", kKernel, seconds);
  RegisterWithoutDriver("slow-1", "gpu-slow");
  RegisterWithoutDriver("fast-1", "gpu-fast");
  v1::Workspace slow = Place("slow", "gpu-slow");
  v1::Workspace fast = Place("fast", "gpu-fast");
  ASSERT_EQ(slow.state(), v1::WORKSPACE_STATE_PENDING);
  ASSERT_EQ(fast.state(), v1::WORKSPACE_STATE_PENDING);
  ASSERT_EQ(slow.estimate_phases_size(), 1);
  EXPECT_NEAR(Seconds(slow.estimate_phases(0).p90()), 3360, 1e-3);
  EXPECT_EQ(slow.estimate_phases(0).samples(), 3);
  ASSERT_EQ(fast.estimate_phases_size(), 1);
  EXPECT_NEAR(Seconds(fast.estimate_phases(0).p90()), 114, 1e-3);

  // The fast one was queued an hour ago, as its stored estimate says: its
  // install took far longer than the pool's (the check reads the time the
  // estimate was given from the row, not from this process).
  db_.Query(
      "UPDATE workspaces SET estimate_given_at = estimate_given_at - interval '1 hour' "
      "WHERE id = 'fast'");
  ReportDriverInstalled("slow-1");
  ReportDriverInstalled("fast-1");
  AwaitPlaced("slow");
  AwaitPlaced("fast");

  // The placer checks each right after its commit; the metric follows.
  ASSERT_TRUE(testing::Eventually([&] {
    return Metric("wsched_estimate_within_p90_ratio", {"pool=\"gpu-slow\""}) == 1 &&
           Metric("wsched_estimate_within_p90_ratio", {"pool=\"gpu-fast\""}) == 0;
  })) << testing::HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_EQ(Metric("wsched_estimate_window_placements", {"pool=\"gpu-slow\""}), 1);
  EXPECT_EQ(Metric("wsched_estimate_window_placements", {"pool=\"gpu-fast\""}), 1);
  EXPECT_EQ(Metric("wsched_estimate_checked_total", {"pool=\"gpu-slow\"", "within_p90=\"true\""}),
            1);
  EXPECT_EQ(Metric("wsched_estimate_checked_total", {"pool=\"gpu-fast\"", "within_p90=\"false\""}),
            1);
  // What each took is stored beside what it was given.
  EXPECT_EQ(db_.Query("SELECT estimate_took_seconds < 60 FROM workspaces WHERE id = 'slow'"), "t");
  EXPECT_EQ(db_.Query("SELECT estimate_took_seconds BETWEEN 3600 AND 3660 FROM workspaces "
                      "WHERE id = 'fast'"),
            "t");
}

TEST_F(EstimatePhasesTest, AReadyReportTeachesThePoolItsFirstReady) {
  using google::protobuf::util::TimeUtil;
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("elastic-1", "gpu-elastic"));
  v1::Workspace first = Place("first", "gpu-elastic");
  ASSERT_EQ(first.state(), v1::WORKSPACE_STATE_PLACED) << first.pending_reason();
  EXPECT_FALSE(first.has_ready_time());

  // Ready 40s after it was placed (the control plane's clock may run a
  // little ahead of the server's: up to a minute is believed).
  const google::protobuf::Timestamp ready =
      first.placed_at() + TimeUtil::SecondsToDuration(40);
  v1::Workspace answer;
  grpc::Status status = ReportReady("first", &ready, &answer);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(answer.state(), v1::WORKSPACE_STATE_PLACED);
  EXPECT_EQ(answer.ready_time(), ready);
  EXPECT_EQ(db_.Query("SELECT kind || ' ' || pool || ' ' || seconds FROM timing_samples "
                      "WHERE kind = 'first_ready'"),
            "first_ready gpu-elastic 40");
  v1::Workspace read;
  ASSERT_TRUE(testing::GetAs(server_->channel(), "first", &read).ok());
  EXPECT_EQ(read.ready_time(), ready);

  // A second report of the same placement answers the same and records
  // nothing: the first report won.
  const google::protobuf::Timestamp later = ready + TimeUtil::SecondsToDuration(10);
  status = ReportReady("first", &later, &answer);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(answer.ready_time(), ready);
  status = ReportReady("first", nullptr, &answer);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(answer.ready_time(), ready);
  EXPECT_EQ(ReadyRecords(), "1/1");

  // A workspace waiting for the pool's next node ends its phases with the
  // first ready the pool measured, which its time to place leaves out.
  v1::Workspace big = Place("big", "gpu-elastic-8x");
  ASSERT_EQ(big.state(), v1::WORKSPACE_STATE_PENDING);
  ASSERT_GE(big.estimate_phases_size(), 2) << big.estimate_basis();
  const v1::EstimatePhase& last = big.estimate_phases(big.estimate_phases_size() - 1);
  EXPECT_EQ(last.kind(), v1::EstimatePhase::KIND_FIRST_READY);
  EXPECT_DOUBLE_EQ(Seconds(last.p50()), 40);
  EXPECT_DOUBLE_EQ(Seconds(last.p90()), 40);
  EXPECT_EQ(last.samples(), 1);
  EXPECT_FALSE(last.default_used());
  double to_place = 0;
  for (int i = 0; i + 1 < big.estimate_phases_size(); ++i) {
    EXPECT_NE(big.estimate_phases(i).kind(), v1::EstimatePhase::KIND_FIRST_READY);
    to_place += Seconds(big.estimate_phases(i).remaining_p50());
  }
  EXPECT_NEAR(Seconds(big.estimated_time_to_place()), to_place, 1e-3);
  ASSERT_TRUE(big.has_estimated_time_to_ready());
  EXPECT_NEAR(Seconds(big.estimated_time_to_ready()), to_place + 40, 1e-3);
  // The estimate checked against its placement is the time to place alone.
  EXPECT_NEAR(std::stod(db_.Query("SELECT estimate_p50_seconds FROM workspaces WHERE id = 'big'")),
              to_place, 1e-3);
}

TEST_F(EstimatePhasesTest, ARefusedReadyReportSaysWhyAndWritesNothing) {
  using google::protobuf::util::TimeUtil;
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("elastic-1", "gpu-elastic"));
  v1::Workspace placed = Place("placed", "gpu-elastic");
  ASSERT_EQ(placed.state(), v1::WORKSPACE_STATE_PLACED) << placed.pending_reason();
  v1::Workspace pending = Place("pending", "gpu-elastic-8x");
  ASSERT_EQ(pending.state(), v1::WORKSPACE_STATE_PENDING);
  // Without a sample there is no FIRST_READY phase: no default stands in.
  for (const v1::EstimatePhase& phase : pending.estimate_phases()) {
    EXPECT_NE(phase.kind(), v1::EstimatePhase::KIND_FIRST_READY);
  }
  EXPECT_FALSE(pending.has_estimated_time_to_ready());

  v1::Workspace out;
  grpc::Status status = ReportReady("nobody", nullptr, &out);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << status.error_message();
  EXPECT_EQ(testing::ReasonOf(status), "WORKSPACE_NOT_FOUND");

  status = ReportReady("pending", nullptr, &out);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
  EXPECT_EQ(testing::ReasonOf(status), "WORKSPACE_NOT_PLACED");
  EXPECT_THAT(status.error_message(), ::testing::HasSubstr("is pending, not placed"));

  const google::protobuf::Timestamp before =
      placed.placed_at() - TimeUtil::SecondsToDuration(1);
  status = ReportReady("placed", &before, &out);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_EQ(testing::ReasonOf(status), "INVALID_FIELD");
  EXPECT_THAT(status.error_message(), ::testing::StartsWith("ready_time: must not be before"));

  const google::protobuf::Timestamp ahead = TimeUtil::GetCurrentTime() + TimeUtil::SecondsToDuration(120);
  status = ReportReady("placed", &ahead, &out);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_THAT(status.error_message(), ::testing::StartsWith("ready_time: must not be more than"));

  EXPECT_EQ(ReadyRecords(), "0/0");

  // A stopped workspace is not placed either, and a later report of the
  // refused one, without a time, is believed.
  ASSERT_TRUE(ReportReady("placed", nullptr, &out).ok());
  EXPECT_TRUE(out.has_ready_time());
  ASSERT_TRUE(testing::StopAs(server_->channel(), "placed", &out).ok());
  status = ReportReady("placed", nullptr, &out);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
  EXPECT_EQ(ReadyRecords(), "1/1");
}

}  // namespace
}  // namespace wsched
