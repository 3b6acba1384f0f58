#include "server/placement/cdi.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/placement/test_nodes.h"

namespace wsched::placement {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::CpuClass;
using testing::FakeGpuNode;
using testing::GpuClass;

const core::DeviceNode kFuse{"/dev/fuse", 'c', 10, 229, "rwm"};
const core::DeviceNode kTun{"/dev/net/tun", 'c', 10, 200, "rwm"};

std::vector<std::string> Paths(const nlohmann::json& device_nodes) {
  std::vector<std::string> paths;
  for (const auto& node : device_nodes) paths.push_back(node.at("path").get<std::string>());
  return paths;
}

TEST(BuildCdiSpec, HasTheRequiredFields) {
  core::NodeInfo node = FakeGpuNode("g1", "gpu-h100");
  absl::StatusOr<CdiSpec> spec = BuildCdiSpec(GpuClass("gpu-2", 2), node, {2, 5});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->device_names,
              ElementsAre("nvidia.com/gpu=GPU-g1-2", "nvidia.com/gpu=GPU-g1-5"));
  EXPECT_TRUE(spec->extra_device_nodes.empty());

  nlohmann::json json = nlohmann::json::parse(spec->spec_json);
  EXPECT_EQ(json.at("cdiVersion"), "0.5.0");
  EXPECT_EQ(json.at("kind"), "nvidia.com/gpu");
  ASSERT_EQ(json.at("devices").size(), 2u);
  const auto& device = json.at("devices")[1];
  EXPECT_EQ(device.at("name"), "GPU-g1-5");
  const auto& gpu_node = device.at("containerEdits").at("deviceNodes").at(0);
  EXPECT_EQ(gpu_node.at("path"), "/dev/nvidia5");
  EXPECT_EQ(gpu_node.at("type"), "c");
  EXPECT_EQ(gpu_node.at("major"), 195);
  EXPECT_EQ(gpu_node.at("minor"), 5);
  EXPECT_EQ(json.at("devices")[0].at("containerEdits").at("deviceNodes")[0].at("path"),
            "/dev/nvidia2");

  const auto& edits = json.at("containerEdits");
  EXPECT_THAT(Paths(edits.at("deviceNodes")),
              ElementsAre("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
                          "/dev/nvidia-modeset"));
  EXPECT_THAT(edits.at("env").get<std::vector<std::string>>(),
              ElementsAre("NVIDIA_VISIBLE_DEVICES=GPU-g1-2,GPU-g1-5"));
}

TEST(BuildCdiSpec, MergesClassDevicesWithoutClobberingGpuNodes) {
  core::WorkspaceClass cls = GpuClass("gpu-1", 1);
  // fuse twice, and a control path with other numbers: neither may replace anything.
  cls.devices = {kFuse, kTun, kFuse, {"/dev/nvidiactl", 'c', 1, 1, "r"}};
  absl::StatusOr<CdiSpec> spec = BuildCdiSpec(cls, FakeGpuNode("g1", "gpu-h100"), {3});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->extra_device_nodes, ElementsAre(kFuse, kTun));

  nlohmann::json json = nlohmann::json::parse(spec->spec_json);
  const auto& top = json.at("containerEdits").at("deviceNodes");
  EXPECT_THAT(Paths(top), ElementsAre("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
                                      "/dev/nvidia-modeset", "/dev/fuse", "/dev/net/tun"));
  EXPECT_EQ(top[0].at("major"), 195);
  EXPECT_EQ(top[0].at("minor"), 255);
  EXPECT_EQ(top[4].at("major"), 10);
  EXPECT_EQ(top[4].at("minor"), 229);
  const auto& gpu_nodes = json.at("devices")[0].at("containerEdits").at("deviceNodes");
  ASSERT_EQ(gpu_nodes.size(), 1u);
  EXPECT_EQ(gpu_nodes[0].at("path"), "/dev/nvidia3");
  EXPECT_EQ(gpu_nodes[0].at("minor"), 3);
}

TEST(BuildCdiSpec, CpuClassGetsOnlyItsDevices) {
  core::WorkspaceClass cls = CpuClass("standard");
  cls.devices = {kFuse, kTun, kFuse};
  absl::StatusOr<CdiSpec> spec = BuildCdiSpec(cls, FakeGpuNode("g1", "gpu-h100"), {});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->spec_json.empty());
  EXPECT_TRUE(spec->device_names.empty());
  EXPECT_THAT(spec->extra_device_nodes, ElementsAre(kFuse, kTun));
}

