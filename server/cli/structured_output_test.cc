#include "server/cli/structured_output.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "server/cli/options_from_flags.h"

namespace wsched::cli {
namespace {

TEST(JsonToYaml, KeepsKeysAndValueTypes) {
  auto json = nlohmann::ordered_json::parse(R"({
    "nodes": [{"name": "h100-a", "gpus_per_node": 8, "passthrough_safe": true,
               "memory_bytes": "85899345920", "state": "no", "empty": "", "missing": null,
               "labels": {}}]
  })");
  YAML::Node yaml = YAML::Load(JsonToYaml(json));
  const YAML::Node node = yaml["nodes"][0];
  EXPECT_EQ(node["name"].as<std::string>(), "h100-a");
  EXPECT_EQ(node["gpus_per_node"].as<int>(), 8);
  EXPECT_TRUE(node["passthrough_safe"].as<bool>());
  // Strings that read as numbers, bools or null stay strings.
  EXPECT_EQ(node["memory_bytes"].Tag(), "!");
  EXPECT_EQ(node["memory_bytes"].as<std::string>(), "85899345920");
  EXPECT_EQ(node["state"].Tag(), "!");
  EXPECT_EQ(node["empty"].as<std::string>(), "");
  EXPECT_TRUE(node["missing"].IsNull());
  EXPECT_TRUE(node["labels"].IsMap());
  EXPECT_EQ(node["labels"].size(), 0u);
}

TEST(JsonToYaml, MultiLineStringsSurvive) {
  nlohmann::ordered_json json = {{"yaml", "classes:\n  - id: a\n"}};
  EXPECT_EQ(YAML::Load(JsonToYaml(json))["yaml"].as<std::string>(), "classes:\n  - id: a\n");
}

TEST(OutputFormat, ParsesEveryFormatAndRefusesOthers) {
  EXPECT_EQ(*ParseOutputFormat(""), OutputFormat::kTable);
  EXPECT_EQ(*ParseOutputFormat("wide"), OutputFormat::kWide);
  EXPECT_EQ(*ParseOutputFormat("json"), OutputFormat::kJson);
  EXPECT_EQ(*ParseOutputFormat("yaml"), OutputFormat::kYaml);
  EXPECT_EQ(*ParseOutputFormat("csv"), OutputFormat::kCsv);
  EXPECT_FALSE(ParseOutputFormat("xml").ok());
}

}  // namespace
}  // namespace wsched::cli
