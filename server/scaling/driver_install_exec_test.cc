#include "server/scaling/driver_install_exec.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/scaling/test_scripts.h"

namespace wsched::scaling {
namespace {

using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;
using ::testing::StartsWith;
using testing::ScriptDir;

// Long enough for any run a test waits for; a test that needs it has failed.
constexpr absl::Duration kWait = absl::Seconds(20);

DriverInstallJob Job(const std::string& node, const std::string& kernel = "6.1.0-18-amd64") {
  return {.node = node,
          .kernel = kernel,
          .os_id = "debian",
          .os_version = "12",
          .driver_version = "550.54.15",
          .image = absl::StrCat("registry.example/driver:550-", kernel, "-debian12")};
}

// The time the backoff is measured by; tests move it.
class FakeClock {
 public:
  core::Clock AsClock() {
    return [this] {
      absl::MutexLock lock(&mu_);
      return now_;
    };
  }
  void Advance(absl::Duration by) {
    absl::MutexLock lock(&mu_);
    now_ += by;
  }

 private:
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_) = absl::FromUnixSeconds(1'700'000'000);
};

// Records the callbacks, which come from worker threads.
class Events {
 public:
  void Hook(DriverInstallExecOptions& options) {
    options.on_start = [this](const DriverInstallJob& job) {
      absl::MutexLock lock(&mu_);
      log_.push_back(absl::StrCat("start ", job.node, " ", job.kernel));
      ++starts_;
    };
    options.on_end = [this](const DriverInstallOutcome& outcome) {
      absl::MutexLock lock(&mu_);
      log_.push_back(absl::StrCat("end ", outcome.job.node, " ", outcome.job.kernel));
      outcomes_.push_back(outcome);
    };
  }
  std::vector<std::string> Log() {
    absl::MutexLock lock(&mu_);
    return log_;
  }
  std::vector<DriverInstallOutcome> Outcomes() {
    absl::MutexLock lock(&mu_);
    return outcomes_;
  }
  // True once `count` runs have begun (on_start returned to the worker).
  bool WaitForStarts(size_t count) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, count]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return starts_ >= count; };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), kWait);
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> log_ ABSL_GUARDED_BY(mu_);
  std::vector<DriverInstallOutcome> outcomes_ ABSL_GUARDED_BY(mu_);
  size_t starts_ ABSL_GUARDED_BY(mu_) = 0;
};

// A named pipe a script writes a line to when it has got somewhere: the
// test waits on the pipe, not on a timer.
class Fifo {
 public:
  explicit Fifo(const std::string& path) {
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
    read_fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
    // Held open so that a script closing its end does not leave the reader
    // at end-of-file (poll would return at once until the next writer).
    write_fd_ = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
    EXPECT_GE(read_fd_, 0);
    EXPECT_GE(write_fd_, 0);
  }
  ~Fifo() {
    if (read_fd_ >= 0) ::close(read_fd_);
    if (write_fd_ >= 0) ::close(write_fd_);
  }
  Fifo(const Fifo&) = delete;
  Fifo& operator=(const Fifo&) = delete;

  // The next line written; "" when none came within kWait.
  std::string ReadLine() {
    const absl::Time deadline = absl::Now() + kWait;
    while (true) {
      size_t end = buffer_.find('\n');
      if (end != std::string::npos) {
        std::string line = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        return line;
      }
      const int64_t left = absl::ToInt64Milliseconds(deadline - absl::Now());
      if (left <= 0) return "";
      pollfd ready{.fd = read_fd_, .events = POLLIN, .revents = 0};
      if (::poll(&ready, 1, static_cast<int>(left)) <= 0) continue;
      char chunk[256];
      ssize_t got = ::read(read_fd_, chunk, sizeof chunk);
      if (got > 0) buffer_.append(chunk, static_cast<size_t>(got));
    }
  }

 private:
  int read_fd_ = -1;
  int write_fd_ = -1;
  std::string buffer_;
};