TEST(BuildCdiSpec, RefusesWhatWouldLeakOrMisdescribeGpus) {
  core::NodeInfo node = FakeGpuNode("g1", "gpu-h100");
  core::WorkspaceClass sneaky = GpuClass("gpu-1", 1);
  sneaky.devices = {{"/dev/nvidia7", 'c', 195, 7, "rwm"}};
  absl::Status status = BuildCdiSpec(sneaky, node, {0}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("come from placement"));

  EXPECT_EQ(BuildCdiSpec(GpuClass("gpu-2", 2), node, {0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BuildCdiSpec(GpuClass("gpu-1", 1), node, {9}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(BuildCdiSpec(GpuClass("gpu-2", 2), node, {1, 1}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      BuildCdiSpec(GpuClass("vm-1", 1, {"h100"}, core::Isolation::kVm), node, {0}).status().code(),
      absl::StatusCode::kInvalidArgument);
  node.gpus[0].uuid = "GPU \"x\"";
  EXPECT_EQ(BuildCdiSpec(GpuClass("gpu-1", 1), node, {0}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// A node whose agent wrote wsched's spec (server/agent/node_cdi.h).
core::NodeInfo WschedCdiNode() {
  core::NodeInfo node = FakeGpuNode("g1", "gpu-h100");
  node.cdi.mode = core::CdiMode::kWsched;
  node.cdi.spec_dir = "/var/run/cdi";
  node.cdi.extra_devices = {{"/dev/fuse", "wsched.io/device=fuse"}};
  for (core::Gpu& gpu : node.gpus) gpu.cdi_device = "wsched.io/gpu=" + gpu.uuid;
  return node;
}

TEST(BuildCdiSpec, OnANodeWithItsOwnSpecAnswersWithNamesForEachRuntime) {
  core::WorkspaceClass cls = GpuClass("gpu-2", 2);
  cls.devices = {kFuse, kTun};
  absl::StatusOr<CdiSpec> spec = BuildCdiSpec(cls, WschedCdiNode(), {2, 5});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->mode, core::CdiMode::kWsched);
  EXPECT_TRUE(spec->spec_json.empty()) << "the node's spec holds the edits";
  EXPECT_THAT(spec->device_names, ElementsAre("wsched.io/gpu=GPU-g1-2", "wsched.io/gpu=GPU-g1-5",
                                              "wsched.io/device=fuse"));
  EXPECT_THAT(spec->env, ElementsAre("NVIDIA_VISIBLE_DEVICES=GPU-g1-2,GPU-g1-5"));
  // tun is not in the node's device spec: podman takes it by path, a pod cannot.
  EXPECT_THAT(spec->unnamed_devices, ElementsAre("/dev/net/tun"));
  EXPECT_THAT(spec->podman_args,
              ElementsAre("--device", "wsched.io/gpu=GPU-g1-2", "--device", "wsched.io/gpu=GPU-g1-5",
                          "--device", "wsched.io/device=fuse", "--device", "/dev/net/tun", "--env",
                          "NVIDIA_VISIBLE_DEVICES=GPU-g1-2,GPU-g1-5"));
  EXPECT_EQ(spec->node_name, "g1");
  EXPECT_THAT(spec->pod_annotations,
              ElementsAre(::testing::Pair(
                  "cdi.k8s.io/wsched_workspace",
                  "wsched.io/gpu=GPU-g1-2,wsched.io/gpu=GPU-g1-5,wsched.io/device=fuse")));
  EXPECT_EQ(spec->extra_device_nodes.size(), 2u);
}

TEST(BuildCdiSpec, InNvidiaModeUsesTheNamesOfNvidiasSpec) {
  core::NodeInfo node = WschedCdiNode();
  node.cdi.mode = core::CdiMode::kNvidia;
  node.gpus[4].cdi_device = "nvidia.com/gpu=4";
  absl::StatusOr<CdiSpec> spec = BuildCdiSpec(GpuClass("gpu-1", 1), node, {4});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->mode, core::CdiMode::kNvidia);
  EXPECT_THAT(spec->device_names, ElementsAre("nvidia.com/gpu=4"));
  EXPECT_THAT(spec->env, ElementsAre("NVIDIA_VISIBLE_DEVICES=GPU-g1-4"));
}

TEST(BuildCdiSpec, AGpuTheNodesSpecDoesNotNameIsNeverHandedOut) {
  core::NodeInfo node = WschedCdiNode();
  node.gpus[1].cdi_device.clear();
  node.cdi.problems = {"libcuda.so is 535.104.05 but the loaded driver is 550.54.15"};
  absl::Status status = BuildCdiSpec(GpuClass("gpu-1", 1), node, {1}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("GPU 1 on node g1 is not in the node's CDI spec: libcuda.so is 535.104.05"));
}

TEST(BuildCdiSpec, CpuClassOnANodeWithASpecGetsItsDevicesByName) {
  core::WorkspaceClass cls = CpuClass("standard");
  cls.devices = {kFuse};
  absl::StatusOr<CdiSpec> spec = BuildCdiSpec(cls, WschedCdiNode(), {});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->device_names, ElementsAre("wsched.io/device=fuse"));
  EXPECT_TRUE(spec->env.empty());
  EXPECT_THAT(spec->podman_args, ElementsAre("--device", "wsched.io/device=fuse"));
}

// GPU 1 of an H200 node cut into 3g + 2g + 1g + 1g, each slice with its
// own two capability nodes (minors 100 + 10 * slice, + 1).
core::NodeInfo SlicedNode() {
  core::NodeInfo node = FakeGpuNode("g1", "gpu-h200");
  for (core::Gpu& gpu : node.gpus) gpu.model = "NVIDIA H200";
  testing::LayOutSlices(node, {"3g.71gb", "2g.35gb", "1g.18gb", "1g.18gb"});
  for (core::MigInstance& slice : node.gpus[1].mig->instances) {
    const int minor = 100 + 10 * slice.gpu_instance;
    slice.gi_access =
        core::DeviceNode{absl::StrCat("/dev/nvidia-caps/nvidia-cap", minor), 'c', 235, minor, "rw"};
    slice.ci_access = core::DeviceNode{absl::StrCat("/dev/nvidia-caps/nvidia-cap", minor + 1), 'c',
                                       235, minor + 1, "rw"};
  }
  return node;
}

TEST(BuildSliceCdiSpec, InlineTheSliceBringsItsGpuAndOnlyItsOwnCapabilityNodes) {
  core::WorkspaceClass cls = testing::SliceClass("mig-1g", {"1g.18gb"});
  cls.devices = {kFuse};
  absl::StatusOr<CdiSpec> spec = BuildSliceCdiSpec(cls, SlicedNode(), {1, 3});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->device_names, ElementsAre("nvidia.com/gpu=MIG-g1-1-2"));
  nlohmann::json json = nlohmann::json::parse(spec->spec_json);
  ASSERT_EQ(json.at("devices").size(), 1u);
  EXPECT_EQ(json.at("devices")[0].at("name"), "MIG-g1-1-2");
  EXPECT_THAT(Paths(json.at("devices")[0].at("containerEdits").at("deviceNodes")),
              ElementsAre("/dev/nvidia1", "/dev/nvidia-caps/nvidia-cap130",
                          "/dev/nvidia-caps/nvidia-cap131"));
  EXPECT_THAT(json.at("containerEdits").at("env").get<std::vector<std::string>>(),
              ElementsAre("NVIDIA_VISIBLE_DEVICES=MIG-g1-1-2"));
  EXPECT_THAT(Paths(json.at("containerEdits").at("deviceNodes")),
              ElementsAre("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
                          "/dev/nvidia-modeset", "/dev/fuse"));
}

TEST(BuildSliceCdiSpec, OnANodeWithItsOwnSpecNamesTheSlicesDevice) {
  core::NodeInfo node = SlicedNode();
  node.cdi.mode = core::CdiMode::kWsched;
  node.cdi.spec_dir = "/var/run/cdi";
  node.gpus[1].mig->instances[0].cdi_device = "wsched.io/gpu=MIG-g1-1-0";
  absl::StatusOr<CdiSpec> spec =
      BuildSliceCdiSpec(testing::SliceClass("mig-3g", {"3g.71gb"}), node, {1, 1});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->device_names, ElementsAre("wsched.io/gpu=MIG-g1-1-0"));
  EXPECT_THAT(spec->env, ElementsAre("NVIDIA_VISIBLE_DEVICES=MIG-g1-1-0"));
  EXPECT_THAT(spec->podman_args, ElementsAre("--device", "wsched.io/gpu=MIG-g1-1-0", "--env",
                                             "NVIDIA_VISIBLE_DEVICES=MIG-g1-1-0"));
  // A slice the node's spec does not name is never handed out.
  absl::Status unnamed =
      BuildSliceCdiSpec(testing::SliceClass("mig-2g", {"2g.35gb"}), node, {1, 2}).status();
  EXPECT_EQ(unnamed.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(unnamed.message(),
              HasSubstr("MIG slice 2 of GPU 1 on node g1 is not in the node's CDI spec"));
}

TEST(BuildSliceCdiSpec, RefusesWhatItCannotHandOut) {
  core::NodeInfo node = SlicedNode();
  const core::WorkspaceClass slice_class = testing::SliceClass("mig-1g", {"1g.18gb"});
  EXPECT_EQ(BuildSliceCdiSpec(GpuClass("gpu-1", 1), node, {1, 1}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BuildSliceCdiSpec(slice_class, node, {1, 9}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(BuildSliceCdiSpec(slice_class, node, {42, 1}).status().code(),
            absl::StatusCode::kNotFound);
  // GPU 0's slices have no capability nodes: nothing to isolate them with.
  absl::Status bare = BuildSliceCdiSpec(slice_class, node, {0, 1}).status();
  EXPECT_EQ(bare.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(bare.message(), HasSubstr("capability device nodes"));
}

}  // namespace
}  // namespace wsched::placement
