// MIG slices through the real server and PostgreSQL (docs/placement.md
// "Slices"): a slice class gets a slice of its own, named in its answer by
// its MIG UUID with exactly its device nodes; the database holds each slice
// once, also when three replicas race for them; a waiting slice class says
// which profiles it waits for; the ledger records the profile and share.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::vector<std::string> kMixed = {"3g.71gb", "2g.35gb", "1g.18gb", "1g.18gb"};

// An H200 node of pool h200-mig, every GPU cut as `profiles`
// (testing::LayOutSlices: slice k of GPU i is "MIG-<name>-<i>-<k>").
v1::NodeInfo SlicedNode(const std::string& name, int gpus,
                        const std::vector<std::string>& profiles = kMixed) {
  testing::FakeNodeOptions options;
  options.model = "NVIDIA H200";
  options.gpus = gpus;
  options.cpu_cores = 64;
  options.memory_gib = 512;
  v1::NodeInfo node = testing::FakeGpuNode(name, "h200-mig", options);
  testing::LayOutSlices(node, profiles);
  return node;
}

std::vector<std::string> Paths(const nlohmann::json& device_nodes) {
  std::vector<std::string> paths;
  for (const auto& node : device_nodes) paths.push_back(node.at("path").get<std::string>());
  return paths;
}

class SlicesTest : public ::testing::Test {
 protected:
  void Start() {
    server_ = std::make_unique<testing::ServerProcess>(testing::ServerConfig{
        db_.url(), testing::SourcePath("tests/fixtures/slices-catalog.yaml")});
    ASSERT_TRUE(server_->started());
  }

  v1::Workspace Place(const std::string& id, const std::string& cls) {
    v1::Workspace out;
    grpc::Status status = testing::PlaceAs(server_->channel(), id, cls, &out);
    EXPECT_TRUE(status.ok()) << id << ": " << status.error_message();
    return out;
  }

  testing::TestDatabase db_;
  std::unique_ptr<testing::ServerProcess> server_;
};

TEST_F(SlicesTest, ASliceClassGetsASliceOfItsOwnNamedInItsAnswer) {
  Start();
  testing::RegisterNode(server_->channel(), SlicedNode("m1", 1));

  v1::Workspace a = Place("a", "mig-1g");
  ASSERT_EQ(a.state(), v1::WORKSPACE_STATE_PLACED) << a.pending_reason();
  EXPECT_EQ(a.gpus_size(), 0);
  EXPECT_EQ(a.slice().profile(), "1g.18gb");
  EXPECT_EQ(a.slice().compute_slices(), 1);
  EXPECT_EQ(a.slice().gpu().index(), 0);
  EXPECT_EQ(a.slice().gpu().uuid(), "GPU-m1-0");
  v1::Workspace read;  // A read fills in the health of the slice's GPU.
  ASSERT_TRUE(testing::GetAs(server_->channel(), "a", &read).ok());
  EXPECT_EQ(read.slice().gpu().health(), v1::GPU_HEALTH_HEALTHY);
  const std::string uuid = a.slice().uuid();
  EXPECT_THAT(uuid, ::testing::StartsWith("MIG-m1-0-"));
  // The node wrote no CDI spec: the answer carries one, with the slice as
  // its one device: its GPU's node and its own two capability nodes.
  EXPECT_THAT(a.device_spec().cdi().device_names(), ElementsAre("nvidia.com/gpu=" + uuid));
  nlohmann::json spec = nlohmann::json::parse(a.device_spec().cdi().spec_json());
  ASSERT_EQ(spec.at("devices").size(), 1u);
  EXPECT_EQ(spec.at("devices")[0].at("name"), uuid);
  std::vector<std::string> nodes =
      Paths(spec.at("devices")[0].at("containerEdits").at("deviceNodes"));
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0], "/dev/nvidia0");
  EXPECT_THAT(nodes[1], ::testing::StartsWith("/dev/nvidia-caps/nvidia-cap"));
  EXPECT_THAT(spec.at("containerEdits").at("env").get<std::vector<std::string>>(),
              ElementsAre("NVIDIA_VISIBLE_DEVICES=" + uuid));

  // The other 1g slice, then none: the third waits and says for what.
  v1::Workspace b = Place("b", "mig-1g");
  ASSERT_EQ(b.state(), v1::WORKSPACE_STATE_PLACED) << b.pending_reason();
  EXPECT_NE(b.slice().uuid(), uuid);
  v1::Workspace c = Place("c", "mig-1g");
  EXPECT_EQ(c.state(), v1::WORKSPACE_STATE_PENDING);
  EXPECT_THAT(c.pending_reason(), HasSubstr("1g.18gb"));
  // The 3g class takes the 3g slice, and its fallback the 2g one.
  EXPECT_EQ(Place("big", "mig-3g").slice().profile(), "3g.71gb");
  EXPECT_EQ(Place("next", "mig-3g").slice().profile(), "2g.35gb");

  EXPECT_EQ(db_.Query("SELECT string_agg(workspace_id || '@' || gpu_index || '/' || gpu_instance "
                      "|| '/' || compute_slices, ',' ORDER BY workspace_id) FROM gpu_holds"),
            absl::StrCat("a@0/", a.slice().gpu_instance(), "/1,b@0/", b.slice().gpu_instance(),
                         "/1,big@0/1/3,next@0/2/2"));

  // A stop frees the slice; the waiting workspace takes it.
  grpc::ClientContext watch;
  testing::Authorize(watch, testing::kControlPlaneToken);
  watch.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  v1::WatchWorkspaceRequest request;
  request.set_workspace_id("c");
  auto reader = v1::PlacementService::NewStub(server_->channel())->WatchWorkspace(&watch, request);
  v1::Workspace got;
  ASSERT_TRUE(reader->Read(&got)) << "the watch starts with the workspace as it is";
  v1::Workspace stopped;
  ASSERT_TRUE(testing::StopAs(server_->channel(), "a", &stopped).ok());
  while (got.state() != v1::WORKSPACE_STATE_PLACED && reader->Read(&got)) {
  }
  watch.TryCancel();
  ASSERT_EQ(got.state(), v1::WORKSPACE_STATE_PLACED) << got.pending_reason();
  EXPECT_EQ(got.slice().uuid(), uuid);
  // The ledger has the ended slice's profile and share.
  EXPECT_EQ(db_.Query("SELECT mig_profile || '/' || mig_compute_slices || '/' || gpu_count "
                      "FROM usage_records WHERE workspace_id = 'a'"),
            "1g.18gb/1/0");
}

