#include "server/agent/node_json.h"

#include <nlohmann/json.hpp>

#include "gtest/gtest.h"

namespace wsched::agent {
namespace {

core::NodeInfo DesktopLikeNode() {
  core::NodeInfo node;
  node.name = "desk";
  node.kernel_version = "6.6.8";
  node.driver_version = "550.54.15";
  core::Gpu gpu;
  gpu.index = 0;
  gpu.uuid = "GPU-1";
  gpu.pci_address = "0000:01:00.0";
  gpu.iommu_group = 1;
  gpu.iommu_group_members = {{"0000:01:00.1", "0x040300", "0x10de"},
                             {"0000:00:14.0", "0x0c0330", "0x8086"}};
  node.gpus.push_back(gpu);
  node.control_devices.push_back({.path = "/dev/nvidiactl", .type = 'c', .major = 195,
                                  .minor = 255});
  return node;
}

TEST(NodeJsonTest, CarriesNodeFactsAndPassthroughVerdict) {
  core::NodeInfo node = DesktopLikeNode();
  nlohmann::json json = nlohmann::json::parse(NodeInfoToJson(node, ClassifyGpus(node)));
  EXPECT_EQ(json["name"], "desk");
  EXPECT_EQ(json["driver_version"], "550.54.15");
  ASSERT_EQ(json["gpus"].size(), 1u);
  const nlohmann::json& gpu = json["gpus"][0];
  EXPECT_EQ(gpu["pci_address"], "0000:01:00.0");
  EXPECT_EQ(gpu["device"]["path"], "/dev/nvidia0");
  EXPECT_EQ(gpu["device"]["major"], 195);
  EXPECT_EQ(gpu["iommu_group"], 1);
  EXPECT_EQ(gpu["iommu_group_members"][1]["class_name"], "USB controller");
  EXPECT_EQ(gpu["passthrough_safe"], false);
  EXPECT_NE(gpu["passthrough_unsafe_reason"].get<std::string>().find("0000:00:14.0"),
            std::string::npos);
  EXPECT_EQ(json["control_devices"][0]["path"], "/dev/nvidiactl");
  EXPECT_EQ(json["control_devices"][0]["minor"], 255);
}

TEST(NodeJsonTest, UsesTheGivenVerdict) {
  core::NodeInfo node = DesktopLikeNode();
  nlohmann::json json =
      nlohmann::json::parse(NodeInfoToJson(node, {core::PassthroughSafety{true, ""}}));
  EXPECT_EQ(json["gpus"][0]["passthrough_safe"], true);
  EXPECT_EQ(json["gpus"][0]["passthrough_unsafe_reason"], "");
}

TEST(NodeJsonTest, MissingVerdictIsNotReportedSafe) {
  nlohmann::json json = nlohmann::json::parse(NodeInfoToJson(DesktopLikeNode(), {}));
  EXPECT_EQ(json["gpus"][0]["passthrough_safe"], false);
}

TEST(NodeJsonTest, MigAndLinks) {
  core::NodeInfo node = DesktopLikeNode();
  core::Gpu& gpu = node.gpus[0];
  gpu.mig = core::GpuMig{
      .enabled = true,
      .profiles = {{.name = "1g.18gb",
                    .id = 19,
                    .compute_slices = 1,
                    .memory_bytes = int64_t{16} << 30,
                    .size = 1,
                    .starts = {0, 1, 2}}},
      .instances = {
          {.profile = "1g.18gb",
           .gpu_instance = 7,
           .compute_instance = 0,
           .uuid = "MIG-1",
           .gi_access =
               core::DeviceNode{.path = "/dev/nvidia-caps/nvidia-cap66", .major = 509, .minor = 66},
           .ci_access =
               core::DeviceNode{
                   .path = "/dev/nvidia-caps/nvidia-cap67", .major = 509, .minor = 67}},
          {.profile = "3g.71gb", .gpu_instance = 1, .start = 4, .size = 4}}};
  gpu.links = {{.peer = 1, .kind = core::GpuLinkKind::kNvlink, .nvlinks = 18},
               {.peer = 2, .kind = core::GpuLinkKind::kSys}};
  nlohmann::json json = nlohmann::json::parse(NodeInfoToJson(node, ClassifyGpus(node)));
  const nlohmann::json& mig = json["gpus"][0]["mig"];
  EXPECT_EQ(mig["enabled"], true);
  EXPECT_EQ(mig["pending_enabled"], false);
  EXPECT_EQ(mig["profiles"][0]["name"], "1g.18gb");
  EXPECT_EQ(mig["profiles"][0]["starts"], nlohmann::json::array({0, 1, 2}));
  EXPECT_EQ(mig["profiles"][0]["memory_bytes"], int64_t{16} << 30);
  EXPECT_EQ(mig["instances"][0]["uuid"], "MIG-1");
  EXPECT_EQ(mig["instances"][0]["ci_access"]["path"], "/dev/nvidia-caps/nvidia-cap67");
  EXPECT_EQ(mig["instances"][0]["ci_access"]["major"], 509);
  EXPECT_EQ(mig["instances"][0]["usable"], true);
  EXPECT_EQ(mig["instances"][1]["compute_instance"], -1);
  EXPECT_TRUE(mig["instances"][1]["gi_access"].is_null());
  EXPECT_EQ(mig["instances"][1]["usable"], false);
  const nlohmann::json& links = json["gpus"][0]["links"];
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0], (nlohmann::json{{"peer", 1}, {"kind", "nvlink"}, {"nvlinks", 18}}));
  EXPECT_EQ(links[1]["kind"], "sys");
}

TEST(NodeJsonTest, NoMigIsNull) {
  nlohmann::json json = nlohmann::json::parse(NodeInfoToJson(DesktopLikeNode(), {}));
  EXPECT_TRUE(json["gpus"][0]["mig"].is_null());
  EXPECT_EQ(json["gpus"][0]["links"], nlohmann::json::array());
}

}  // namespace
}  // namespace wsched::agent