DriverInstallExecOptions Fast(const std::string& script, FakeClock& clock) {
  return {.command = {script},
          .driver_cache = "/var/cache/wsched-driver",
          .timeout = absl::Seconds(10),
          .retry_initial = absl::Seconds(30),
          .retry_max = absl::Seconds(100),
          .stop_grace = absl::Milliseconds(200),
          .clock = clock.AsClock()};
}

std::unique_ptr<DriverInstallExec> Start(DriverInstallExecOptions options) {
  auto exec = DriverInstallExec::Create(std::move(options));
  EXPECT_TRUE(exec.ok()) << exec.status();
  return exec.ok() ? std::move(*exec) : nullptr;
}

// The command inherits the test's environment (deploy/local/test.sh sets
// WSCHED_JOBS): leave only what the runner sets.
void UnsetInheritedWschedVariables() {
  std::vector<std::string> names;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string variable(*entry);
    if (variable.rfind("WSCHED_", 0) == 0) names.push_back(variable.substr(0, variable.find('=')));
  }
  for (const std::string& name : names) unsetenv(name.c_str());
}

void Touch(const ScriptDir& dir, const std::string& name) { std::ofstream(dir.Path(name)) << "\n"; }

TEST(BuildDriverInstallInvocationTest, ExtraEnvFirstThenTheContractWhichWins) {
  FakeClock clock;
  DriverInstallExecOptions options = Fast("/opt/install-on-node", clock);
  options.command.push_back("--namespace=gpu-ops");
  options.extra_env = {{"KUBECONFIG", "/etc/wsched/kubeconfig"},
                       {"WSCHED_NODE", "not-the-job"},
                       {"KUBECONFIG", "/etc/wsched/kubeconfig-2"}};
  options.timeout = absl::Seconds(90) + absl::Milliseconds(1);
  process::Command spec = BuildDriverInstallInvocation(options, Job("gpu-7"));
  EXPECT_THAT(spec.argv, ElementsAre("/opt/install-on-node", "--namespace=gpu-ops"));
  EXPECT_THAT(spec.env,
              ElementsAre(Pair("KUBECONFIG", "/etc/wsched/kubeconfig-2"),
                          Pair("WSCHED_NODE", "gpu-7"), Pair("WSCHED_KERNEL", "6.1.0-18-amd64"),
                          Pair("WSCHED_OS", "debian12"), Pair("WSCHED_OS_ID", "debian"),
                          Pair("WSCHED_OS_VERSION", "12"),
                          Pair("WSCHED_DRIVER_VERSION", "550.54.15"),
                          Pair("WSCHED_IMAGE", "registry.example/driver:550-6.1.0-18-amd64-debian12"),
                          Pair("WSCHED_DRIVER_CACHE", "/var/cache/wsched-driver"),
                          Pair("WSCHED_TIMEOUT_SECONDS", "91")));
  EXPECT_EQ(spec.timeout, options.timeout);
  EXPECT_EQ(spec.kill_grace, options.stop_grace);
  EXPECT_TRUE(spec.merge_stderr);
  EXPECT_EQ(spec.keep, process::Keep::kTail);
  EXPECT_FALSE(spec.cancelled);
}

TEST(DriverCacheReportInTest, TheLastHitOrMissLineWins) {
  EXPECT_EQ(core::DriverCacheReportIn(""), core::DriverCache::kUnknown);
  EXPECT_EQ(core::DriverCacheReportIn("building\nloaded\n"), core::DriverCache::kUnknown);
  EXPECT_EQ(core::DriverCacheReportIn("wsched-driver-cache: hit\n"), core::DriverCache::kHit);
  EXPECT_EQ(core::DriverCacheReportIn("wsched-driver-cache: miss\nbuilt"), core::DriverCache::kMiss);
  EXPECT_EQ(core::DriverCacheReportIn("wsched-driver-cache: miss\n  wsched-driver-cache: hit \r\n"),
            core::DriverCache::kHit);
  // Not a report: another value, or the line quoted inside another.
  EXPECT_EQ(core::DriverCacheReportIn("wsched-driver-cache: hit\nwsched-driver-cache: maybe\n"),
            core::DriverCache::kHit);
  EXPECT_EQ(core::DriverCacheReportIn("+ echo wsched-driver-cache: hit\n"), core::DriverCache::kUnknown);
}

