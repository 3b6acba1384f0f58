// Placement through the real gRPC server and a real PostgreSQL: density,
// model fallback, packing, pending, idempotency, quota, device specs.
#include <nlohmann/json.hpp>

#include <set>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/placement.grpc.pb.h"
#include "wsched/v1/settings.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

class PlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<testing::ServerProcess>(
        testing::ServerConfig{db_.url(), testing::SourcePath("classes/saas.yaml")});
    ASSERT_TRUE(server_->started());
    stub_ = v1::PlacementService::NewStub(server_->channel());
  }

  grpc::Status Place(const std::string& id, const std::string& cls, v1::Workspace* out,
                     const std::string& org = "o-1") {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    v1::PlaceWorkspaceRequest request;
    request.set_workspace_id(id);
    request.set_org_id(org);
    request.set_project_id("p-1");
    request.set_user_id("u-1");
    request.set_class_id(cls);
    return stub_->PlaceWorkspace(&context, request, out);
  }

  v1::Workspace MustPlace(const std::string& id, const std::string& cls) {
    v1::Workspace out;
    grpc::Status status = Place(id, cls, &out);
    EXPECT_TRUE(status.ok()) << id << ": " << status.error_message();
    return out;
  }

  v1::Workspace Get(const std::string& id) {
    v1::Workspace out;
    EXPECT_TRUE(testing::GetAs(server_->channel(), id, &out).ok());
    return out;
  }

  v1::Workspace Stop(const std::string& id) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    v1::StopWorkspaceRequest request;
    request.set_workspace_id(id);
    v1::Workspace out;
    EXPECT_TRUE(stub_->StopWorkspace(&context, request, &out).ok());
    return out;
  }

  // Polls until the workspace is placed (pending work is placed in the background).
  v1::Workspace AwaitPlaced(const std::string& id) {
    v1::Workspace w;
    for (int i = 0; i < 100; ++i) {
      w = Get(id);
      if (w.state() == v1::WORKSPACE_STATE_PLACED) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return w;
  }

  testing::TestDatabase db_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::PlacementService::Stub> stub_;
};

struct DensityCase {
  std::string cls;
  std::string pool;
  std::string model;
  int expected_per_node;
};

TEST_F(PlacementTest, DensityEqualsGpusPerNodeDividedByClassGpus) {
  for (const DensityCase& c : {DensityCase{"gpu-1x", "gpu-h100", "H100", 8},
                               DensityCase{"gpu-2x", "gpu-h100", "H100", 4},
                               DensityCase{"gpu-8x-vm", "gpu-a100", "A100", 1}}) {
    SCOPED_TRACE(c.cls);
    testing::FakeNodeOptions options;
    options.model = c.model;
    options.cpu_cores = c.model == "A100" ? 94 : 200;
    options.memory_gib = c.model == "A100" ? 650 : 1700;
    std::string node = "node-" + c.cls;
    testing::RegisterNode(server_->channel(), testing::FakeGpuNode(node, c.pool, options));
    std::set<std::string> uuids;
    for (int i = 0; i < c.expected_per_node; ++i) {
      v1::Workspace w = MustPlace(c.cls + "-" + std::to_string(i), c.cls);
      ASSERT_EQ(w.state(), v1::WORKSPACE_STATE_PLACED) << w.pending_reason();
      EXPECT_EQ(w.node_name(), node);
      for (const auto& gpu : w.gpus()) EXPECT_TRUE(uuids.insert(gpu.uuid()).second) << gpu.uuid();
    }
    EXPECT_EQ(uuids.size(), 8u);
    // One more does not fit now: pending with a reason and a queue position.
    v1::Workspace extra = MustPlace(c.cls + "-extra", c.cls);
    EXPECT_EQ(extra.state(), v1::WORKSPACE_STATE_PENDING);
    EXPECT_EQ(extra.queue_position(), 1);
    // It needs a new node: the scaler asks for one (or is about to).
    EXPECT_THAT(extra.pending().code(),
                AnyOf(v1::PENDING_REASON_CODE_SCALE_UP_REQUESTED,
                      v1::PENDING_REASON_CODE_SCALE_UP_NOT_YET_REQUESTED));
    EXPECT_EQ(extra.pending().pool(), c.pool);
    Stop(c.cls + "-extra");
  }
  EXPECT_EQ(db_.Query("SELECT count(*) - count(DISTINCT gpu_uuid) FROM gpu_holds"), "0");
}

