#include "server/process/process_runner.h"

#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::process {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

Result RunOk(Command command) {
  absl::StatusOr<Result> result = RunCommand(command);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : Result{};
}

Result Shell(const std::string& script, absl::Duration timeout = absl::Seconds(10)) {
  return RunOk({.argv = {"/bin/sh", "-c", script}, .timeout = timeout});
}

pid_t ParsePid(absl::string_view text) {
  int pid = 0;
  EXPECT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &pid)) << text;
  return pid;
}

// Orphans of the commands become this process's children instead of
// init's, so they are reaped (and their pids freed) whatever init does.
void AdoptOrphans() { ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0); }

// True once `pid` no longer exists: killed and reaped. A killed orphan is a
// zombie until it is reaped, which takes a moment; the wait is bounded.
bool GoneWithin(pid_t pid, absl::Duration bound) {
  const absl::Time until = absl::Now() + bound;
  while (true) {
    ::waitpid(pid, nullptr, WNOHANG);  // Reaps it if it was adopted here.
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    if (absl::Now() >= until) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
}

// A path in the test's temp dir, removed at the end of the test.
class TempFile {
 public:
  explicit TempFile(const std::string& name)
      : path_(absl::StrCat(::testing::TempDir(), "/process_runner_", ::getpid(), "_", name)) {
    std::filesystem::remove(path_);
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }
  bool exists() const { return std::filesystem::exists(path_); }

 private:
  std::string path_;
};

TEST(ProcessRunnerTest, ReportsExitCodeAndBothOutputs) {
  Result result = Shell("echo out; echo err >&2; exit 3");
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.signal, 0);
  EXPECT_FALSE(result.succeeded());
  EXPECT_EQ(result.out.text, "out\n");
  EXPECT_EQ(result.err.text, "err\n");
  EXPECT_EQ(DescribeExit(result), "exit status 3");
}

TEST(ProcessRunnerTest, ZeroExitSucceeds) {
  Result result = Shell("true");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_TRUE(result.succeeded());
  EXPECT_FALSE(result.timed_out);
}

TEST(ProcessRunnerTest, ReportsTheSignalThatEndedIt) {
  Result result = Shell("kill -9 $$");
  EXPECT_EQ(result.signal, SIGKILL);
  EXPECT_EQ(result.exit_code, -1);
  EXPECT_FALSE(result.succeeded());
  EXPECT_EQ(DescribeExit(result), "killed by signal 9");
}

TEST(ProcessRunnerTest, MergedStderrIsInterleavedInOrder) {
  Result result = RunOk(
      {.argv = {"/bin/sh", "-c", "echo one; echo two >&2; echo three"}, .merge_stderr = true});
  EXPECT_EQ(result.out.text, "one\ntwo\nthree\n");
  EXPECT_EQ(result.err.text, "");
}

TEST(ProcessRunnerTest, DoesNotGoThroughAShell) {
  Result result = RunOk({.argv = {"echo", "$HOME; true"}});
  EXPECT_EQ(result.out.text, "$HOME; true\n");
}