TEST(DriverInstallExecTest, CommandSeesTheContractEnvironmentAndReportsTheCacheHit) {
  UnsetInheritedWschedVariables();
  ScriptDir dir;
  FakeClock clock;
  DriverInstallExecOptions options = Fast(
      dir.Script("install.sh", "env | grep -E '^(WSCHED_|KUBECONFIG=)' | LC_ALL=C sort > " +
                                   dir.Path("env.txt") +
                                   "\necho 'wsched-driver-cache: miss'"
                                   "\necho 'wsched-driver-cache: hit'\necho 'nvidia loaded'"),
      clock);
  options.extra_env = {{"KUBECONFIG", "/etc/wsched/kubeconfig"}, {"WSCHED_NODE", "not-the-job"}};
  Events events;
  events.Hook(options);
  auto exec = Start(std::move(options));
  ASSERT_TRUE(exec->Offer(Job("gpu-7")).ok());
  ASSERT_TRUE(exec->WaitUntilIdle(kWait));
  EXPECT_EQ(dir.Read("env.txt"),
            "KUBECONFIG=/etc/wsched/kubeconfig\n"
            "WSCHED_DRIVER_CACHE=/var/cache/wsched-driver\n"
            "WSCHED_DRIVER_VERSION=550.54.15\n"
            "WSCHED_IMAGE=registry.example/driver:550-6.1.0-18-amd64-debian12\n"
            "WSCHED_KERNEL=6.1.0-18-amd64\n"
            "WSCHED_NODE=gpu-7\n"
            "WSCHED_OS=debian12\n"
            "WSCHED_OS_ID=debian\n"
            "WSCHED_OS_VERSION=12\n"
            "WSCHED_TIMEOUT_SECONDS=10\n");
  EXPECT_THAT(events.Log(), ElementsAre("start gpu-7 6.1.0-18-amd64", "end gpu-7 6.1.0-18-amd64"));
  std::vector<DriverInstallOutcome> outcomes = events.Outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  const DriverInstallOutcome& outcome = outcomes[0];
  EXPECT_EQ(outcome.job, Job("gpu-7"));
  EXPECT_TRUE(outcome.succeeded);
  EXPECT_FALSE(outcome.stopped);
  EXPECT_FALSE(outcome.timed_out);
  EXPECT_EQ(outcome.detail, "550.54.15");
  EXPECT_EQ(outcome.cache, core::DriverCache::kHit);
  EXPECT_THAT(outcome.log_tail, EndsWith("wsched-driver-cache: hit\nnvidia loaded\n"));
  EXPECT_GT(outcome.took, absl::ZeroDuration());
  EXPECT_EQ(exec->stats(), (DriverInstallExecStats{.offered = 1, .started = 1, .succeeded = 1}));
}

TEST(DriverInstallExecTest, AFailureReportsItsExitAndTheEndOfItsOutput) {
  ScriptDir dir;
  FakeClock clock;
  // The cache line first, then 10 KB of build log, then the error on stderr.
  DriverInstallExecOptions options =
      Fast(dir.Script("fail.sh",
                      "echo 'wsched-driver-cache: miss'\n"
                      "head -c 10000 /dev/zero | tr '\\0' .\necho\n"
                      "echo 'nvidia-installer: ERROR: unable to load the kernel module' >&2\n"
                      "exit 3"),
           clock);
  Events events;
  events.Hook(options);
  auto exec = Start(std::move(options));
  ASSERT_TRUE(exec->Offer(Job("gpu-7")).ok());
  ASSERT_TRUE(exec->WaitUntilIdle(kWait));
  std::vector<DriverInstallOutcome> outcomes = events.Outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  const DriverInstallOutcome& outcome = outcomes[0];
  EXPECT_FALSE(outcome.succeeded);
  EXPECT_FALSE(outcome.stopped);
  EXPECT_FALSE(outcome.timed_out);
  EXPECT_EQ(outcome.detail, "exit status 3");
  EXPECT_EQ(outcome.log_tail.size(), kDriverInstallLogTailBytes);
  EXPECT_THAT(outcome.log_tail,
              EndsWith("....\nnvidia-installer: ERROR: unable to load the kernel module\n"));
  // Out of the tail, but still read.
  EXPECT_EQ(outcome.cache, core::DriverCache::kMiss);
  EXPECT_EQ(exec->stats().failed, 1);
  EXPECT_EQ(exec->stats().succeeded, 0);
}