TEST_F(PlacementTest, ModelFallbackFollowsTheClassOrder) {
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("h100-a", "gpu-h100"));
  testing::FakeNodeOptions a100;
  a100.model = "A100";
  a100.cpu_cores = 94;
  a100.memory_gib = 650;
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("a100-a", "gpu-a100", a100));
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(MustPlace("w" + std::to_string(i), "gpu-1x").node_name(), "h100-a");
  }
  v1::Workspace fallback = MustPlace("w8", "gpu-1x");
  EXPECT_EQ(fallback.node_name(), "a100-a");
  EXPECT_EQ(fallback.gpus(0).model(), "A100");
}

TEST_F(PlacementTest, PacksOntoTheFullestNodeSoOthersCanEmpty) {
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("n1", "gpu-h100"));
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("n2", "gpu-h100"));
  std::string first = MustPlace("a", "gpu-1x").node_name();
  EXPECT_EQ(MustPlace("b", "gpu-2x").node_name(), first);
  EXPECT_EQ(MustPlace("c", "gpu-1x").node_name(), first);
  // Stopping frees the GPUs at once: the next one reuses them.
  Stop("a");
  EXPECT_EQ(MustPlace("d", "gpu-1x").node_name(), first);
  EXPECT_EQ(db_.Query("SELECT count(*) FROM gpu_holds WHERE workspace_id = 'a'"), "0");
}

TEST_F(PlacementTest, CpuClassesStayOffGpuPools) {
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("gpu-only", "gpu-h100"));
  v1::Workspace w = MustPlace("cpu-1", "standard");
  EXPECT_EQ(w.state(), v1::WORKSPACE_STATE_PENDING);
  testing::RegisterNode(server_->channel(), testing::FakeCpuNode("cpu-node", "general"));
  EXPECT_EQ(AwaitPlaced("cpu-1").node_name(), "cpu-node");
}

TEST_F(PlacementTest, PendingIsPlacedWhenANodeJoinsAndTheWatchSeesIt) {
  v1::Workspace pending = MustPlace("waiting", "gpu-1x");
  ASSERT_EQ(pending.state(), v1::WORKSPACE_STATE_PENDING);
  EXPECT_THAT(pending.pending_reason(), HasSubstr("gpu-h100"));

  grpc::ClientContext context;
  testing::Authorize(context, testing::kControlPlaneToken);
  v1::WatchWorkspaceRequest request;
  request.set_workspace_id("waiting");
  auto stream = stub_->WatchWorkspace(&context, request);
  v1::Workspace update;
  ASSERT_TRUE(stream->Read(&update));
  EXPECT_EQ(update.state(), v1::WORKSPACE_STATE_PENDING);

  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("late", "gpu-h100"));
  ASSERT_TRUE(stream->Read(&update));
  EXPECT_EQ(update.state(), v1::WORKSPACE_STATE_PLACED);
  EXPECT_EQ(update.node_name(), "late");
  context.TryCancel();
}

TEST_F(PlacementTest, RepeatingARequestReturnsTheSamePlacement) {
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("n1", "gpu-h100"));
  v1::Workspace first = MustPlace("same", "gpu-2x");
  v1::Workspace again = MustPlace("same", "gpu-2x");
  EXPECT_EQ(again.node_name(), first.node_name());
  ASSERT_EQ(again.gpus_size(), 2);
  EXPECT_EQ(again.gpus(0).uuid(), first.gpus(0).uuid());
  EXPECT_EQ(again.gpus(1).uuid(), first.gpus(1).uuid());
  EXPECT_EQ(db_.Query("SELECT count(*) FROM gpu_holds"), "2");
}

TEST_F(PlacementTest, OrgGpuQuotaIsEnforced) {
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("n1", "gpu-h100"));
  auto settings = v1::SettingsService::NewStub(server_->channel());
  grpc::ClientContext context;
  testing::Authorize(context, testing::kAdminToken);
  v1::SetOrgSettingsRequest request;
  request.mutable_settings()->set_org_id("o-1");
  request.mutable_settings()->set_gpu_quota(2);
  v1::OrgSettings response;
  ASSERT_TRUE(settings->SetOrgSettings(&context, request, &response).ok());
  MustPlace("q1", "gpu-2x");
  v1::Workspace out;
  grpc::Status refused = Place("q2", "gpu-1x", &out);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(), HasSubstr("quota of 2"));
  // Another org is not affected.
  EXPECT_TRUE(Place("q3", "gpu-1x", &out, "o-2").ok());
}

