// Runs the real wsched-agent binary, as an operator would.
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/agent/test_paths.h"
#include "server/process/process_runner.h"

namespace wsched::agent {
namespace {

using ::testing::HasSubstr;
using testing::Tree;

// Its stdout; a failed run is an error naming its exit and with its stderr.
absl::StatusOr<std::string> RunAgent(std::vector<std::string> flags,
                                     std::vector<std::pair<std::string, std::string>> env = {}) {
  flags.insert(flags.begin(), WSCHED_AGENT_BINARY);
  absl::StatusOr<process::Result> run =
      process::RunCommand({.argv = flags, .env = std::move(env), .timeout = absl::Seconds(30)});
  if (!run.ok()) return run.status();
  if (run->timed_out) return absl::DeadlineExceededError("wsched-agent did not finish");
  if (!run->succeeded()) {
    return absl::UnavailableError(absl::StrCat("wsched-agent failed with ",
                                               process::DescribeExit(*run), ": ", run->err.text));
  }
  return std::move(run->out.text);
}

TEST(AgentCliTest, OncePrintShowsTheNodeAsJson) {
  absl::StatusOr<std::string> out =
      RunAgent({"--once", "--print", "--root=" + Tree("h100-8gpu"), "--pool=gpu-h100",
                "--nvidia_smi=/nonexistent/nvidia-smi"});
  ASSERT_TRUE(out.ok()) << out.status();
  nlohmann::json node = nlohmann::json::parse(*out);
  EXPECT_EQ(node["name"], "h100-node-1");
  EXPECT_EQ(node["pool"], "gpu-h100");
  EXPECT_EQ(node["driver_version"], "550.54.15");
  ASSERT_EQ(node["gpus"].size(), 8u);
  EXPECT_EQ(node["gpus"][0]["passthrough_safe"], true);
  EXPECT_EQ(node["control_devices"].size(), 4u);
}

TEST(AgentCliTest, OncePrintUsesNvidiaSmiAndShowsUnsafeGroup) {
  absl::StatusOr<std::string> out =
      RunAgent({"--once", "--print", "--root=" + Tree("desktop-usb-group"),
                "--node_name=desk.example.com", "--nvidia_smi=" + testing::FakeNvidiaSmi()});
  ASSERT_TRUE(out.ok()) << out.status();
  nlohmann::json node = nlohmann::json::parse(*out);
  EXPECT_EQ(node["name"], "desk.example.com");
  ASSERT_EQ(node["gpus"].size(), 1u);
  EXPECT_EQ(node["gpus"][0]["uuid"], "GPU-3f9c2a71-8d4e-4b0a-9c51-2e7d6a1b8f04");
  EXPECT_EQ(node["gpus"][0]["passthrough_safe"], false);
  EXPECT_THAT(node["gpus"][0]["passthrough_unsafe_reason"].get<std::string>(),
              HasSubstr("0000:00:14.0"));
}

TEST(AgentCliTest, OncePrintShowsMigSlicesAndLinks) {
  absl::StatusOr<std::string> out =
      RunAgent({"--once", "--print", "--root=" + Tree("h200-mig"),
                "--nvidia_smi=" + testing::FakeNvidiaSmi()},
               {{"FAKE_NVIDIA_SMI_DIR", Tree("nvidia-smi/h200-mig")}});
  ASSERT_TRUE(out.ok()) << out.status();
  nlohmann::json node = nlohmann::json::parse(*out);
  ASSERT_EQ(node["gpus"].size(), 4u);
  const nlohmann::json& mig = node["gpus"][0]["mig"];
  EXPECT_EQ(mig["enabled"], true);
  EXPECT_EQ(mig["profiles"].size(), 7u);
  ASSERT_EQ(mig["instances"].size(), 4u);
  EXPECT_EQ(mig["instances"][0]["profile"], "3g.71gb");
  EXPECT_EQ(mig["instances"][0]["usable"], true);
  EXPECT_EQ(mig["instances"][0]["gi_access"]["path"], "/dev/nvidia-caps/nvidia-cap21");
  EXPECT_EQ(node["gpus"][1]["mig"]["pending_enabled"], true);
  EXPECT_EQ(node["gpus"][3]["mig"]["instances"][0]["usable"], false);
  EXPECT_EQ(node["gpus"][2]["links"][0],
            (nlohmann::json{{"peer", 0}, {"kind", "nvlink"}, {"nvlinks", 18}}));
}

TEST(AgentCliTest, OncePrintWithAFailingMigCommandStillPrints) {
  absl::StatusOr<process::Result> run = process::RunCommand(
      {.argv = {WSCHED_AGENT_BINARY, "--once", "--print", "--root=" + Tree("h200-mig"),
                "--nvidia_smi=" + testing::FakeNvidiaSmi()},
       .env = {{"FAKE_NVIDIA_SMI_DIR", Tree("nvidia-smi/h200-mig")},
               {"FAKE_NVIDIA_SMI_FAIL", "topo -m"}},
       .timeout = absl::Seconds(30)});
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_TRUE(run->succeeded()) << run->err.text;
  EXPECT_THAT(run->err.text, HasSubstr("GPU links: "));
  nlohmann::json node = nlohmann::json::parse(run->out.text);
  EXPECT_EQ(node["gpus"][0]["links"], nlohmann::json::array());
  EXPECT_EQ(node["gpus"][0]["mig"]["instances"].size(), 4u);
}

TEST(AgentCliTest, WithoutServerOrPrintItRefusesToRun) {
  absl::StatusOr<std::string> out = RunAgent({"--root=" + Tree("no-driver")});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("exit status 2"));
}

TEST(AgentCliTest, WrongRootFails) {
  absl::StatusOr<std::string> out =
      RunAgent({"--once", "--print", "--root=/nonexistent-root", "--node_name=n1"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("exit status 1"));
}

TEST(AgentCliTest, ABootstrapTokenWithAStaticTokenIsAUsageError) {
  absl::StatusOr<std::string> out =
      RunAgent({"--once", "--root=" + Tree("no-driver"), "--pool=gpu-a100",
                "--server=127.0.0.1:1", "--nvidia_smi=", "--token_file=/dev/null",
                "--bootstrap_token_file=/dev/null"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("exit status 2"));
  EXPECT_THAT(out.status().message(), HasSubstr("not with --token_file"));
}

TEST(AgentCliTest, AnEmptyBootstrapTokenFileIsAUsageError) {
  absl::StatusOr<std::string> out =
      RunAgent({"--once", "--root=" + Tree("no-driver"), "--pool=gpu-a100",
                "--server=127.0.0.1:1", "--nvidia_smi=", "--bootstrap_token_file=/dev/null"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("exit status 2"));
  EXPECT_THAT(out.status().message(), HasSubstr("--bootstrap_token_file: /dev/null is empty"));
}

TEST(AgentCliTest, ServerDownInOnceModeIsAnError) {
  // Port 1 on loopback refuses connections; --once must report, not hang.
  absl::StatusOr<std::string> out =
      RunAgent({"--once", "--root=" + Tree("no-driver"), "--pool=gpu-a100",
                "--server=127.0.0.1:1", "--nvidia_smi="});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("exit status 1"));
}

}  // namespace
}  // namespace wsched::agent