TEST(DriverInstallExecTest, ACommandThatCannotStartIsAFailure) {
  FakeClock clock;
  DriverInstallExecOptions options = Fast("/nonexistent/wsched-driver-installer", clock);
  Events events;
  events.Hook(options);
  auto exec = Start(std::move(options));
  ASSERT_TRUE(exec->Offer(Job("gpu-7")).ok());
  ASSERT_TRUE(exec->WaitUntilIdle(kWait));
  ASSERT_EQ(events.Outcomes().size(), 1u);
  EXPECT_FALSE(events.Outcomes()[0].succeeded);
  EXPECT_THAT(events.Outcomes()[0].detail, StartsWith("the installer could not run: "));
  EXPECT_EQ(events.Outcomes()[0].cache, core::DriverCache::kUnknown);
  EXPECT_EQ(exec->stats().failed, 1);
  // It backs off like any failure.
  ASSERT_TRUE(exec->Offer(Job("gpu-7")).ok());
  EXPECT_EQ(exec->stats().skipped_backoff, 1);
}

TEST(DriverInstallExecTest, KillsARunPastTheTimeout) {
  ScriptDir dir;
  FakeClock clock;
  DriverInstallExecOptions options =
      Fast(dir.Script("hang.sh", "echo 'building nvidia.ko'\nsleep 30"), clock);
  options.timeout = absl::Milliseconds(300);
  Events events;
  events.Hook(options);
  auto exec = Start(std::move(options));
  const absl::Time start = absl::Now();
  ASSERT_TRUE(exec->Offer(Job("gpu-7")).ok());
  ASSERT_TRUE(exec->WaitUntilIdle(kWait));
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  ASSERT_EQ(events.Outcomes().size(), 1u);
  const DriverInstallOutcome outcome = events.Outcomes()[0];
  EXPECT_FALSE(outcome.succeeded);
  EXPECT_TRUE(outcome.timed_out);
  EXPECT_FALSE(outcome.stopped);
  EXPECT_EQ(outcome.detail, "timed out after 300ms");
  EXPECT_THAT(outcome.log_tail, HasSubstr("building nvidia.ko"));
  EXPECT_EQ(exec->stats().timed_out, 1);
  EXPECT_EQ(exec->stats().failed, 1);
}

