#include "server/agent/subprocess.h"

#include <pthread.h>
#include <signal.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::agent {
namespace {

using ::testing::HasSubstr;

TEST(RunAndCaptureTest, ReturnsStdout) {
  absl::StatusOr<std::string> out =
      RunAndCapture({"/bin/sh", "-c", "echo one; echo two"}, absl::Seconds(10));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "one\ntwo\n");
}

TEST(RunAndCaptureTest, DoesNotGoThroughAShell) {
  absl::StatusOr<std::string> out = RunAndCapture({"echo", "$HOME; true"}, absl::Seconds(10));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "$HOME; true\n");
}

TEST(RunAndCaptureTest, NonZeroExitIsUnavailableWithOutput) {
  absl::StatusOr<std::string> out =
      RunAndCapture({"/bin/sh", "-c", "echo broken driver; exit 3"}, absl::Seconds(10));
  ASSERT_TRUE(absl::IsUnavailable(out.status()));
  EXPECT_THAT(out.status().message(), HasSubstr("exit status 3: broken driver"));
}

TEST(RunAndCaptureTest, ChildThatClosesStdoutAndHangsIsKilled) {
  absl::StatusOr<std::string> out =
      RunAndCapture({"/bin/sh", "-c", "exec >&-; exec sleep 60"}, absl::Milliseconds(200));
  EXPECT_TRUE(absl::IsDeadlineExceeded(out.status())) << out.status();
}

TEST(RunAndCaptureTest, ChildDoesNotInheritBlockedSignals) {
  // The agent keeps SIGTERM blocked for its own shutdown; its children must not.
  sigset_t term, previous;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, &previous);
  absl::StatusOr<std::string> out =
      RunAndCapture({"/bin/sh", "-c", "grep SigBlk /proc/self/status"}, absl::Seconds(10));
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("0000000000000000"));
}

}  // namespace
}  // namespace wsched::agent