// Three replicas, 64 clients, fourteen slices: no slice in two answers, every
// answer what the database holds.
TEST_F(SlicesTest, ThreeReplicasNeverHandOutASliceTwice) {
  Start();
  testing::ServerProcess b({db_.url(), testing::SourcePath("tests/fixtures/slices-catalog.yaml")});
  testing::ServerProcess c({db_.url(), testing::SourcePath("tests/fixtures/slices-catalog.yaml")});
  ASSERT_TRUE(b.started() && c.started());
  testing::RegisterNode(server_->channel(),
                        SlicedNode("r1", 2, std::vector<std::string>(7, "1g.18gb")));
  const std::vector<std::shared_ptr<grpc::Channel>> replicas = {server_->channel(), b.channel(),
                                                                c.channel()};
  constexpr int kClients = 64;
  std::mutex mu;
  std::map<std::string, std::string> placed;  // Workspace -> its slice's UUID.
  std::atomic<int> pending{0};
  // Three replicas placing on one node race each other at its commit: an
  // answer the API says to retry is retried, as a client does.
  std::atomic<int> retried{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      const std::string id = absl::StrCat("w", i);
      v1::Workspace out;
      grpc::Status status = testing::PlaceRetryingAs(
          replicas[i % 3], id, i % 4 == 0 ? "mig-3g" : "mig-1g", &out, &retried);
      if (!status.ok()) {
        ADD_FAILURE() << id << ": " << status.error_message();
        return;
      }
      if (out.state() == v1::WORKSPACE_STATE_PENDING) {
        pending++;
        return;
      }
      std::lock_guard<std::mutex> lock(mu);
      placed[id] = out.slice().uuid();
    });
  }
  for (auto& client : clients) client.join();
  RecordProperty("retried", retried.load());

  // Fourteen 1g slices; the 3g class (a quarter of the requests) finds
  // none of its profiles and waits.
  EXPECT_LE(placed.size(), 14u);
  EXPECT_EQ(placed.size() + pending.load(), static_cast<size_t>(kClients));
  std::set<std::string> answered;
  for (const auto& [id, uuid] : placed) {
    EXPECT_TRUE(answered.insert(uuid).second) << uuid << " handed out twice";
    EXPECT_EQ(db_.Query("SELECT workspace_id FROM gpu_holds WHERE gpu_uuid = '" + uuid + "'"), id);
  }
  EXPECT_EQ(db_.Query("SELECT count(*) FROM workspaces WHERE class_id = 'mig-3g' AND "
                      "state = 'placed'"),
            "0");
}

}  // namespace
}  // namespace wsched
