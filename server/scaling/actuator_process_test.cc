#include "server/scaling/actuator_process.h"

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/scaling/test_scripts.h"

namespace wsched::scaling {
namespace {

using ::testing::HasSubstr;
using testing::ProcessAlive;
using testing::ScriptDir;

ProcessResult RunScript(const std::string& path, absl::Duration timeout = absl::Seconds(10)) {
  return RunProcess({.argv = {path}, .timeout = timeout}, {});
}

TEST(RunProcessTest, CapturesStdoutAndStderr) {
  ScriptDir dir;
  ProcessResult result = RunScript(dir.Script("ok.sh", "echo out; echo err >&2"));
  EXPECT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(result.output_tail, "out\nerr\n");
}

TEST(RunProcessTest, NonZeroExitIsUnavailable) {
  ScriptDir dir;
  ProcessResult result = RunScript(dir.Script("fail.sh", "echo no capacity; exit 3"));
  EXPECT_TRUE(absl::IsUnavailable(result.status)) << result.status;
  EXPECT_THAT(result.status.message(), HasSubstr("exit status 3"));
  EXPECT_THAT(result.output_tail, HasSubstr("no capacity"));
}

TEST(RunProcessTest, MissingCommandIsNotFound) {
  EXPECT_TRUE(absl::IsNotFound(RunScript("/nonexistent/wsched-actuator").status));
  EXPECT_TRUE(absl::IsNotFound(RunScript("wsched-no-such-command-in-path").status));
}

TEST(RunProcessTest, SetsEnvironmentOnTopOfTheInheritedOne) {
  ::setenv("WSCHED_TEST_INHERITED", "kept", 1);
  ::setenv("WSCHED_POOL", "stale", 1);
  ScriptDir dir;
  ProcessResult result = RunProcess(
      {.argv = {dir.Script("env.sh", "echo \"$WSCHED_POOL $WSCHED_TEST_INHERITED $1\""), "arg"},
       .env = {{"WSCHED_POOL", "gpu-a100"}}},
      {});
  ::unsetenv("WSCHED_POOL");
  ::unsetenv("WSCHED_TEST_INHERITED");
  EXPECT_EQ(result.output_tail, "gpu-a100 kept arg\n");
}

TEST(RunProcessTest, TimeoutKillsTheWholeProcessGroup) {
  ScriptDir dir;
  std::string script =
      dir.Script("hang.sh", "sleep 30 & echo $! > " + dir.Path("child.pid") + "\nwait");
  absl::Time start = absl::Now();
  ProcessResult result = RunScript(script, absl::Milliseconds(300));
  EXPECT_TRUE(absl::IsDeadlineExceeded(result.status)) << result.status;
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  std::string child = std::string(absl::StripAsciiWhitespace(dir.Read("child.pid")));
  ASSERT_FALSE(child.empty());
  // The grandchild got the kill too (give the kernel a moment to reap it).
  absl::Time until = absl::Now() + absl::Seconds(5);
  while (ProcessAlive(child) && absl::Now() < until) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_FALSE(ProcessAlive(child));
}

TEST(RunProcessTest, LeftoverBackgroundProcessesAreKilledAtExit) {
  ScriptDir dir;
  ProcessResult result = RunScript(dir.Script(
      "leave.sh", "sleep 30 >/dev/null 2>&1 & echo $! > " + dir.Path("child.pid") + "\nexit 0"));
  EXPECT_TRUE(result.status.ok()) << result.status;
  std::string child = std::string(absl::StripAsciiWhitespace(dir.Read("child.pid")));
  absl::Time until = absl::Now() + absl::Seconds(5);
  while (ProcessAlive(child) && absl::Now() < until) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_FALSE(ProcessAlive(child));
}

TEST(RunProcessTest, CancelSendsTermThenKill) {
  ScriptDir dir;
  // Ignores SIGTERM, so only the SIGKILL after the grace period ends it.
  std::string script = dir.Script("stubborn.sh", "trap '' TERM\nwhile :; do sleep 0.05; done");
  absl::Time start = absl::Now();
  ProcessResult result = RunProcess(
      {.argv = {script}, .timeout = absl::Seconds(30), .kill_grace = absl::Milliseconds(200)},
      [&] { return absl::Now() - start > absl::Milliseconds(100); });
  EXPECT_TRUE(absl::IsCancelled(result.status)) << result.status;
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

}  // namespace
}  // namespace wsched::scaling