// Each node's script waits until the other node's has started, then until
// the test lets them end: both succeed only if the two nodes ran side by
// side (one worker would time out waiting). Meanwhile the test offers both
// nodes again, and those offers are ignored.
TEST(DriverInstallExecTest, NeverTwoRunsForOneNodeWhileTwoNodesRunInParallel) {
  ScriptDir dir;
  FakeClock clock;
  const std::string started = dir.Path("started-");
  DriverInstallExecOptions options = Fast(
      dir.Script("gated.sh",
                 "other=gpu-b; [ \"$WSCHED_NODE\" = gpu-b ] && other=gpu-a\n"
                 "echo \"start $WSCHED_NODE $WSCHED_KERNEL\" >> " + dir.Path("log") + "\n"
                 "touch " + started + "$WSCHED_NODE\n"
                 "while [ ! -e " + started + "$other ] || [ ! -e " + dir.Path("go") +
                 " ]; do sleep 0.01; done\n"
                 "echo \"end $WSCHED_NODE $WSCHED_KERNEL\" >> " + dir.Path("log")),
      clock);
  options.workers = 4;
  Events events;
  events.Hook(options);
  auto exec = Start(std::move(options));
  ASSERT_TRUE(exec->Offer(Job("gpu-a")).ok());
  ASSERT_TRUE(exec->Offer(Job("gpu-b")).ok());
  ASSERT_TRUE(events.WaitForStarts(2));
  // Running: ignored, the same job or a new one.
  ASSERT_TRUE(exec->Offer(Job("gpu-a")).ok());
  ASSERT_TRUE(exec->Offer(Job("gpu-a", "6.1.0-19-amd64")).ok());
  ASSERT_TRUE(exec->Offer(Job("gpu-b")).ok());
  EXPECT_EQ(exec->stats().skipped_running, 3);
  Touch(dir, "go");
  ASSERT_TRUE(exec->WaitUntilIdle(kWait));
  std::vector<DriverInstallOutcome> outcomes = events.Outcomes();
  ASSERT_EQ(outcomes.size(), 2u);
  for (const DriverInstallOutcome& outcome : outcomes) {
    EXPECT_TRUE(outcome.succeeded) << outcome.job.node << ": " << outcome.detail;
  }
  std::string log = dir.Read("log");
  EXPECT_THAT(log, HasSubstr("start gpu-a 6.1.0-18-amd64\n"));
  EXPECT_THAT(log, HasSubstr("start gpu-b 6.1.0-18-amd64\n"));
  EXPECT_THAT(log, Not(HasSubstr("6.1.0-19")));
  EXPECT_EQ(exec->stats(), (DriverInstallExecStats{.offered = 5,
                                                   .started = 2,
                                                   .succeeded = 2,
                                                   .skipped_running = 3}));
}

// One worker, busy with gpu-a: gpu-b's job waits, and a newer offer for it
// (a new kernel) takes its place.
TEST(DriverInstallExecTest, ANewerOfferReplacesAWaitingJob) {
  ScriptDir dir;
  FakeClock clock;
  DriverInstallExecOptions options = Fast(
      dir.Script("gated.sh", "echo \"$WSCHED_NODE $WSCHED_KERNEL\" >> " + dir.Path("log") +
                                 "\nwhile [ ! -e " + dir.Path("go") + " ]; do sleep 0.01; done"),
      clock);
  options.workers = 1;
  Events events;
  events.Hook(options);
  auto exec = Start(std::move(options));
  ASSERT_TRUE(exec->Offer(Job("gpu-a")).ok());
  ASSERT_TRUE(events.WaitForStarts(1));
  ASSERT_TRUE(exec->Offer(Job("gpu-b", "6.1.0-18-amd64")).ok());
  ASSERT_TRUE(exec->Offer(Job("gpu-b", "6.1.0-19-amd64")).ok());
  EXPECT_EQ(exec->stats().replaced, 1);
  Touch(dir, "go");
  ASSERT_TRUE(exec->WaitUntilIdle(kWait));
  EXPECT_EQ(dir.Read("log"), "gpu-a 6.1.0-18-amd64\ngpu-b 6.1.0-19-amd64\n");
  EXPECT_THAT(events.Log(), ElementsAre("start gpu-a 6.1.0-18-amd64", "end gpu-a 6.1.0-18-amd64",
                                        "start gpu-b 6.1.0-19-amd64", "end gpu-b 6.1.0-19-amd64"));
  EXPECT_EQ(exec->stats().started, 2);
}