TEST_F(PlacementTest, ContainerClassGetsACdiSpecWithFuseMerged) {
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("n1", "gpu-h100"));
  v1::Workspace w = MustPlace("cdi", "gpu-2x");
  ASSERT_TRUE(w.device_spec().has_cdi());
  const auto& cdi = w.device_spec().cdi();
  nlohmann::json spec = nlohmann::json::parse(cdi.spec_json());
  // The required fields of the CDI spec schema.
  ASSERT_TRUE(spec.contains("cdiVersion") && spec.contains("kind") && spec.contains("devices"));
  EXPECT_GE(spec["cdiVersion"].get<std::string>(), "0.5.0");
  EXPECT_EQ(spec["kind"], "nvidia.com/gpu");
  ASSERT_EQ(spec["devices"].size(), 2u);
  std::set<std::string> names;
  for (const auto& device : spec["devices"]) {
    ASSERT_TRUE(device.contains("name") && device.contains("containerEdits"));
    names.insert(device["name"].get<std::string>());
    for (const auto& node : device["containerEdits"]["deviceNodes"]) {
      EXPECT_TRUE(node.contains("path"));
    }
  }
  EXPECT_TRUE(names.count(w.gpus(0).uuid()));
  std::set<std::string> paths;
  for (const auto& node : spec["containerEdits"]["deviceNodes"]) paths.insert(node["path"]);
  EXPECT_TRUE(paths.count("/dev/nvidiactl"));
  EXPECT_TRUE(paths.count("/dev/nvidia-uvm"));
  EXPECT_TRUE(paths.count("/dev/fuse"));  // The class's extra device, merged.
  std::string env = spec["containerEdits"]["env"].dump();
  EXPECT_THAT(env, HasSubstr("NVIDIA_VISIBLE_DEVICES=" + w.gpus(0).uuid()));
  EXPECT_THAT(cdi.device_names(), ::testing::Contains("nvidia.com/gpu=" + w.gpus(0).uuid()));
}

TEST_F(PlacementTest, VmClassGetsVfioAndNeverAnUnsafeGroup) {
  testing::FakeNodeOptions unsafe;
  unsafe.model = "A100";
  unsafe.cpu_cores = 94;
  unsafe.memory_gib = 650;
  unsafe.unsafe_iommu = true;
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("unsafe", "gpu-a100", unsafe));
  v1::Workspace w = MustPlace("vm", "gpu-8x-vm");
  EXPECT_EQ(w.state(), v1::WORKSPACE_STATE_PENDING) << "must not land on the unsafe node";

  testing::FakeNodeOptions safe = unsafe;
  safe.unsafe_iommu = false;
  testing::RegisterNode(server_->channel(), testing::FakeGpuNode("safe", "gpu-a100", safe));
  v1::Workspace placed = AwaitPlaced("vm");
  ASSERT_EQ(placed.node_name(), "safe");
  ASSERT_TRUE(placed.device_spec().has_vfio());
  const auto& vfio = placed.device_spec().vfio();
  EXPECT_THAT(vfio.pci_addresses(), ::testing::Contains("0000:10:00.0"));
  EXPECT_THAT(vfio.device_paths(), ::testing::Contains("/dev/vfio/vfio"));
  EXPECT_THAT(vfio.device_paths(), ::testing::Contains("/dev/vfio/20"));
  EXPECT_THAT(vfio.cloud_hypervisor_args(),
              ::testing::Contains("path=/sys/bus/pci/devices/0000:10:00.0/"));
}

TEST_F(PlacementTest, AClassThatCanNeverFitFailsAtOnce) {
  // The catalog refuses such classes; a replica with a stale catalog still
  // must not queue them. Simulate one written behind the validator's back.
  db_.Query("UPDATE classes SET spec = jsonb_set(spec, '{gpu,count}', '9') WHERE id = 'gpu-1x' "
            "RETURNING id");
  // Published as a replica would: a catalog generation and a change-log
  // entry. The placement reads the generation and catches up first, so no
  // wait is needed.
  db_.Query("UPDATE catalog_generation SET generation = generation + 1 RETURNING generation");
  db_.Query("WITH head AS (UPDATE feed_head SET seq = seq + 1 RETURNING seq) "
            "INSERT INTO change_log (seq, replica, entities, ids, versions) "
            "SELECT seq, 'another-replica', '{catalog}', '{\"\"}', "
            "ARRAY[(SELECT generation FROM catalog_generation)] FROM head RETURNING seq");
  v1::Workspace out;
  grpc::Status status = Place("never", "gpu-1x", &out);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("can never be placed"));
  EXPECT_EQ(db_.Query("SELECT count(*) FROM workspaces"), "0");
}

TEST_F(PlacementTest, BadRequestsNameTheField) {
  v1::Workspace out;
  EXPECT_THAT(Place("", "gpu-1x", &out).error_message(), HasSubstr("workspace_id: is required"));
  EXPECT_THAT(Place("x", "Not A Class", &out).error_message(), HasSubstr("class_id"));
  EXPECT_EQ(Place("x", "no-such-class", &out).error_code(), grpc::StatusCode::NOT_FOUND);
}

}  // namespace
}  // namespace wsched
