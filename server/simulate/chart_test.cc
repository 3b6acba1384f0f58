// The chart and the report of a small simulation.
#include "server/simulate/chart.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/test_nodes.h"
#include "server/simulate/simulation_report.h"

namespace wsched::simulate {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;

const absl::Time kT0 = absl::FromCivil(absl::CivilSecond(2026, 3, 2, 8, 0, 0), absl::UTCTimeZone());

SimulationResult Simulated(int warm_buffer) {
  SimulationInput input;
  core::NodePool gpu = placement::testing::GpuPool("gpu", "h100");
  gpu.warm_buffer = core::WarmBuffer::Constant(warm_buffer);
  input.catalog.pools = {gpu, placement::testing::CpuPool("idle-cpu")};
  input.catalog.classes = {placement::testing::GpuClass("gpu-1x", 1)};
  input.timings["gpu"] = {.node_start = absl::Minutes(3), .node_start_source = "flag --node-start"};
  std::vector<Arrival> trace;
  for (int i = 0; i < 12; ++i) {
    trace.push_back({.id = absl::StrCat("w", i), .time = kT0 + absl::Minutes(5 * i),
                     .class_id = "gpu-1x", .duration = absl::Minutes(40), .line = i + 2});
  }
  return *Simulate(input, trace);
}

TEST(RenderChart, APanelPerActivePoolAndALinePerVariant) {
  SimulationResult cold = Simulated(0), warm = Simulated(1);
  std::string svg = RenderChart({{"cold <0>", &cold}, {"warm", &warm}});
  EXPECT_THAT(svg, testing::StartsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(svg, testing::EndsWith("</svg>\n"));
  EXPECT_THAT(svg, HasSubstr("nodes, cold &lt;0&gt;")) << "names are escaped";
  EXPECT_THAT(svg, HasSubstr("nodes, warm"));
  EXPECT_THAT(svg, HasSubstr(">gpu: demand (GPUs held and waiting, in nodes)"));
  EXPECT_THAT(svg, Not(HasSubstr("idle-cpu"))) << "a pool without demand or nodes is left out";
  size_t lines = 0;
  for (size_t at = svg.find("class=\"nodes\""); at != std::string::npos;
       at = svg.find("class=\"nodes\"", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 2u);
  EXPECT_THAT(svg, HasSubstr("class=\"demand\""));
  EXPECT_THAT(svg, HasSubstr("Mon 08:00")) << "time axis";
}

TEST(RenderChart, NothingToDraw) {
  EXPECT_THAT(RenderChart({}), HasSubstr("</svg>"));
}

TEST(Report, TableAndJsonPerVariantAndActivePool) {
  std::vector<VariantResult> variants = {{"cold", {}, Simulated(0)},
                                         {"warm", {"pool.gpu.warm_buffer=1"}, Simulated(1)}};
  std::vector<std::vector<std::string>> table = ReportTable(variants, absl::Minutes(5));
  ASSERT_THAT(table, SizeIs(3)) << "header + one active pool per variant";
  EXPECT_EQ(table[0][11], "WAITED>5m");
  EXPECT_EQ(table[1][0], "cold");
  EXPECT_EQ(table[1][1], "gpu");
  EXPECT_EQ(table[2][8], "0s") << "warm: the median waits for nothing";
  EXPECT_EQ(table[1][10], "3m2s") << "cold: the first waits for a node";
  EXPECT_EQ(table[1][6], "0.0") << "nothing free while work waited for a node";
  EXPECT_EQ(table[1][7], "-") << "no MIG layout, no re-layouts";
  EXPECT_EQ(table[0][15], "WITHIN-P90");

  nlohmann::ordered_json json = ReportJson(variants, absl::Minutes(5));
  EXPECT_EQ(json["long_wait_s"], 300);
  ASSERT_EQ(json["variants"].size(), 2u);
  const nlohmann::ordered_json& warm = json["variants"][1];
  EXPECT_EQ(warm["name"], "warm");
  EXPECT_EQ(warm["settings"][0], "pool.gpu.warm_buffer=1");
  EXPECT_EQ(warm["start"], "2026-03-02T08:00:00Z");
  const nlohmann::ordered_json& gpu = warm["pools"][0];
  EXPECT_EQ(gpu["pool"], "gpu");
  EXPECT_EQ(gpu["workspaces"], 12);
  EXPECT_GT(gpu["gpu_hours_paid"].get<double>(), gpu["gpu_hours_used"].get<double>());
  EXPECT_DOUBLE_EQ(gpu["gpu_hours_used"].get<double>(), 8.0);
  EXPECT_LE(gpu["estimates_within_p90"].get<int64_t>(), gpu["estimates_checked"].get<int64_t>());
  EXPECT_EQ(gpu["timings"]["node_start_s"], 180);
  EXPECT_EQ(gpu["timings"]["node_start_source"], "flag --node-start");
  for (const char* field : {"node_hours", "idle_share", "wait_p50_s", "wait_p95_s", "wait_max_s",
                            "waited_long", "never_placed", "nodes_started", "gpu_hours_stranded",
                            "relayouts"}) {
    EXPECT_TRUE(gpu.contains(field)) << field;
  }
}

TEST(Report, WaitText) {
  EXPECT_EQ(WaitText(absl::ZeroDuration()), "0s");
  EXPECT_EQ(WaitText(absl::Milliseconds(182'400)), "3m2s");
  EXPECT_EQ(WaitText(absl::Milliseconds(600)), "1s");
}

}  // namespace
}  // namespace wsched::simulate