TEST(DriverInstallExecTest, BackoffDoublesPerFailureUpToTheCapAndASuccessResetsIt) {
  ScriptDir dir;
  FakeClock clock;
  // Fails until the file "ok" exists.
  auto exec = Start(Fast(
      dir.Script("flaky.sh", "[ -e " + dir.Path("ok") + " ] || { echo 'no GPU found'; exit 1; }"),
      clock));
  // Offers the job and waits for what it leads to; the number of runs so far.
  auto offer = [&](const DriverInstallJob& job) {
    EXPECT_TRUE(exec->Offer(job).ok());
    EXPECT_TRUE(exec->WaitUntilIdle(kWait));
    return exec->stats().started;
  };
  const DriverInstallJob job = Job("gpu-7");
  EXPECT_EQ(offer(job), 1);  // Fails: 30 s.
  EXPECT_EQ(offer(job), 1);
  clock.Advance(absl::Seconds(29));
  EXPECT_EQ(offer(job), 1);
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(offer(job), 2);  // Fails again: 60 s.
  clock.Advance(absl::Seconds(59));
  EXPECT_EQ(offer(job), 2);
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(offer(job), 3);  // 120 s, capped at 100 s.
  clock.Advance(absl::Seconds(99));
  EXPECT_EQ(offer(job), 3);
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(offer(job), 4);  // 240 s, capped at 100 s.
  clock.Advance(absl::Seconds(99));
  EXPECT_EQ(offer(job), 4);
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(offer(job), 5);
  // A new kernel is not held back by the old one's failures.
  const DriverInstallJob new_kernel = Job("gpu-7", "6.1.0-19-amd64");
  EXPECT_EQ(offer(new_kernel), 6);  // Fails: its own 30 s.
  clock.Advance(absl::Seconds(30));
  Touch(dir, "ok");
  EXPECT_EQ(offer(new_kernel), 7);  // Succeeds.
  std::filesystem::remove(dir.Path("ok"));
  // After a success the job runs at once, and its next failure waits 30 s,
  // not 60 s.
  EXPECT_EQ(offer(new_kernel), 8);
  clock.Advance(absl::Seconds(29));
  EXPECT_EQ(offer(new_kernel), 8);
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(offer(new_kernel), 9);
  DriverInstallExecStats stats = exec->stats();
  EXPECT_EQ(stats.succeeded, 1);
  EXPECT_EQ(stats.failed, 8);
  EXPECT_EQ(stats.skipped_backoff, 6);
  EXPECT_EQ(stats.offered, 15);
}

TEST(DriverInstallExecTest, ForgetDropsTheBackoffAndAWaitingJob) {
  ScriptDir dir;
  FakeClock clock;
  DriverInstallExecOptions options = Fast(
      dir.Script("gated.sh", "echo \"$WSCHED_NODE\" >> " + dir.Path("log") + "\nwhile [ ! -e " +
                                 dir.Path("go") + " ]; do sleep 0.01; done\nexit 1"),
      clock);
  options.workers = 1;
  Events events;
  events.Hook(options);
  auto exec = Start(std::move(options));
  ASSERT_TRUE(exec->Offer(Job("gpu-a")).ok());
  ASSERT_TRUE(events.WaitForStarts(1));
  ASSERT_TRUE(exec->Offer(Job("gpu-b")).ok());  // Waits for the one worker.
  exec->Forget("gpu-b");
  Touch(dir, "go");
  ASSERT_TRUE(exec->WaitUntilIdle(kWait));
  EXPECT_EQ(dir.Read("log"), "gpu-a\n");
  // gpu-a failed: in its backoff until forgotten.
  ASSERT_TRUE(exec->Offer(Job("gpu-a")).ok());
  EXPECT_EQ(exec->stats().skipped_backoff, 1);
  exec->Forget("gpu-a");
  ASSERT_TRUE(exec->Offer(Job("gpu-a")).ok());
  ASSERT_TRUE(exec->WaitUntilIdle(kWait));
  EXPECT_EQ(dir.Read("log"), "gpu-a\ngpu-a\n");
  exec->Forget("never-seen");  // Harmless.
}

