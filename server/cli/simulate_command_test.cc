#include "server/cli/simulate_command.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/catalog/load.h"
#include "server/cli/arg_parser.h"
#include "server/cli/options_from_flags.h"
#include "server/cli/run.h"
#include "server/scheduler/scheduler_options.h"
#include "server/simulate/engine.h"
#include "server/simulate/workload.h"

namespace wsched::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

core::Catalog Saas() {
  absl::StatusOr<core::Catalog> catalog =
      catalog::LoadCatalog(std::string(WSCHED_SOURCE_DIR) + "/classes/saas.yaml");
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  return *catalog;
}

TEST(ReadTimingsExport, MediansFromAPoolListing) {
  // As `wschedctl pools -o json` prints it (proto field names).
  const char* json = R"({"pools": [
    {"id": "gpu-h100", "timings": {"node_start_samples": 5, "node_start_median": "240s",
      "default_node_start": "300s", "default_driver_install": "600s",
      "driver_installs": [{"kernel_version": "5.15.0-91-generic", "samples": 3, "median": "420s"},
                          {"kernel_version": "5.15.0-92-generic", "samples": 1, "median": "60s"}]}},
    {"id": "gpu-a100", "timings": {"default_node_start": "300s"}},
    {"id": "not-in-the-catalog", "timings": {"node_start_samples": 1, "node_start_median": "1s"}}
  ]})";
  std::map<std::string, simulate::PoolTimings> timings;
  ASSERT_TRUE(ReadTimingsExport(json, "pools.json", Saas(), timings).ok());
  EXPECT_EQ(timings["gpu-h100"].node_start, absl::Minutes(4));
  EXPECT_EQ(timings["gpu-h100"].node_start_source, "--timings pools.json: median of 5 node starts");
  EXPECT_EQ(timings["gpu-h100"].driver_install, absl::Minutes(7)) << "the kernel with most samples";
  EXPECT_THAT(timings["gpu-h100"].driver_install_source, HasSubstr("3 installs on kernel 5.15.0-91"));
  EXPECT_EQ(timings["gpu-a100"].node_start, absl::Minutes(5));
  EXPECT_THAT(timings["gpu-a100"].node_start_source, HasSubstr("the server's default"));
  EXPECT_EQ(timings["gpu-a100"].driver_install, absl::ZeroDuration());
  EXPECT_FALSE(timings.contains("not-in-the-catalog"));
  EXPECT_FALSE(timings.contains("general")) << "not in the file: left as it was";
}

TEST(ReadTimingsExport, OnePoolAndRefusals) {
  std::map<std::string, simulate::PoolTimings> timings;
  ASSERT_TRUE(ReadTimingsExport(
                  R"({"id": "general", "timings": {"nodeStartSamples": 2, "nodeStartMedian": "90s"}})",
                  "one.json", Saas(), timings)
                  .ok());
  EXPECT_EQ(timings["general"].node_start, absl::Seconds(90));
  absl::Status bad = ReadTimingsExport("[1, 2]", "x.json", Saas(), timings);
  EXPECT_EQ(bad.message(), "--timings x.json: not the JSON of `wschedctl pools -o json` (nor of one pool)");
}

// Runs `wschedctl ARGS` and returns its exit status, stdout and stderr.
struct Ran {
  int exit;
  std::string out, err;
};
Ran Wschedctl(const std::vector<std::string>& args) {
  std::stringstream out, err, in;
  std::streambuf* old_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf* old_err = std::cerr.rdbuf(err.rdbuf());
  int exit = Run(args, in, [](const std::string&) { return std::optional<std::string>(); });
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  return {exit, out.str(), err.str()};
}

class SimulateCommandTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_ = [] {
    char pattern[] = "/tmp/wsched-simulate-XXXXXX";
    return std::string(mkdtemp(pattern));
  }();
  std::string catalog_ = std::string(WSCHED_SOURCE_DIR) + "/classes/saas.yaml";
};

TEST_F(SimulateCommandTest, ATableOfEveryVariantAndAChart) {
  std::string trace = Write("trace.csv",
                            "time,org,project,class,duration_s\n"
                            "2026-03-02T10:00:00Z,o,p,gpu-1x,3600\n"
                            "2026-03-02T10:00:30Z,o,p,standard,3600\n");
  std::string chart = dir_ + "/chart.svg";
  Ran ran = Wschedctl({"simulate", "--catalog", catalog_, "--trace", trace, "--node-start=3m",
                       "--set", "pool.gpu-h100.warm_buffer=0", "--variant",
                       "wb1:pool.gpu-h100.warm_buffer=1", "--chart", chart});
  ASSERT_EQ(ran.exit, 0) << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("trace: 2 workspaces from 2026-03-02T10:00:00Z"));
  EXPECT_THAT(ran.out, HasSubstr("gpu-h100: node start 3m (flag --node-start)"));
  EXPECT_THAT(ran.out, HasSubstr("VARIANT"));
  EXPECT_THAT(ran.out, HasSubstr("baseline  gpu-h100"));
  EXPECT_THAT(ran.out, HasSubstr("wb1       gpu-h100"));
  std::ifstream svg(chart);
  std::string first;
  std::getline(svg, first);
  EXPECT_THAT(first, HasSubstr("<svg"));

  ran = Wschedctl({"simulate", "--catalog", catalog_, "--trace", trace, "-o", "json"});
  ASSERT_EQ(ran.exit, 0) << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("\"name\": \"baseline\""));
  EXPECT_THAT(ran.out, HasSubstr("\"gpu_hours_used\""));
}

