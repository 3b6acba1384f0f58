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

}  // namespace
}  // namespace wsched::agent