TEST(ProcessRunnerTest, MissingOrEmptyCommandIsAnError) {
  EXPECT_TRUE(absl::IsNotFound(RunCommand({.argv = {"/nonexistent/wsched-helper"}}).status()));
  EXPECT_TRUE(absl::IsNotFound(RunCommand({.argv = {"wsched-no-such-command-in-path"}}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(RunCommand({}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(RunCommand({.argv = {""}}).status()));
}

TEST(ProcessRunnerTest, OutputPastTheLimitIsReadAndCountedNotKept) {
  // 300 KB is several pipe buffers: the command finishes only if the rest
  // is read rather than left in the pipe.
  Result result = RunOk(
      {.argv = {"/bin/sh", "-c", "head -c 300000 /dev/zero; echo err >&2"}, .output_limit = 1000});
  EXPECT_TRUE(result.succeeded()) << DescribeExit(result);
  EXPECT_EQ(result.out.text, std::string(1000, '\0'));
  EXPECT_EQ(result.out.dropped_bytes, 299000);
  EXPECT_TRUE(result.out.truncated());
  EXPECT_EQ(result.err.text, "err\n");
  EXPECT_FALSE(result.err.truncated());
}

TEST(ProcessRunnerTest, KeepingTheTailKeepsTheLastBytes) {
  Result result = RunOk({.argv = {"/bin/sh", "-c", "head -c 100000 /dev/zero; printf END"},
                         .output_limit = 10,
                         .keep = Keep::kTail});
  EXPECT_EQ(result.out.text, std::string(7, '\0') + "END");
  EXPECT_EQ(result.out.dropped_bytes, 100003 - 10);
}

TEST(ProcessRunnerTest, SetsEnvironmentOnTopOfTheInheritedOne) {
  ::setenv("WSCHED_TEST_INHERITED", "kept", 1);
  ::setenv("WSCHED_TEST_REPLACED", "stale", 1);
  Result result = RunOk(
      {.argv = {"/bin/sh", "-c", "echo \"$WSCHED_TEST_REPLACED $WSCHED_TEST_INHERITED $0\"", "arg"},
       .env = {{"WSCHED_TEST_REPLACED", "fresh"}}});
  ::unsetenv("WSCHED_TEST_INHERITED");
  ::unsetenv("WSCHED_TEST_REPLACED");
  EXPECT_EQ(result.out.text, "fresh kept arg\n");
}

TEST(ProcessRunnerTest, ChildDoesNotInheritBlockedSignals) {
  // The agent and the server keep SIGTERM blocked for their own shutdown.
  sigset_t term, previous;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, &previous);
  Result result = Shell("grep SigBlk /proc/self/status");
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  EXPECT_THAT(result.out.text, HasSubstr("0000000000000000"));
}

TEST(ProcessRunnerTest, CommandLeadsItsOwnProcessGroup) {
  // Field 5 of /proc/PID/stat is the process group.
  Result result = Shell("echo $$; cut -d' ' -f5 /proc/$$/stat");
  std::pair<std::string, std::string> lines = absl::StrSplit(result.out.text, '\n');
  EXPECT_EQ(ParsePid(lines.first), ParsePid(lines.second));
  EXPECT_NE(ParsePid(lines.second), ::getpgrp());
}

TEST(ProcessRunnerTest, TimeoutKillsTheGrandchildToo) {
  AdoptOrphans();
  absl::Time start = absl::Now();
  Result result = Shell("sleep 1000 & echo $!; wait", absl::Milliseconds(300));
  EXPECT_TRUE(result.timed_out);
  EXPECT_FALSE(result.succeeded());
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  pid_t grandchild = ParsePid(result.out.text);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(GoneWithin(grandchild, absl::Seconds(10)));
}

TEST(ProcessRunnerTest, ChildThatClosesStdoutAndHangsIsStoppedAtTheTimeout) {
  Result result = Shell("exec >&- 2>&-; exec sleep 60", absl::Milliseconds(200));
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.signal, SIGTERM);
}

TEST(ProcessRunnerTest, LeftoverBackgroundProcessesAreKilledAtExit) {
  AdoptOrphans();
  Result result = Shell("sleep 1000 >/dev/null 2>&1 & echo $!");
  EXPECT_TRUE(result.succeeded()) << DescribeExit(result);
  pid_t leftover = ParsePid(result.out.text);
  ASSERT_GT(leftover, 0);
  EXPECT_TRUE(GoneWithin(leftover, absl::Seconds(10)));
}

TEST(ProcessRunnerTest, CancelSendsTermFirst) {
  TempFile ready("term-ready");
  // Exits on its own terms when told to stop.
  Result result = RunOk({.argv = {"/bin/sh", "-c",
                                  "trap 'echo stopping; exit 7' TERM; touch " + ready.path() +
                                      "; while :; do sleep 0.05; done"},
                         .timeout = absl::Seconds(30),
                         .kill_grace = absl::Seconds(20),
                         .cancelled = [&] { return ready.exists(); }});
  EXPECT_TRUE(result.cancelled);
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_code, 7);
  EXPECT_EQ(result.out.text, "stopping\n");
  EXPECT_LT(result.took, absl::Seconds(20));
}

TEST(ProcessRunnerTest, CancelKillsACommandThatIgnoresTermAfterTheGrace) {
  TempFile ready("kill-ready");
  absl::Time ready_seen = absl::InfiniteFuture();
  // An ignored signal stays ignored in the children too: only SIGKILL ends
  // this group.
  Result result =
      RunOk({.argv = {"/bin/sh", "-c",
                      "trap '' TERM; touch " + ready.path() + "; while :; do sleep 0.05; done"},
             .timeout = absl::Seconds(30),
             .kill_grace = absl::Milliseconds(200),
             .cancelled = [&] {
               if (!ready.exists()) return false;
               ready_seen = std::min(ready_seen, absl::Now());
               return true;
             }});
  absl::Time end = absl::Now();
  EXPECT_TRUE(result.cancelled);
  EXPECT_EQ(result.signal, SIGKILL);
  EXPECT_GE(end - ready_seen, absl::Milliseconds(200));
  EXPECT_LT(end - ready_seen, absl::Seconds(5));
}

}  // namespace
}  // namespace wsched::process