// The help and a run agree on the defaults because both read them from
// simulate::PoolTimings and SimulationOptions; the help calls the node
// start the server's default and docs/scaling.md promises 5 min, no driver
// install and a 5 min long wait.
TEST_F(SimulateCommandTest, TheHelpGivesTheDefaultsARunUses) {
  const simulate::PoolTimings defaults;
  EXPECT_EQ(defaults.node_start, scheduler::SchedulerOptions{}.default_node_start);
  EXPECT_EQ(defaults.node_start, absl::Minutes(5));
  EXPECT_EQ(defaults.driver_install, absl::ZeroDuration());
  const absl::Duration long_wait = simulate::SimulationOptions{}.long_wait;
  EXPECT_EQ(long_wait, absl::Minutes(5));
  const std::string node_start = absl::FormatDuration(defaults.node_start);

  Ran help = Wschedctl({"help", "simulate"});
  ASSERT_EQ(help.exit, 0) << help.err;
  EXPECT_THAT(help.out, HasSubstr("node start time (" + node_start + ", the server's default)"));
  EXPECT_THAT(help.out, HasSubstr("driver install time (0: the node image has the driver)"));
  EXPECT_THAT(help.out, HasSubstr("count waits longer than D (default " +
                                  absl::FormatDuration(long_wait) + ")"));

  std::string trace = Write("trace.csv",
                            "time,org,project,class,duration_s\n"
                            "2026-03-02T10:00:00Z,o,p,gpu-1x,3600\n");
  Ran ran = Wschedctl({"simulate", "--catalog", catalog_, "--trace", trace});
  ASSERT_EQ(ran.exit, 0) << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("gpu-h100: node start " + node_start +
                                 " (default (the server's --default_node_start_time)), "
                                 "driver install 0s (default (the node image has the driver))"));
}

TEST_F(SimulateCommandTest, BadInputNamesTheFlagOrLineAndRunsNothing) {
  std::string trace = Write("trace.csv", "time,class,duration_s\n2026-03-02T10:00:00Z,gpu-1x,60\n");
  Ran ran = Wschedctl({"simulate", "--trace", trace});
  EXPECT_EQ(ran.exit, kExitUsage);
  EXPECT_THAT(ran.err, HasSubstr("--catalog and --trace are required"));

  ran = Wschedctl({"simulate", "--catalog", catalog_, "--trace", trace, "--set",
                   "pool.gpu-h100.warm_buffer=many"});
  EXPECT_EQ(ran.exit, kExitUsage);
  EXPECT_THAT(ran.err, HasSubstr("--set pool.gpu-h100.warm_buffer=many: warm_buffer: want a whole"));
  EXPECT_EQ(ran.out, "");

  ran = Wschedctl({"simulate", "--catalog", catalog_, "--trace", trace, "--variant", "a:", "--variant",
                   "a:pool.general.min_size=1"});
  EXPECT_EQ(ran.exit, kExitUsage);
  EXPECT_THAT(ran.err, HasSubstr("the name \"a\" is taken"));

  ran = Wschedctl({"simulate", "--catalog", catalog_, "--trace", trace, "--node-start=soon"});
  EXPECT_EQ(ran.exit, kExitUsage);
  EXPECT_THAT(ran.err, HasSubstr("--node-start: want a duration"));

  std::string bad_trace = Write("bad.csv", "time,class,duration_s\nnoon,gpu-1x,60\n");
  ran = Wschedctl({"simulate", "--catalog", catalog_, "--trace", bad_trace});
  EXPECT_EQ(ran.exit, 1);
  EXPECT_THAT(ran.err, HasSubstr("trace line 2, column time: \"noon\" is no time"));

  ran = Wschedctl({"simulate", "--catalog", catalog_, "--trace", dir_ + "/missing.csv"});
  EXPECT_EQ(ran.exit, 1);
  EXPECT_THAT(ran.err, HasSubstr("--trace " + dir_ + "/missing.csv: cannot be read"));
}

TEST_F(SimulateCommandTest, TraceMakesTheSyntheticCsv) {
  Ran ran = Wschedctl({"simulate", "trace", "--workspaces=50", "--days=1", "--mix=gpu-1x=1"});
  ASSERT_EQ(ran.exit, 0) << ran.err;
  EXPECT_THAT(ran.out, testing::StartsWith("time,org,project,class,duration_s\n2026-03-02T"));
  EXPECT_THAT(ran.out, HasSubstr(",gpu-1x,"));
  EXPECT_THAT(ran.out, Not(HasSubstr(",standard,")));
  EXPECT_EQ(std::count(ran.out.begin(), ran.out.end(), '\n'), 51);
  ran = Wschedctl({"simulate", "trace", "--workspaces=0"});
  EXPECT_EQ(ran.exit, kExitUsage);
  EXPECT_THAT(ran.err, HasSubstr("--workspaces: want a whole number from 1"));
  ran = Wschedctl({"simulate", "trace", "--mix=gpu-1x"});
  EXPECT_THAT(ran.err, HasSubstr("--mix: want CLASS=WEIGHT"));
}

}  // namespace
}  // namespace wsched::cli