TEST(DriverInstallExecTest, StopKillsARunningCommandAndDropsWaitingJobs) {
  ScriptDir dir;
  FakeClock clock;
  Fifo started(dir.Path("started"));
  DriverInstallExecOptions options = Fast(
      dir.Script("long.sh", "echo \"$WSCHED_NODE\" > " + dir.Path("started") + "\nsleep 30"),
      clock);
  options.timeout = absl::Minutes(5);
  options.workers = 1;
  Events events;
  events.Hook(options);
  auto exec = Start(std::move(options));
  ASSERT_TRUE(exec->Offer(Job("gpu-a")).ok());
  ASSERT_EQ(started.ReadLine(), "gpu-a");  // The command runs.
  ASSERT_TRUE(exec->Offer(Job("gpu-b")).ok());  // Waits for the one worker.
  const absl::Time stop = absl::Now();
  exec->Stop();
  EXPECT_LT(absl::Now() - stop, absl::Seconds(10));
  std::vector<DriverInstallOutcome> outcomes = events.Outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].job.node, "gpu-a");
  EXPECT_FALSE(outcomes[0].succeeded);
  EXPECT_TRUE(outcomes[0].stopped);
  EXPECT_FALSE(outcomes[0].timed_out);
  EXPECT_THAT(outcomes[0].detail, StartsWith("stopped"));
  EXPECT_LT(outcomes[0].took, absl::Seconds(10));
  EXPECT_THAT(events.Log(), ElementsAre("start gpu-a 6.1.0-18-amd64", "end gpu-a 6.1.0-18-amd64"));
  DriverInstallExecStats stats = exec->stats();
  EXPECT_EQ(stats.stopped, 1);
  EXPECT_EQ(stats.failed, 0);
  EXPECT_EQ(stats.started, 1);
  EXPECT_TRUE(absl::IsFailedPrecondition(exec->Offer(Job("gpu-c"))));
  EXPECT_TRUE(exec->WaitUntilIdle(absl::ZeroDuration()));
  exec->Stop();  // Idempotent.
}

TEST(DriverInstallExecTest, RefusesBadOptionsAndOffers) {
  FakeClock clock;
  EXPECT_FALSE(DriverInstallExec::Create({.clock = clock.AsClock()}).ok());
  EXPECT_FALSE(DriverInstallExec::Create({.command = {"/bin/true"}}).ok());  // No clock.
  EXPECT_FALSE(
      DriverInstallExec::Create({.command = {"/bin/true"}, .workers = 0, .clock = clock.AsClock()})
          .ok());
  EXPECT_FALSE(DriverInstallExec::Create({.command = {"/bin/true"},
                                          .timeout = absl::ZeroDuration(),
                                          .clock = clock.AsClock()})
                   .ok());
  EXPECT_FALSE(DriverInstallExec::Create({.command = {"/bin/true"},
                                          .retry_initial = absl::Minutes(2),
                                          .retry_max = absl::Minutes(1),
                                          .clock = clock.AsClock()})
                   .ok());
  EXPECT_FALSE(DriverInstallExec::Create(
                   {.command = {"/bin/true"}, .extra_env = {{"A=B", "c"}}, .clock = clock.AsClock()})
                   .ok());
  auto exec = Start({.command = {"/bin/true"}, .clock = clock.AsClock()});
  EXPECT_TRUE(absl::IsInvalidArgument(exec->Offer(Job(""))));
  DriverInstallJob nul = Job("gpu-7");
  nul.kernel = std::string("6.1\0x", 5);
  EXPECT_TRUE(absl::IsInvalidArgument(exec->Offer(nul)));
  EXPECT_EQ(exec->stats().offered, 0);
}

TEST(DriverInstallExecTest, AThrowingCallbackIsSurvived) {
  FakeClock clock;
  DriverInstallExecOptions options = Fast("/bin/true", clock);
  options.on_start = [](const DriverInstallJob&) { throw std::runtime_error("store down"); };
  options.on_end = [](const DriverInstallOutcome&) { throw std::runtime_error("store down"); };
  auto exec = Start(std::move(options));
  ASSERT_TRUE(exec->Offer(Job("gpu-7")).ok());
  ASSERT_TRUE(exec->WaitUntilIdle(kWait));
  ASSERT_TRUE(exec->Offer(Job("gpu-8")).ok());
  ASSERT_TRUE(exec->WaitUntilIdle(kWait));
  EXPECT_EQ(exec->stats().succeeded, 2);
}

}  // namespace
}  // namespace wsched::scaling
